"""What machine and torch the claims run on: provenance for evidence and the cache key.

Importing torch costs seconds, so the facts are asked of a child process once and remembered in
the project cache under a cheap fingerprint (torch's installed version and location, the GPU
device nodes, the CPU model). A warm site rebuild therefore never imports torch.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from dataclasses import replace
from pathlib import Path

from verify import toolchain
from verify.core.records import Machine
from verify.settings import Settings
from verify.storage.fs import json_memo

_PROBE = r"""
import json, platform, sys, torch
cuda = torch.cuda.is_available() and sys.argv[1] != "cpu"
info = {
    "torch": torch.__version__.split("+")[0],
    "torch_build": ("cu" + torch.version.cuda.replace(".", "")) if torch.version.cuda else
                   ("rocm" if getattr(torch.version, "hip", None) else "cpu"),
    "device": "cuda" if cuda else "cpu",
    "gpu_name": torch.cuda.get_device_name(0) if cuda else None,
    "gpu_capability": ".".join(map(str, torch.cuda.get_device_capability(0))) if cuda else None,
    "cuda_runtime": torch.version.cuda,
    "threads": torch.get_num_threads(),
    "cpu_isa": torch.backends.cpu.get_cpu_capability(),
    "mkl": torch.backends.mkl.is_available(),
}
print(json.dumps(info))
"""


def cpu_signature() -> str:
    """``f<family>m<model>`` from /proc/cpuinfo (x86): tells CPU generations apart that share a name."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key in ("cpu family", "model") and key not in fields:
                fields[key] = value.strip()
            if not line.strip():
                break
    except OSError:
        return ""
    if "cpu family" in fields and "model" in fields:
        return f"f{fields['cpu family']}m{fields['model']}"
    return ""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _fingerprint(settings: Settings) -> str:
    try:
        dist = importlib.metadata.distribution("torch")
        torch_id = f"{dist.version}@{dist.locate_file('')}"
    except importlib.metadata.PackageNotFoundError:
        torch_id = "absent"
    if not has_torch():  # installed but not importable here is a reader's machine too
        torch_id = "absent"
    # sys.prefix and the resolved interpreter: console scripts start as python, python3 or python3.11.
    parts = [_PROBE, sys.prefix, os.path.realpath(sys.executable), torch_id, cpu_model(), cpu_signature(), ",".join(sorted(glob.glob("/dev/nvidia[0-9]*"))),
             settings.cuda_visible, settings.device,
             json.dumps(sorted(toolchain.installed().items()))]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


_MEMO: dict[tuple[str, ...], Machine] = {}


def probe(settings: Settings) -> Machine:
    """Facts about torch and the device, from the cache when the fingerprint still matches.

    Remembered in the process as well: asking the package metadata for torch's location is itself
    slow enough to matter when every benchmark fence of a page asks.
    """
    key = (str(settings.cache_dir), sys.executable, settings.cuda_visible, settings.device)
    if key not in _MEMO:
        _MEMO[key] = _probe(settings)
    return _MEMO[key]


def _probe(settings: Settings) -> Machine:
    """``<cache>/probe.json`` while its fingerprint is this machine's; else torch is asked again."""
    fp = _fingerprint(settings)
    return Machine.from_json(json_memo(settings.cache_dir).get(
        "probe", lambda: _ask(settings, fp).to_json(),
        valid=lambda cached: isinstance(cached, dict) and cached.get("fingerprint") == fp))


def has_torch() -> bool:
    """Whether torch can be imported here; a reader's install (``make read``) has none."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # blocked (``sys.modules["torch"] = None``) or half-installed
        return False


def _ask(settings: Settings, fp: str) -> Machine:
    # without torch, the machine's own facts only: its device key is READER and it runs no claim
    return _machine(_ask_torch(settings) if has_torch() else Machine(), fp)


def _ask_torch(settings: Settings) -> Machine:
    out = subprocess.run([sys.executable, "-c", _PROBE, settings.device or "auto"], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"probing torch failed (is torch installed in {sys.executable}?):\n{out.stderr[-2000:]}")
    return Machine.from_json(json.loads(out.stdout.strip().splitlines()[-1]))  # what the child printed


def _machine(torch_facts: Machine, fp: str) -> Machine:
    """``torch_facts`` with what the probe knows without torch: the CPU, Python, the system, the tools."""
    cpu = cpu_model()
    machine = replace(
        torch_facts,
        fingerprint=fp,
        cpu_model=cpu,
        cpu_signature=cpu_signature(),
        cpu_count=os.cpu_count() or 1,
        python=platform.python_version(),
        os=f"{platform.system()} {platform.release()}",
        compilers={"g++": bool(shutil.which("g++"))},
        toolchain=toolchain.installed(),
        device_name=torch_facts.gpu_name or cpu,
    )
    # The key under which this machine's evidence is stored and committed.
    return replace(machine, device_key=device_key(machine))


#: the device key of a machine without torch (``make read``): it runs no claim and records nothing
READER = "reader"

_NOISE = {"r", "tm", "cpu", "processor", "with", "radeon", "graphics"}


def _slug(text: str) -> str:
    text = re.sub(r"@.*$", "", text.lower())  # "... CPU @ 2.70GHz": the clock is not the processor
    words = re.split(r"[^a-z0-9]+", text)
    return "-".join(w for w in words if w and w not in _NOISE and not re.fullmatch(r"\d+-core", w))


def device_key(machine: Machine) -> str:
    """A readable, file-name-safe name of the device that evidence and benchmarks are kept under.

    ``cuda-nvidia-h200`` for a GPU; for a CPU its model, generation and vector ISA, e.g.
    ``cpu-amd-epyc-f26m2-avx512``: results from another processor are never shown as this one's;
    :data:`READER` where torch is not installed.
    """
    if machine.device == "cuda":
        return "cuda-" + (_slug(machine.gpu_name or "gpu") or "gpu")
    if not machine.torch:  # a reader's install: it runs nothing and keeps no evidence of its own
        return READER
    parts = [_slug(machine.cpu_model or platform.machine()) or platform.machine(), machine.cpu_signature,
             (machine.cpu_isa or "").lower()]
    return "cpu-" + "-".join(p for p in parts if p and p != "default")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
