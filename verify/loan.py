"""Spend a GPU loan in one call: look at the machine, record the CUDA claims, run the GPU benchmarks.

::

    python3 -m verify.loan --out DIR [--budget 420]

Meant for a lent GPU machine with torch, pytest and pytest-benchmark and nothing else of the
project (no network, no installs). In order, each step under the deadline of the plan
(:mod:`verify.running.gpuplan`):

1. ``DIR/preflight.txt``: the GPU, driver, torch, Triton and the tools found. Without a GPU
   that torch can use it stops here (exit 2), having spent seconds.
2. The claims that need CUDA, recorded into ``evidence/<device>.json`` and copied to
   ``DIR/evidence/`` as each claim finishes; failures do not stop it.
3. The benchmark files of :data:`~verify.running.gpuplan.GPU_BENCH`, most telling first, into
   ``benchmarks/<device>.json``, copied to ``DIR/benchmarks/`` after each file.
4. ``DIR/summary.txt``: what ran, what failed, what the deadline cut, and the time each step took.

At most four files come back; a call stopped at its limit still returns what each step copied.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
import time
from pathlib import Path

from verify.running import gpuplan
from verify.settings import Settings
from verify.storage.fs import copy_into

TOOLS = ("nvidia-smi", "nvcc", "ptxas", "cuobjdump", "nvdisasm", "ninja", "g++", "cc")


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def preflight() -> tuple[str, bool]:
    """(a report of the machine, whether torch can use a CUDA GPU there)."""
    import torch  # noqa: PLC0415

    lines = [f"python {sys.version.split()[0]}", f"torch {torch.__version__} (CUDA {torch.version.cuda})",
             f"triton {_version('triton')}", f"pytest {_version('pytest')}, pytest-benchmark {_version('pytest-benchmark')}"]
    ok = torch.cuda.is_available()
    if ok:
        props = torch.cuda.get_device_properties(0)
        lines.append(f"gpu {props.name}, compute capability {props.major}.{props.minor}, "
                     f"{props.total_memory / 2**30:.0f} GiB, {props.multi_processor_count} SMs, "
                     f"{torch.cuda.device_count()} device(s)")
    else:
        lines.append("gpu: torch.cuda.is_available() is False")
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        lines.append(f"nvidia-smi: {(smi.stdout or smi.stderr).strip()}")
    lines += [f"tool {t}: {shutil.which(t) or 'not found'}" for t in TOOLS]
    return "\n".join(lines) + "\n", ok


def spend(settings: Settings, out: Path, budget: float = gpuplan.BUDGET_S, echo=print) -> int:
    start = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    report, ok = preflight()
    (out / "preflight.txt").write_text(report, encoding="utf-8")
    echo(report.rstrip())
    if not ok:
        echo("no CUDA GPU that torch can use: nothing recorded")
        return 2
    from verify.bench import run as bench_run  # noqa: PLC0415
    from verify.running import record  # noqa: PLC0415
    from verify.storage import scan  # noqa: PLC0415

    p = gpuplan.plan(scan.load_registry(settings))
    echo(gpuplan.describe(p, budget))
    path, verification = record.record(settings, only_cuda=True, deadline=start + budget * gpuplan.CLAIMS_SHARE,
                                       also=out / "evidence", echo=echo)
    claims_s = time.monotonic() - start
    claims_line = record.summary(path, verification, claims_s)
    echo(claims_line)
    bench_path, bench_rc, ran = bench_run.run(settings, force=True, files=list(gpuplan.GPU_BENCH),
                                              deadline=start + budget, echo=echo)
    copy_into(bench_path, out / "benchmarks")
    total_s = time.monotonic() - start
    failed = [f"{f.claim}: {f.message}" for f in verification.failures if f.claim != "-"]
    lines = [claims_line, f"benchmarks: ran {len(ran)} of {len(gpuplan.GPU_BENCH)} file(s) "
             f"({', '.join(Path(f).name for f in ran) or 'none'}), pytest exit {bench_rc}, "
             f"in {total_s - claims_s:.0f} s", f"total {total_s:.0f} s of a {budget:.0f} s budget",
             f"failing claims: {len(failed)}", *(f"  - {line[:300]}" for line in failed)]
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    echo("\n".join(lines))
    return 1 if failed or verification.left or bench_rc else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="where the files to bring back go")
    parser.add_argument("--budget", type=float, default=gpuplan.BUDGET_S, help="seconds the whole run may take")
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args(argv)
    settings = Settings.for_command(args.root)
    out = args.out.resolve()
    problem = out_problem(settings, out)
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    return spend(settings, out, args.budget)


def out_problem(settings: Settings, out: Path) -> str | None:
    """Why ``out`` cannot take the loan's files (a folder of their own, never inside ``evidence/``), or ``None``."""
    evidence = settings.evidence_dir.resolve()
    if out == evidence or evidence in out.parents:
        return ("is inside evidence/, where only device files belong; give a folder of its own "
                "(the default .cache/gpu-loan) and merge what comes back with `verify merge`")
    if out.suffix == ".json":
        return "names a file; --out takes the folder the loan's files go into"
    if out.exists() and not out.is_dir():
        return "exists and is not a folder"
    return None


if __name__ == "__main__":
    sys.exit(main())
