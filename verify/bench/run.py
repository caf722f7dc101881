"""Running the benchmark suite: the files whose results are missing or stale, one pytest process each.

How results get made (the site never runs them unasked):

- ``verify bench run`` runs the benchmark files whose results are missing or stale on this
  device (``--force``: all of them) and merges them into the device's file. CI runs it before
  ``mkdocs build``; a GPU machine runs it and the file is committed.
- A ``bench`` fence renders what is stored. With ``VERIFY_BENCH=auto`` the first fence of a
  build runs what is missing or stale first; ``VERIFY_BENCH=force`` re-runs everything once.
  Unset (or ``off``), nothing runs and missing or stale results are marked as such, with the
  date and machine of what is shown.
"""

from __future__ import annotations

import fnmatch
import logging
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from verify.bench.store import freshness, load, merge
from verify.running import probe, runner
from verify.settings import Settings
from verify.storage.fs import atomic_write_json, locked

log = logging.getLogger("mkdocs.verify")


def device_key(settings: Settings) -> str:
    return probe.probe(settings).device_key


def run(settings: Settings, *, force: bool = False, files: list[str] | None = None, threads: int | None = None,
        out: Path | None = None, echo: Any = print, deadline: float | None = None) -> tuple[Path, int, list[str]]:
    """Run missing or stale benchmark files (all with ``force``) and merge them into storage.

    ``files`` picks files by name or glob, run in the order given. After ``deadline``
    (``time.monotonic()``) no file starts, and one still running is stopped with nothing stored.

    Returns:
        The result file, pytest's exit status (0 when nothing needed running) and the files run.
    """
    # results with a fixed thread count are kept apart: benchmarks/<device>-<N>thread.json
    path = out or settings.bench_dir / f"{device_key(settings)}{f'-{threads}thread' if threads else ''}.json"
    old = load(path)
    state = freshness(settings, old)
    todo = [f for f in state if force or state[f] != "current"]
    if files:
        todo = [f for p in files for f in todo if fnmatch.fnmatchcase(f, p) or Path(f).name == p]
        todo = list(dict.fromkeys(todo))
    if not todo:
        return path, 0, []
    # The suite picks CUDA when present, unless VERIFY_DEVICE (in the settings' environment) says otherwise.
    env = runner.WorkerEnv(settings=settings, device="", threads=threads).environ()
    # One pytest process per file: a file's results are marked current only when all of it
    # passed, and every file measures the limits in its own run, next to its benchmarks.
    worst = 0
    ran: list[str] = []
    for f in todo:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            echo(f"not run (the deadline came): {f}")
            worst = worst or 1
            continue
        ran.append(f)
        with tempfile.TemporaryDirectory(prefix="bench-", dir=settings.tmp_dir) as tmp:
            raw = Path(tmp) / "out.json"
            cmd = [sys.executable, "-m", "pytest", "-m", "bench", "-p", "no:cacheprovider", "-q",
                   "--benchmark-json", str(raw), "--benchmark-columns=median,iqr,rounds", f]
            echo(f"running {f}")
            try:
                rc = subprocess.run(cmd, cwd=settings.root, env=env, timeout=left).returncode
            except subprocess.TimeoutExpired:
                echo(f"stopped at the deadline, nothing stored: {f}")
                worst = worst or 1
                continue
            new = load(raw)
        if new is None or not new.benchmarks:
            worst = worst or rc or 1
            continue
        if rc:
            new = replace(new, sources={f: "failed"})  # keeps what did run, and stays stale until it passes
            worst = worst or rc
        with locked(path):  # read again under the lock: another run may have stored its files meanwhile
            old = merge(load(path), new)
            atomic_write_json(path, old.to_json())
    return path, worst, ran


def ensure(settings: Settings) -> None:
    """What a build does before rendering, by ``VERIFY_BENCH``: nothing, run stale, or force."""
    if settings.bench_mode in ("auto", "force"):
        _, rc, ran = run(settings, force=settings.bench_mode == "force", echo=log.info)
        if rc:
            log.warning("verify: benchmarks failed (pytest exit %d) in %s", rc, ", ".join(ran))
