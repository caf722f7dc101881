"""A C++ op (a sequential scan, registered with the dispatcher) against the same loop in Python.

The scan ``y[i] = decay * y[i-1] + x[i]`` cannot be vectorised: every step waits for the previous
one. Achieved bandwidth counts the bytes the operation needs at least (read and write one float64
per element, 16 bytes) for every variant, against the copy limit measured in this run.
"""

from __future__ import annotations

import shutil

import pytest
import torch
from torch.utils import cpp_extension

from snippets._workloads import overhead
from verify.bench.plugin import device, measure, settings

# The op has a CPU kernel only; on a GPU machine it still runs on the CPU, without a limit to divide by.
pytestmark = [pytest.mark.bench,
              pytest.mark.skipif(shutil.which("g++") is None or not cpp_extension.is_ninja_available(),
                                 reason="building the extension needs g++ and ninja")]
DEV = device()
SOURCE = settings().root / "snippets" / "python-overhead" / "scan_op.cpp"  # the extension the claims build
DECAY = 0.9
SIZES = [100, 1_000, 10_000, 100_000]
TENSOR_LOOP_MAX = 1_000  # one dispatch per element: beyond this a call takes seconds
CASES = [(n, v) for n in SIZES for v in ("C++ op", "Python list loop", "tensor element loop")
         if v != "tensor element loop" or n <= TENSOR_LOOP_MAX]


@pytest.fixture(scope="module")
def ops():
    ops, _seconds = overhead.build_extension(SOURCE)
    return ops


def _variants(ops, n: int) -> dict:
    x = torch.randn(n, dtype=torch.float64)
    values = x.tolist()
    fns = {"C++ op": lambda: ops.decay_scan(x, DECAY), "Python list loop": lambda: overhead.decay_scan_python(values, DECAY)}
    if n <= TENSOR_LOOP_MAX:
        fns["tensor element loop"] = lambda: overhead.decay_scan_tensor_loop(x, DECAY)
    return fns


@pytest.mark.benchmark(group="cpp-ext-vs-python")
@pytest.mark.parametrize(("n", "variant"), CASES)
def test_scan(benchmark, limits, ops, n, variant):
    fns = _variants(ops, n)
    measure(benchmark, fns[variant], dev="cpu", others=[f for v, f in fns.items() if v != variant], rounds=7,
            bytes_moved=16 * n, limits=limits if DEV == "cpu" else None, size=n, variant=variant)
