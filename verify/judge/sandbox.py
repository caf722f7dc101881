"""How the child runs: a fresh process in its own group, a timeout, resource limits, an output cap, and
``bwrap`` (no network, a read-only root, only the work folder writable, the problems' answers hidden) where it
is installed.

Without ``bwrap`` the limits are guard rails, not a sandbox: the report says 「只是护栏，不是沙箱」.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from verify import toolchain
from verify.judge import child

#: bytes of address space the child may map: torch maps about 1.5 GiB at import
MEMORY = 6 * 2**30
#: bytes any one file the child writes may reach (its result file, its stdout and stderr)
OUTPUT_CAP = 16 * 2**20
OPEN_FILES = 256
GUARD_RAILS = "只是护栏，不是沙箱：独立进程、超时、进程组整体结束、资源上限（内存、CPU 时间、打开文件数、输出大小）；本机没有 bwrap"
SANDBOX = "沙箱：bwrap（无网络、根目录只读、只有工作目录可写、看不到题目自带的解），加独立进程、超时、进程组整体结束、资源上限"


@dataclass(frozen=True)
class Run:
    """How the child ended: its exit status (negative: the signal), whether it ran out of time or output."""

    returncode: int
    timed_out: bool
    output_capped: bool
    stdout: str
    seconds: float


def isolation() -> str:
    return SANDBOX if shutil.which("bwrap") else GUARD_RAILS


def command(spec: Path | None, work: Path, candidate_dir: Path, inner: list[str] | None = None) -> list[str]:
    """The child's command line, inside ``bwrap`` where it is installed: ``inner`` (g++, a C++ problem's
    program), else the Python child on ``spec``."""
    if inner is None:
        inner = [sys.executable, "-I", str(Path(child.__file__).resolve()), str(spec)]
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return inner
    # /tmp is emptied for the child; what it must read that may live there (a checkout or an environment made
    # under /tmp) is bound again, read-only, after it: mounts made later cover earlier ones
    keep = [*_needed(), candidate_dir]
    again = [arg for path in dict.fromkeys(str(p) for p in keep) for arg in ("--ro-bind", path, path)]
    # then the answers are hidden (the problems' own solutions, known-wrong solutions and references, and the
    # git history that holds them), and the files this run judges, which may be some of them, shown again
    hide = [arg for path in hidden() for arg in (("--tmpfs", str(path)) if path.is_dir() else
                                                  ("--ro-bind", os.devnull, str(path)))]
    shown = [arg for path in dict.fromkeys(_judged(spec)) for arg in ("--ro-bind", path, path)]
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *again,
            *hide, *shown, "--bind", str(work), str(work),
            "--unshare-net", "--unshare-ipc", "--unshare-pid", "--die-with-parent", "--new-session",
            "--chdir", str(work), *inner]


def hidden() -> list[Path]:
    """What the child must not read: in each problem of the checkout, its solutions, its known-wrong solutions,
    its reference (and their compiled bytecode), and the checkout's git history. The child needs none of them:
    the parent computes the expected values, and a run that judges a problem's own files names them."""
    root = Path(child.__file__).resolve().parents[2]
    out = [root / ".git"] if (root / ".git").exists() else []
    for folder in sorted(p for p in (root / "snippets" / "judge").glob("*") if p.is_dir()):
        out += [folder / name for name in ("solutions", "mutants", "__pycache__") if (folder / name).is_dir()]
        out += sorted(folder.glob("reference.*"))
    return out


def _judged(spec: Path | None) -> list[str]:
    """The files a Python child's spec names to run (the parent wrote it: trusted)."""
    if spec is None or not spec.is_file():
        return []
    runs = json.loads(spec.read_text(encoding="utf-8")).get("runs", [])
    return [str(Path(run["candidate"]).resolve()) for run in runs]


def _needed() -> list[Path]:
    """What the child reads besides the candidate's folder: the checkout holding this package (the child's own
    module, the problem's files) and the Python environment it runs in."""
    return [Path(child.__file__).resolve().parents[2], Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
            Path(os.path.realpath(sys.executable)).parent, *([toolchain.folder().resolve()] if toolchain.folder().is_dir() else [])]


def _limits(cpu_seconds: int, memory: int | None = MEMORY) -> None:
    import resource  # noqa: PLC0415

    caps = [(resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_NOFILE, OPEN_FILES),
            (resource.RLIMIT_FSIZE, OUTPUT_CAP), (resource.RLIMIT_CORE, 0)]
    if memory is not None:
        caps.insert(0, (resource.RLIMIT_AS, memory))
    else:  # a sanitizer reserves terabytes of address space for its shadow: as much as the hard limits allow
        for what in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
            resource.setrlimit(what, (resource.getrlimit(what)[1],) * 2)
    for what, value in caps:
        _soft, hard = resource.getrlimit(what)
        resource.setrlimit(what, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))


def run(spec: Path | None, work: Path, candidate_dir: Path, timeout_s: float, inner: list[str] | None = None,
        memory: int | None = MEMORY, env: Mapping[str, str] | None = None) -> Run:
    """Run the child on ``spec`` (or ``inner``: see :func:`command`); past ``timeout_s`` seconds its whole process
    group is killed. ``memory=None`` lifts the address-space cap (a sanitized program bounds its own memory
    through its options in ``env``, which adds to the child's small environment)."""
    out_path = work / "stdout.txt"
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_NUM_THREADS": "1", "HOME": str(work),
               "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8", **(env or {})}
    start = time.perf_counter()
    with open(out_path, "wb") as sink:
        proc = subprocess.Popen(command(spec, work, candidate_dir, inner), cwd=work, env=environ,
                                stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=lambda: _limits(int(timeout_s) + 2, memory))
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever it started goes with it
            except ProcessLookupError:
                pass
            proc.wait()
    size = out_path.stat().st_size
    with open(out_path, "rb") as f:
        text = f.read(8000).decode("utf-8", "replace")
    capped = size >= OUTPUT_CAP or proc.returncode == -signal.SIGXFSZ
    return Run(proc.returncode, timed_out, capped, text, time.perf_counter() - start)
