"""The GPU toolchain that compiles and simulates kernels without a GPU: pinned wheels in one folder.

Triton (compiles for a named GPU architecture with no driver, bundles ptxas, cuobjdump and
nvdisasm, and has an interpreter), NVIDIA's nvcc wheels and numba (its CUDA simulator) are
installed by the project's setup from PyPI at the versions pinned here, into a folder of their
own (``.venv/gputools``), not into the environment the CPU claims run in: Inductor's CPU backend
and every CPU record stay as they were without Triton on the path. A claim that uses a tool
declares the need (``triton``, ``nvcc``, ``numba``: :mod:`verify.core.needs`), and its helper
calls :func:`activate` in the claim's worker.

The pins are part of every such claim's key: the helpers import this module, so its text is in
their measuring code, and a machine whose folder holds another version shows the claim as
needing the pinned tool rather than running it.

``python -m verify.toolchain install [--optional]`` installs the pins (``make setup`` runs it with
``--optional``: a machine where pip cannot fetch them still builds the site);
``python -m verify.toolchain show`` prints what the folder holds.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

#: the wheels, each pinned; nvcc 13.0 takes its front end (crt headers, cicc) and the runtime's headers from four wheels
PINS: dict[str, str] = {
    "triton": "3.9.0",
    "numba": "0.68.1",
    "llvmlite": "0.50.0",
    "nvidia-cuda-nvcc": "13.0.88",
    "nvidia-cuda-crt": "13.0.88",
    "nvidia-nvvm": "13.0.88",
    "nvidia-cuda-runtime": "13.0.96",
    "nvidia-cuda-cccl": "13.0.85",
}

#: a need -> the wheels it takes
TOOLS: dict[str, tuple[str, ...]] = {
    "triton": ("triton",),
    # SASS and resource usage are read by the cuobjdump that Triton's wheel bundles
    "nvcc": ("nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "nvidia-cuda-runtime", "nvidia-cuda-cccl", "triton"),
    "numba": ("numba", "llvmlite"),
}

ROOT = Path(__file__).resolve().parent.parent


def folder() -> Path:
    """Where the toolchain lives: ``$VERIFY_GPU_TOOLS``, else ``.venv/gputools`` of the checkout."""
    return Path(os.environ.get("VERIFY_GPU_TOOLS") or ROOT / ".venv" / "gputools")


def installed(where: Path | None = None) -> dict[str, str]:
    """Wheel name -> version of what the folder holds, read from its metadata (nothing is imported)."""
    where = where or folder()
    if not where.is_dir():
        return {}
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions(path=[str(where)]):
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name:
            found[name] = dist.version
    return found


def missing(need: str, have: dict[str, str] | None = None) -> str | None:
    """Why the pinned tool of ``need`` is not usable here, or ``None`` when the folder holds it."""
    have = installed() if have is None else have
    wrong = [f"{w}=={PINS[w]}" + (f" (found {have[w]})" if w in have else "") for w in TOOLS[need] if have.get(w) != PINS[w]]
    return f"needs {need}: {', '.join(wrong)} in {folder()} (make setup installs it)" if wrong else None


def versions() -> dict[str, str]:
    """The versions a record names: each tool's wheel as pinned."""
    return {"triton": PINS["triton"], "nvcc": PINS["nvidia-cuda-nvcc"], "numba": PINS["numba"]}


def activate() -> Path:
    """Put the toolchain on this process's path (a claim's worker, a test): Python modules and binaries."""
    where = folder()
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))
    cache = Path(os.environ.get("VERIFY_CACHE_DIR") or ROOT / ".cache")
    os.environ.setdefault("TRITON_CACHE_DIR", str(cache / "triton"))
    # Triton 3.9 warns unless this is set; 1 is its default (fused multiply-add allowed), said out loud.
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    return where


def binary(name: str) -> Path:
    """A binary of the toolchain: ``nvcc`` from the nvcc wheels; ``ptxas``, ``cuobjdump``, ``nvdisasm`` from Triton's."""
    where = folder()
    path = where / "nvidia" / "cu13" / "bin" / name if name == "nvcc" else where / "triton" / "backends" / "nvidia" / "bin" / name
    if not path.is_file():
        raise FileNotFoundError(f"{name}: not in the GPU toolchain ({path}); run `make setup`")
    return path


def install(where: Path | None = None) -> int:
    """Install every pin into the folder (nothing to do when it already holds them). Returns pip's status."""
    where = where or folder()
    have = installed(where)
    if all(have.get(w) == v for w, v in PINS.items()):
        return 0
    if where.exists():
        shutil.rmtree(where)
    start = time.monotonic()
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(where),
           *[f"{w}=={v}" for w, v in PINS.items()]]
    code = subprocess.call(cmd)
    if code == 0:
        size = sum(p.stat().st_size for p in where.rglob("*") if p.is_file())
        print(f"GPU toolchain: installed into {where} in {time.monotonic() - start:.0f} s, {size / 2**30:.2f} GiB")
    return code


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        code = install()
        if code and "--optional" in argv:
            print(f"GPU toolchain: pip could not install it into {folder()} (status {code}); the claims that need "
                  "triton, nvcc or numba will show 需要 <tool>. `python -m verify.toolchain install` tries again.",
                  file=sys.stderr)
            return 0
        return code
    if argv[:1] == ["show"]:
        have = installed()
        for wheel, pin in PINS.items():
            print(f"{wheel:22} pinned {pin:10} {'ok' if have.get(wheel) == pin else 'found ' + have.get(wheel, 'nothing')}")
        return 0
    print("usage: python -m verify.toolchain install|show", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
