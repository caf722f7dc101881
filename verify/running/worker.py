"""Run the claims of one snippet file inside this (child) process.

Started by ``verify.runner`` as ``python -m verify.running.worker``. It appends one JSON line when a
claim begins and one when it ends to the results file, so that the parent can tell which claim
was running when the process hung or died. Output is captured at the file-descriptor level, so
what C++ code prints is kept too. The worker reports what it saw; the parent judges it.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

from verify.claim import LOADED, Context
from verify.core.records import MAX_OBSERVED, ExceptionInfo, JsonObject, WorkerResult
from verify.running import seeds

MAX_OUTPUT = 8000
# MAX_OBSERVED (verify.core.records): observe a summary (a count, a few items), not a whole tensor
OUTPUT_FILE = ".output"
_ALLOC_FAILED = ("can't allocate memory", "Cannot allocate memory", "out of memory")


def limit_memory(limit: int) -> None:
    """Cap this process's data segment (heap and private mappings) at ``limit`` bytes; 0: no cap.

    ``RLIMIT_DATA`` rather than ``RLIMIT_AS``: address space that is reserved but not writable
    (CUDA's, thread guard pages) does not count, memory a claim fills does.
    """
    if limit <= 0:
        return
    import resource  # noqa: PLC0415

    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def jsonable(value: Any) -> Any:
    """Turn what a snippet returns (tuples, torch.Size, dtypes, numpy scalars) into JSON values."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", 1) == 0:
        return jsonable(item())
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    return str(value)


class _FdCapture:
    """Redirect fds 1 and 2 into a temporary file for the duration of one claim."""

    def __init__(self, path: Path | None = None):
        self.target = path

    def __enter__(self) -> _FdCapture:
        sys.stdout.flush()
        sys.stderr.flush()
        # A named file, so the parent can still read what was printed if this process dies.
        self.file = self.target.open("w+b") if self.target else tempfile.TemporaryFile()
        self.saved = (os.dup(1), os.dup(2))
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            ctypes.CDLL(None).fflush(None)  # C stdio buffers of extensions
        except OSError:
            pass
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)
        self.file.seek(0)
        data = self.file.read()
        self.file.close()
        text = data.decode("utf-8", "replace")
        self.text = text if len(text) <= MAX_OUTPUT else text[: MAX_OUTPUT // 2] + "\n…\n" + text[-MAX_OUTPUT // 2 :]


def _import_snippet(path: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"_snippet_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


def _write(results: Path, record: JsonObject) -> None:
    """One message to the runner: a line of JSON, on disk before the next claim starts."""
    with results.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _capped(observed: Any, claim_id: str) -> tuple[Any, ExceptionInfo | None]:
    size = len(json.dumps(observed, ensure_ascii=False))
    if size <= MAX_OBSERVED:
        return observed, None
    return {}, ExceptionInfo("ObservedTooLarge", f"the observed values of {claim_id} are {size:,} bytes of JSON; the "
                             f"cap is {MAX_OBSERVED:,}: observe a summary (a count, a shape, a few items) instead")


def run_one(claim_id: str, device: str, workroot: Path, snippet_folder: Path, memory: int = 0) -> WorkerResult:
    workdir = workroot / claim_id
    workdir.mkdir(parents=True, exist_ok=True)
    ctx = Context(device=device, workdir=workdir, snippet_folder=snippet_folder)
    exception = None
    torch = sys.modules.get("torch")  # seeded when the snippet uses it; never imported for nothing
    if torch is not None:
        torch.manual_seed(0)  # shifted too where a stress variant installed another draw
    start = time.perf_counter()
    with _FdCapture(workdir / OUTPUT_FILE) as cap:
        try:
            returned = LOADED[claim_id](ctx)
            if returned:
                ctx.observed.update(returned)
        except BaseException as exc:  # noqa: BLE001  (an expected error is a result, not a crash)
            exception = _exception(exc, memory)
    observed, too_large = _capped(jsonable(ctx.observed), claim_id)
    return WorkerResult(
        claim_id=claim_id,
        observed=observed,
        output=cap.text,
        duration_s=round(time.perf_counter() - start, 4),
        threads=torch.get_num_threads() if torch is not None else None,
        exception=too_large or exception,
    )


def _exception(exc: BaseException, memory: int = 0) -> ExceptionInfo:
    message = str(exc)
    if memory and (isinstance(exc, MemoryError) or any(s in message for s in _ALLOC_FAILED)):
        message = (f"the claim ran out of its worker's memory limit ({memory / 2**30:.3g} GiB, "
                   f"VERIFY_WORKER_MEMORY): {message}")
    return ExceptionInfo(type(exc).__name__, message, "".join(traceback.format_exception(exc))[-4000:])


def _end(result: WorkerResult) -> JsonObject:
    return {"event": "end", **result.to_json()}


def _die_with(parent: int, every: float = 0.5) -> None:
    """Kill this worker's process group (it and whatever a claim started) once ``parent`` is gone.

    The worker runs in its own session, so a run killed with SIGKILL would otherwise leave it
    running its claim to the end, or for ever. A daemon thread asks every ``every`` seconds: a
    system call, nothing a timing would notice.
    """
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, name="verify-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snippet", required=True, type=Path)
    parser.add_argument("--claims", required=True, help="comma-separated ids, in order")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--results", required=True, type=Path)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--memory", type=int, default=0, help="bytes this worker may allocate; 0: no limit")
    parser.add_argument("--parent", type=int, default=0, help="the run's process: the worker dies with it")
    parser.add_argument("--seed-shift", type=int, default=0,
                        help="another draw: every seed a claim sets is shifted (verify stress; see verify.running.seeds)")
    args = parser.parse_args(argv)
    if args.parent:
        _die_with(args.parent)
    limit_memory(args.memory)
    folder = args.snippet.parent.resolve()
    if args.seed_shift:
        seeds.install(args.seed_shift)
    try:
        with _FdCapture() as cap:
            _import_snippet(args.snippet)
    except BaseException as exc:  # noqa: BLE001
        _write(args.results, {"event": "import-error", **asdict(_exception(exc))})
        return 3
    for claim_id in args.claims.split(","):
        _write(args.results, {"event": "begin", "id": claim_id, "t": time.time()})
        if claim_id not in LOADED:
            missing = ExceptionInfo("ClaimError", "no function is decorated with this id")
            _write(args.results, _end(WorkerResult(claim_id, output=cap.text, duration_s=0.0, exception=missing)))
            continue
        _write(args.results, _end(run_one(claim_id, args.device, args.workdir, folder, args.memory)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
