"""What the machine allows, as the size grows: copy bandwidth and matmul FLOP/s.

The largest sizes are the limits the other benchmarks are divided by (measured again, once, by
the ``limits`` fixture); the small sizes show the caches and the per-call overhead.
"""

from __future__ import annotations

import pytest
import torch

from snippets._workloads import limits as workload
from verify.bench.plugin import device, measure

pytestmark = pytest.mark.bench
DEV = device()
COPY_EXP = {"cpu": [12, 15, 18, 21, 23, 25], "cuda": [16, 20, 24, 26, 28]}[DEV]
MATMUL_N = {"cpu": [64, 128, 256, 512, 1024], "cuda": [256, 1024, 2048, 4096, 8192]}[DEV]


@pytest.mark.benchmark(group="limits-copy")
@pytest.mark.parametrize("numel", [1 << e for e in COPY_EXP])
def test_copy_bandwidth(benchmark, limits, numel):
    fn, nbytes = workload.copy_case(numel, DEV)
    measure(benchmark, fn, dev=DEV, bytes_moved=nbytes, limits=limits, rounds=11,
            size=numel, buffer_MiB=numel * 4 / 2**20, variant="copy_")


@pytest.mark.benchmark(group="limits-matmul")
@pytest.mark.parametrize("dtype", ["float32"] + (["bfloat16"] if DEV == "cuda" else []))
@pytest.mark.parametrize("n", MATMUL_N)
def test_matmul_flops(benchmark, limits, n, dtype):
    fn, flops = workload.matmul_case(n, DEV, getattr(torch, dtype))
    measure(benchmark, fn, dev=DEV, flops=flops, limits=limits, rounds=9,
            flops_limit_key=f"matmul_{dtype}_GFLOPs", size=n, variant=f"mm {dtype}")
