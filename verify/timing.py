"""Interleaved timing for performance claims and benchmarks.

Variants are measured in the same process, round-robin, after a warm-up, so that drift of the
machine (frequency, other load) hits every variant alike. On CUDA each sample is bracketed with
``torch.cuda.synchronize()`` so the time includes the GPU work, not only the launch.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def _sync(device: str) -> Callable[[], None]:
    if device == "cuda":
        import torch  # noqa: PLC0415

        return torch.cuda.synchronize
    return lambda: None


def sample(fn: Callable[[], Any], *, device: str = "cpu", inner: int = 1) -> float:
    """Seconds per call of ``fn``, averaged over ``inner`` back-to-back calls."""
    sync = _sync(device)
    sync()
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    sync()
    return (time.perf_counter() - start) / inner


def stats(samples: list[float]) -> dict[str, float | int]:
    """Median, quartiles, min and relative spread (IQR / median) of a list of seconds."""
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=4) if len(ordered) >= 2 else [ordered[0]] * 3
    median = statistics.median(ordered)
    return {
        "median_s": median,
        "q1_s": q[0],
        "q3_s": q[2],
        "min_s": ordered[0],
        "spread": (q[2] - q[0]) / median if median else 0.0,
        "n": len(ordered),
    }


def compare(
    variants: dict[str, Callable[[], Any]],
    *,
    rounds: int = 15,
    warmup: int = 2,
    inner: int = 1,
    device: str = "cpu",
) -> dict[str, dict[str, float | int]]:
    """Time every variant ``rounds`` times, interleaved, and return :func:`stats` for each."""
    for _ in range(warmup):
        for fn in variants.values():
            sample(fn, device=device, inner=inner)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            samples[name].append(sample(fn, device=device, inner=inner))
    return {name: stats(values) for name, values in samples.items()}


def ratio(timings: dict[str, dict[str, float | int]], slow: str, fast: str) -> float:
    """How many times faster ``fast`` is than ``slow``, by medians."""
    return float(timings[slow]["median_s"]) / float(timings[fast]["median_s"])
