"""expand against repeat as the row grows (64 rows), bare and consumed by an element-wise op."""

from __future__ import annotations

import pytest

from snippets._workloads import tensors as workload
from verify.bench.plugin import device, measure

pytestmark = pytest.mark.bench
DEV = device()
SIZES = {"cpu": [1 << 6, 1 << 10, 1 << 14, 1 << 17], "cuda": [1 << 6, 1 << 10, 1 << 14, 1 << 18, 1 << 21]}[DEV]


def _run(benchmark, limits, n, variant, consume):
    fns = workload.variants(n, DEV, consume=consume)
    others = [f for name, f in fns.items() if name != variant]
    nbytes = workload.bytes_moved(n, consume=consume)[variant]
    measure(benchmark, fns[variant], dev=DEV, others=others, bytes_moved=nbytes, limits=limits,
            size=n, elements=n * workload.ROWS, variant=variant)


@pytest.mark.benchmark(group="expand-vs-repeat")
@pytest.mark.parametrize("variant", ["expand", "repeat"])
@pytest.mark.parametrize("n", SIZES)
def test_expand_vs_repeat(benchmark, limits, n, variant):
    _run(benchmark, limits, n, variant, consume=False)


@pytest.mark.benchmark(group="expand-vs-repeat-consumed")
@pytest.mark.parametrize("variant", ["expand", "repeat"])
@pytest.mark.parametrize("n", SIZES)
def test_expand_vs_repeat_consumed(benchmark, limits, n, variant):
    _run(benchmark, limits, n, variant, consume=True)
