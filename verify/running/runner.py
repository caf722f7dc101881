"""Run claims in worker subprocesses, with a timeout per claim, surviving hangs and crashes.

One worker process runs the claims of one snippet file in order. The parent watches the
worker's results file: when a claim runs past its timeout the worker's process group is killed
and the claim is recorded as ``timeout``; when the worker dies (a segfault, ``os._exit``) the
claim it was running is recorded as ``crash``. Either way a fresh worker carries on with the
claims that are left, so one bad snippet never takes the others down.

Ordinary claims run in parallel (one worker per core); performance claims run afterwards, one
at a time, so that they do not share the machine with anything of ours. On the CPU both kinds of
worker are forked from a process that imported torch once (:mod:`verify.running.zygote`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from verify.core.records import ExceptionInfo, Outcome, WorkerResult
from verify.core.registry import ClaimSpec
from verify.running import quiet
from verify.running.worker import OUTPUT_FILE
from verify.running.zygote import Zygote
from verify.settings import Settings

DEFAULT_TIMEOUT = 120.0
IMPORT_TIMEOUT = 180.0
POLL_S = 0.05

@dataclass(frozen=True)
class WorkerEnv:
    """How a worker process starts: the checkout, the caches, the device and the thread count.

    A stress variant (``verify.running.stress``) also sets variables that pick a kernel path
    (``ATEN_CPU_CAPABILITY``, ``ONEDNN_MAX_CPU_ISA``, ...) and another draw of every seed.
    """

    settings: Settings
    device: str
    threads: int | None = None
    variables: tuple[tuple[str, str], ...] = ()
    seed_shift: int = 0

    @property
    def root(self) -> Path:
        return self.settings.root

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_dir

    @property
    def memory(self) -> int:
        """The worker's data-segment limit: none on a GPU, where the CUDA driver maps memory of its own."""
        return 0 if self.device == "cuda" else self.settings.worker_memory

    def environ(self) -> dict[str, str]:
        cache = self.settings.cache_dir
        self.settings.tmp_dir.mkdir(parents=True, exist_ok=True)
        base = self.settings.environ.get("PYTHONPATH", "")
        extra = dict(
            PYTHONPATH=os.pathsep.join(filter(None, [str(self.root), base])),
            PYTHONUNBUFFERED="1",
            # Compiler caches shared by every worker and every run: Inductor also writes
            # precompiled headers under TMPDIR, so both point into the project's cache.
            TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"),
            TORCH_EXTENSIONS_DIR=str(cache / "torch_extensions"),
            TRITON_CACHE_DIR=str(cache / "triton"),
            TMPDIR=str(self.settings.tmp_dir),
        )
        if self.device:
            extra["VERIFY_DEVICE"] = self.device
        if self.threads:
            extra["OMP_NUM_THREADS"] = str(self.threads)
        extra.update(self.variables)
        return self.settings.child_environ(**extra)


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _kill(proc: Any) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(path: Path, limit: int = 3000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


SCRATCH_PREFIX = "run-"


def sweep_scratch(settings: Settings) -> int:
    """Remove the scratch folders a run killed before it could clean up left in the cache.

    Called with the cache's run lock held (:func:`verify.running.guard.exclusive`): no other run of
    this cache can own one then, and a worker outlives its run by at most a moment.
    """
    count = 0
    for folder in settings.tmp_dir.glob(f"{SCRATCH_PREFIX}*"):
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            count += 1
    return count


def _start(cmd: list[str], workdir: Path, wenv: WorkerEnv, log_path: Path, zyg: Zygote | None) -> Any:
    """The worker's process: forked by the warm ``zyg`` where there is one, else a fresh interpreter."""
    if zyg is not None and zyg.alive:
        try:
            return zyg.start(cmd[3:], workdir, wenv.environ(), log_path)
        except (OSError, RuntimeError):
            pass  # a fresh process, as without it
    with log_path.open("wb") as log:
        # Its own session (so its whole process group can be killed) and its own working
        # directory: a claim that writes a relative path writes into its scratch folder.
        return subprocess.Popen(cmd, cwd=workdir, env=wenv.environ(), stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def run_file(
    snippet: str,
    specs: list[ClaimSpec],
    wenv: WorkerEnv,
    default_timeout: float = DEFAULT_TIMEOUT,
    deadline: float | None = None,
    zyg: Zygote | None = None,
) -> dict[str, WorkerResult]:
    """Run the given claims of one snippet file; a record for each of them (forked by ``zyg``, a warm
    :class:`~verify.running.zygote.Zygote`, where given).

    ``deadline`` (a ``time.monotonic()`` value): at that moment the worker is stopped, and the
    claim it was running and the ones after it get no record at all: they did not fail, they
    were not run.
    """
    timeouts = {s.id: float(s.timeout or default_timeout) for s in specs}
    pending = [s.id for s in specs]
    results: dict[str, WorkerResult] = {}
    wenv.settings.tmp_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=wenv.settings.tmp_dir, prefix=SCRATCH_PREFIX) as scratch:
        attempt = 0
        while pending:
            attempt += 1
            results_path = Path(scratch) / f"results-{attempt}.jsonl"
            log_path = Path(scratch) / f"worker-{attempt}.log"
            workdir = Path(scratch) / f"work-{attempt}"
            cmd = [sys.executable, "-m", "verify.running.worker", "--snippet", str(wenv.root / snippet),
                   "--claims", ",".join(pending), "--device", wenv.device,
                   "--results", str(results_path), "--workdir", str(workdir),
                   "--memory", str(wenv.memory), "--parent", str(os.getpid())]
            if wenv.seed_shift:
                cmd += ["--seed-shift", str(wenv.seed_shift)]
            workdir.mkdir(parents=True, exist_ok=True)
            proc = _start(cmd, workdir, wenv, log_path, zyg)
            try:
                progress = _watch(proc, results_path, timeouts, results, deadline)
            finally:
                _kill(proc)  # children a claim left running go with the worker's process group
            if progress.deadline:
                break
            current = progress.current
            if progress.import_error:
                err = progress.import_error
                exc = ExceptionInfo(err.type, f"importing {snippet} failed: {err.message}", err.traceback)
                for cid in pending:
                    results[cid] = WorkerResult(cid, output=_tail(log_path), exception=exc)
                break
            if progress.timed_out and current is not None:
                results[current] = WorkerResult(
                    current, output=_tail(workdir / current / OUTPUT_FILE) + _tail(log_path),
                    duration_s=timeouts[current], outcome=Outcome.TIMEOUT,
                    message=f"no result after {timeouts[current]:.0f} s; the worker was killed")
            elif current is not None:
                results[current] = WorkerResult(
                    current, output=_tail(workdir / current / OUTPUT_FILE) + _tail(log_path), outcome=Outcome.CRASH,
                    message=f"the worker process {_signal_name(proc.returncode)} while running this claim")
            elif progress.stuck_import:
                for cid in pending:
                    results[cid] = WorkerResult(cid, output=_tail(log_path), outcome=Outcome.TIMEOUT,
                                                message=f"importing {snippet} took over {IMPORT_TIMEOUT:.0f} s")
            still = [cid for cid in pending if cid not in results]
            if still and still == pending and zyg is not None and not progress.import_error:
                # A worker forked by the zygote ended before starting any claim (seen once in CI: status 0, nothing
                # in its log): start it once more as a fresh interpreter, as without the zygote, before judging it.
                zyg = None
                continue
            if still and still == pending:
                # The worker died before starting any claim: do not loop forever.
                for cid in still:
                    results[cid] = WorkerResult(cid, output=_tail(log_path), outcome=Outcome.CRASH,
                                                message=f"the worker process {_signal_name(proc.returncode)} "
                                                        f"before running this claim")
                still = []
            pending = still
    return results


@dataclass
class _Watched:
    """How a worker's run ended, as :func:`_watch` saw it."""

    current: str | None = None  # the claim it had begun and not ended
    timed_out: bool = False  # that claim ran past its timeout
    import_error: ExceptionInfo | None = None  # importing the snippet failed
    stuck_import: bool = False  # the import took over IMPORT_TIMEOUT
    deadline: bool = False  # the run's deadline came


def _watch(proc: Any, results_path: Path, timeouts: dict[str, float],
           results: dict[str, WorkerResult], deadline: float | None = None) -> _Watched:
    state = _Watched()
    began = time.monotonic()
    offset = 0
    buffer = ""
    started_any = False
    while True:
        finished = proc.poll() is not None
        try:
            with results_path.open("r", encoding="utf-8") as fh:
                fh.seek(offset)
                chunk = fh.read()
                offset = fh.tell()
        except FileNotFoundError:
            chunk = ""
        buffer += chunk
        *lines, buffer = buffer.split("\n")
        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)
            if event["event"] == "begin":
                state.current, began, started_any = event["id"], time.monotonic(), True
            elif event["event"] == "end":
                result = WorkerResult.from_json(event)
                results[result.claim_id] = result
                state.current = None
            elif event["event"] == "import-error":
                state.import_error = ExceptionInfo.from_json(event)
        if finished:
            return state
        now = time.monotonic()
        current = state.current
        if deadline is not None and now >= deadline:
            _kill(proc)
            state.deadline = True
            return state
        if current is not None and now - began > timeouts[current]:
            _kill(proc)
            state.timed_out = True
            return state
        if not started_any and now - began > IMPORT_TIMEOUT:
            _kill(proc)
            state.stuck_import = True
            return state
        time.sleep(POLL_S)


def run_many(
    groups: dict[str, list[ClaimSpec]],
    make_env: Callable[[int | None], WorkerEnv],
    *,
    jobs: int,
    default_timeout: float = DEFAULT_TIMEOUT,
    on_done: Callable[[str, dict[str, WorkerResult], float], None] | None = None,
    deadline: float | None = None,
    compiling: frozenset[str] = frozenset(),
) -> dict[str, WorkerResult]:
    """Run several snippet files: ordinary claims in parallel, then performance claims alone.

    ``on_done(snippet, results, seconds)`` follows each batch of a file, with its wall time.
    After ``deadline`` (``time.monotonic()``) no file starts, and the ones running stop: what
    did not finish has no result. The ordinary workers of the files in ``compiling``
    (``Registry.compiles``) start with Dynamo and Inductor loaded, unless a claim of the file needs Triton.
    """
    ordinary = {f: [s for s in specs if s.kind != "perf"] for f, specs in groups.items()}
    perf = {f: [s for s in specs if s.kind == "perf"] for f, specs in groups.items()}
    results: dict[str, WorkerResult] = {}
    lock = threading.Lock()
    cores = os.cpu_count() or 1

    def one(item: tuple[str, list[ClaimSpec]], threads: int | None, measuring: bool = False,
            zyg: Zygote | None = None) -> None:
        snippet, specs = item
        if deadline is not None and time.monotonic() >= deadline:
            return
        with quiet.hold(measuring):
            began = time.monotonic()
            out = run_file(snippet, specs, make_env(threads), default_timeout, deadline, zyg)
            seconds = time.monotonic() - began
        with lock:
            results.update(out)
        if on_done:
            on_done(snippet, out, seconds)

    todo: list[tuple[str, list[ClaimSpec]]] = [(f, s) for f, s in ordinary.items() if s]
    timed: list[tuple[str, list[ClaimSpec]]] = [(f, s) for f, s in perf.items() if s]
    threads = max(1, cores // max(1, jobs))
    # Not where a claim needs Triton: Inductor imported before the pinned Triton is on the path stubs it out
    warm = {f for f, specs in todo if f in compiling and not any("triton" in s.needs for s in specs)}
    # Performance claims fork from a zygote of their own, started now so that its import of torch is
    # done before the first timing: its environment sets no thread count, as a fresh worker's would not.
    with started(make_env(None), len(timed) > 1) as timed_zyg:
        with started(make_env(threads), len(todo) > 1) as zyg, \
                started(make_env(threads), len(warm) > 1, compiler=True) as compiler_zyg, \
                ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(lambda item: one(item, threads, zyg=compiler_zyg if item[0] in warm else zyg), todo))
        for item in timed:
            one(item, None, measuring=True, zyg=timed_zyg)  # one at a time, alone
    return results


@contextlib.contextmanager
def started(wenv: WorkerEnv, wanted: bool, compiler: bool = False) -> Iterator[Zygote | None]:
    """:func:`zygote` where ``wanted`` (else None), closed when the block ends."""
    zyg = zygote(wenv, compiler) if wanted else None
    try:
        yield zyg
    finally:
        if zyg is not None:
            zyg.close()


def zygote(wenv: WorkerEnv, compiler: bool = False) -> Zygote | None:
    """A warm starter for claims' workers on the CPU (``compiler``: with Dynamo and Inductor loaded); None where off
    or not possible."""
    if wenv.device != "cpu" or wenv.settings.environ.get("VERIFY_WARM_WORKERS", "1") == "0" or not hasattr(os, "fork"):
        return None
    try:
        wenv.settings.tmp_dir.mkdir(parents=True, exist_ok=True)
        return Zygote(wenv.environ(), wenv.settings.tmp_dir / "zygote.log", compiler)
    except OSError:
        return None
