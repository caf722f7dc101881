"""torch.compile's cost: the first call with an empty cache, the first call of a new process that
finds the compiled code on disk, and a warm call in the same process.

The cold and disk-cached rounds each start a fresh Python (the in-memory compiler state must be
empty) through :func:`snippets._workloads.overhead.compile_probe`, the same probe the compile
claims use. pytest-benchmark's stats of those two hold the wall time of the whole child process
(interpreter and torch import included); ``median_s``, which tables and compare read, is the
first call of the compiled function as the child timed it.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch

from snippets._workloads import overhead
from verify.bench.plugin import device, measure, record

pytestmark = [pytest.mark.bench, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
DEV = device()
ROUNDS = 3  # every round is a process start and a compile: seconds each
NUMEL = 4096  # what the probe compiles for
_last_cache: list[Path] = []  # the cold rounds' last cache, reused as the disk-cached one


def _probe_rounds(benchmark, dirs, prime: bool) -> list[dict]:
    results = []
    fresh = iter(dirs)

    def setup():
        return (next(fresh),), {}

    def target(cache: Path) -> None:
        results.append(overhead.compile_probe(cache, DEV, timeout=300))

    if prime:  # disk-cached rounds need a cache that a finished compile left behind
        target(dirs[0])
        results.clear()
    benchmark.pedantic(target, setup=setup, rounds=ROUNDS, warmup_rounds=0, iterations=1)
    return results


def _fx(results: list[dict], key: str) -> int:
    return sum(r["fx_cache"].get(key, 0) for r in results)


@pytest.mark.benchmark(group="compile-time")
@pytest.mark.parametrize("variant", ["cold", "disk-cached", "warm"])
def test_compile_time(benchmark, tmp_path, variant):
    if variant == "warm":
        compiled = torch.compile(overhead.fused_chain)
        x = torch.randn(NUMEL, device=DEV)
        compiled(x)
        with overhead.single_thread():  # as in the probe's child
            measure(benchmark, lambda: compiled(x), dev=DEV, rounds=11, size=NUMEL, variant="warm (same process)",
                    threads=1)
        return
    if variant == "cold":
        dirs = [tmp_path / f"cold-{i}" for i in range(ROUNDS)]  # an empty cache every round
        results = _probe_rounds(benchmark, dirs, prime=False)
        _last_cache[:] = dirs[-1:]
    else:
        shared = _last_cache[0] if _last_cache else tmp_path / "disk"
        results = _probe_rounds(benchmark, list(itertools.repeat(shared, ROUNDS)), prime=not _last_cache)
    if not results:
        return
    record(benchmark, [r["calls_s"][0] for r in results], size=NUMEL, variant=variant, device=DEV, threads=1,
           second_call_s=sorted(r["calls_s"][1] for r in results)[len(results) // 2],
           import_s=sorted(r["import_s"] for r in results)[len(results) // 2],
           process_s=sorted(r["process_s"] for r in results)[len(results) // 2],
           fxgraph_cache_hit=_fx(results, "fxgraph_cache_hit"), fxgraph_cache_miss=_fx(results, "fxgraph_cache_miss"))
    # What makes the rounds what they claim to be: a cold round compiled, a disk-cached one did not.
    if variant == "cold":
        assert _fx(results, "fxgraph_cache_miss") >= len(results)
    else:
        assert _fx(results, "fxgraph_cache_hit") >= len(results)
