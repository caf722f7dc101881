"""What a claim may need beyond a CPU with torch, and whether this machine has it.

A need is declared where a mechanism depends on a device, a tool, a library or an ISA: a machine
without it shows the claim as not applicable here, never as a failure. The probe
(:mod:`verify.running.probe`) reports what the machine has; :func:`unmet` compares.
"""

from __future__ import annotations

import functools
import importlib.util
import platform

from verify import toolchain
from verify.core.records import Machine

#: need -> what it means (shown by ``verify list`` and in errors)
NEEDS: dict[str, str] = {
    "cuda": "a CUDA GPU that torch can use",
    "g++": "a C++ compiler on PATH (torch.utils.cpp_extension, Inductor's CPU backend)",
    "nvcc": "the project's pinned nvcc wheels (verify.toolchain): CUDA C++ compiled for a GPU architecture",
    "triton": "the project's pinned Triton (verify.toolchain): kernels compiled for a GPU architecture, or interpreted",
    "numba": "the project's pinned numba (verify.toolchain): CUDA kernels run in its simulator",
    "multicore": "at least two CPU cores",
    "glibc": "glibc's malloc (its heap trimming and mmap threshold)",
    "mkl": "a torch built with Intel MKL, whose VML the CPU kernels of sin/exp/tanh call",
    "x86-64": "an x86-64 CPU (its vector registers, its instruction flags, code generated for it)",
    "onnx": "the onnx, onnxscript and onnxruntime packages the `run` extras pin (export to ONNX, ONNX Runtime's CPU session)",
}

#: the Python packages the need ``onnx`` stands for (import names)
ONNX_PACKAGES = ("onnx", "onnxscript", "onnxruntime")

#: why no claim runs on a machine without torch (a reader's install, ``make read``): it is not a need
#: a claim declares, and such a machine keeps no record of it (its pages show committed evidence)
NO_TORCH = "torch is not installed here"


@functools.cache
def _libc() -> str:
    return platform.libc_ver()[0]


@functools.cache
def _has_package(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _version(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split("+")[0].split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


def unmet(needs: tuple[str, ...], min_torch: str | None, machine: Machine) -> str | None:
    """Why a claim with these needs cannot run on the probed machine, or ``None`` when it can."""
    if not machine.torch and "cuda" not in needs:  # a CUDA claim still says it waits for a GPU
        return NO_TORCH
    for need in needs:
        if need == "cuda" and machine.device != "cuda":
            return "needs CUDA; no GPU on this machine"
        if need in toolchain.TOOLS:
            reason = toolchain.missing(need, machine.toolchain)
            if reason:
                return reason
            continue
        if need == "g++" and not machine.compilers.get(need):
            return f"needs {need}, which is not on PATH"
        if need == "multicore" and machine.cpu_count < 2:
            return "needs at least two CPU cores"
        if need == "glibc" and _libc() != "glibc":
            return f"needs glibc's malloc; this Python runs on {_libc() or 'another C library'}"
        if need == "mkl" and not machine.mkl:
            return "needs a torch built with MKL; this one has none (its sin/exp/tanh do not call MKL's VML)"
        if need == "x86-64" and platform.machine().lower() not in ("x86_64", "amd64"):
            return f"needs an x86-64 CPU; this one is {platform.machine() or 'unknown'}"
        if need == "onnx":
            missing = [p for p in ONNX_PACKAGES if not _has_package(p)]
            if missing:
                return f"needs {', '.join(missing)} (the `run` extras); not installed here"
    if min_torch and _version(machine.torch) < _version(min_torch):
        return f"needs torch >= {min_torch}; this is {machine.torch}"
    return None
