"""Per-call overhead against tensor size, and (CUDA) tiny kernels with and without CUDA graphs."""

from __future__ import annotations

import pytest

from snippets._workloads import bench_extra as workload
from verify.bench.plugin import device, measure

pytestmark = pytest.mark.bench
DEV = device()
SIZES = [1 << e for e in ([0, 6, 10, 13, 16, 19, 22] if DEV == "cpu" else [0, 8, 12, 16, 20, 24, 26])]


@pytest.mark.benchmark(group="dispatch-overhead")
@pytest.mark.parametrize("variant", ["fresh", "preallocated"])
@pytest.mark.parametrize("n", SIZES)
def test_add_overhead(benchmark, limits, n, variant):
    fns = {v: workload.add_case(n, DEV, preallocated=v == "preallocated") for v in ("fresh", "preallocated")}
    others = [f for v, f in fns.items() if v != variant]
    measure(benchmark, fns[variant], dev=DEV, others=others, bytes_moved=3 * n * 4, limits=limits,
            rounds=11, size=n, variant=f"add ({variant} output)")


@pytest.mark.skipif(DEV != "cuda", reason="CUDA graphs need a GPU")
@pytest.mark.benchmark(group="cuda-graphs")
@pytest.mark.parametrize("variant", ["eager", "graph"])
@pytest.mark.parametrize("numel", [1 << 10, 1 << 16])
def test_cuda_graph(benchmark, limits, numel, variant):
    fns = workload.graph_case(DEV, numel)
    others = [f for v, f in fns.items() if v != variant]
    measure(benchmark, fns[variant], dev=DEV, others=others, bytes_moved=2 * workload.TINY_KERNELS * 2 * numel * 4,
            limits=limits, size=numel, kernels=2 * workload.TINY_KERNELS, variant=variant)
