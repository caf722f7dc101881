"""DataLoader with 0..N worker processes on a pure-Python transform that holds the GIL.

The limit here is not a bandwidth but the ideal speedup ``min(workers, cores)``: ``fraction`` is
the speedup over ``num_workers=0`` divided by it. Beside the loaders, two bare processes
(``multiprocessing.Pool``) run the same transforms: what two processes manage at that moment on a
machine that others share, so that a shortfall can be told apart from a DataLoader cost. Workers
are persistent, so their start-up is paid once, outside the timed epochs; the variants are
interleaved like every other comparison.
"""

from __future__ import annotations

import gc
import multiprocessing
import os

import pytest

from snippets._workloads import overhead
from verify.bench.plugin import measure

pytestmark = [pytest.mark.bench, pytest.mark.filterwarnings("ignore:This DataLoader will create")]
ITEMS = 32  # 8 batches of 4
LOADER, POOL = "DataLoader", "multiprocessing.Pool"
CASES = [(0, LOADER), (1, LOADER), (2, LOADER), (4, LOADER), (2, POOL)]
_serial: dict[str, float] = {}


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.fixture(scope="module")
def epochs():
    loaders = {(w, LOADER): overhead.make_loader(w, length=ITEMS) for w, kind in CASES if kind == LOADER}
    pool = multiprocessing.get_context("fork").Pool(2)
    items = list(range(ITEMS))
    fns = {key: (lambda loader=loader: overhead.epoch(loader)) for key, loader in loaders.items()}
    fns[(2, POOL)] = lambda: pool.map(overhead.python_transform, items, chunksize=4)
    for fn in fns.values():  # starts the persistent workers before anything is timed
        fn()
    yield fns
    pool.close()
    pool.join()
    fns.clear()
    loaders.clear()
    gc.collect()  # persistent workers exit when their iterator is collected


@pytest.mark.benchmark(group="dataloader-workers")
@pytest.mark.parametrize(("workers", "kind"), CASES)
def test_dataloader_workers(benchmark, epochs, workers, kind):
    key = (workers, kind)
    extra = measure(benchmark, epochs[key], dev="cpu", others=[f for k, f in epochs.items() if k != key],
                    rounds=5, warmup=1, inner=1, size=workers, workers=workers, items=ITEMS, cores=cores(),
                    load_avg_1min=os.getloadavg()[0], variant=kind)
    if "median_s" not in extra:
        return
    if workers == 0:
        _serial["s"] = extra["median_s"]
    elif "s" in _serial:  # the serial baseline ran first in this session
        ideal = min(workers, cores())
        extra.update(speedup=_serial["s"] / extra["median_s"], ideal_speedup=ideal)
        extra["fraction"] = extra["speedup"] / ideal
