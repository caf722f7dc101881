"""What the machine allows: memory bandwidth from a large copy, and matmul FLOP/s.

Benchmarks divide their achieved GB/s or FLOP/s by these figures, measured on the same machine
in the same run, so that "fast" always reads against a limit rather than against a feeling.

Bandwidth is counted as bytes read plus bytes written: ``dst.copy_(src)`` of N bytes moves 2N.
The copy is far larger than any cache on either device (128 MiB per buffer on the CPU, 1 GiB on
the GPU), so it measures main memory / HBM, not L2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from verify import timing

# Elements per buffer of the bandwidth copy (float32).
COPY_NUMEL = {"cpu": 1 << 25, "cuda": 1 << 28}
# Square matmul side for the FLOP/s limit.
MATMUL_N = {"cpu": 1024, "cuda": 8192}


def copy_case(numel: int, device: str, dtype: torch.dtype = torch.float32) -> tuple[Callable[[], Any], int]:
    """A preallocated copy of ``numel`` elements and the bytes it moves (read + write)."""
    src = torch.randn(numel, device=device).to(dtype)
    dst = torch.empty_like(src)
    return (lambda: dst.copy_(src)), 2 * numel * src.element_size()


def matmul_case(n: int, device: str, dtype: torch.dtype = torch.float32) -> tuple[Callable[[], Any], int]:
    """An ``(n, n) @ (n, n)`` product into a preallocated output, and its FLOP count (2 n^3)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    return (lambda: torch.mm(a, b, out=out)), 2 * n**3


def _rate(fn: Callable[[], Any], work: int, device: str, rounds: int, inner: int) -> dict[str, float]:
    t = timing.compare({"x": fn}, rounds=rounds, warmup=2, inner=inner, device=device)["x"]
    return {"rate": work / float(t["median_s"]), "median_s": float(t["median_s"]), "spread": float(t["spread"])}


def measure(device: str) -> dict[str, Any]:
    """The limits of this device: copy GB/s and matmul GFLOP/s per dtype, with their spread."""
    dev = "cuda" if device == "cuda" else "cpu"
    fn, nbytes = copy_case(COPY_NUMEL[dev], device)
    copy = _rate(fn, nbytes, device, rounds=9 if dev == "cpu" else 20, inner=1 if dev == "cpu" else 5)
    del fn
    limits: dict[str, Any] = {
        "copy_GBps": copy["rate"] / 1e9,
        "copy_spread": copy["spread"],
        "copy_bytes": nbytes,
        "matmul_n": MATMUL_N[dev],
        "threads": torch.get_num_threads(),
    }
    dtypes = [torch.float32] + ([torch.bfloat16] if dev == "cuda" else [])
    for dtype in dtypes:
        fn, flops = matmul_case(MATMUL_N[dev], device, dtype)
        mm = _rate(fn, flops, device, rounds=7 if dev == "cpu" else 20, inner=1 if dev == "cpu" else 5)
        name = str(dtype).removeprefix("torch.")
        limits[f"matmul_{name}_GFLOPs"] = mm["rate"] / 1e9
        limits[f"matmul_{name}_spread"] = mm["spread"]
    if dev == "cuda":
        torch.cuda.empty_cache()
    return limits
