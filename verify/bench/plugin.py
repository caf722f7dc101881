"""The pytest side of the benchmarks: fixtures, machine info, and one way to measure.

Loaded by ``tests/conftest.py``. Every benchmark test (``tests/test_bench_*.py``, marked
``@pytest.mark.bench``) calls :func:`measure`, which

- warms up, then times ``rounds`` rounds of ``inner`` back-to-back calls (``inner`` calibrated so
  that a round is long enough for the clock), synchronising CUDA at the end of every round;
- interleaves variants: before each timed round, every other variant of the comparison runs
  once, untimed, so that drift of a busy machine (frequency, neighbours) hits all of them alike;
- writes into ``extra_info`` the per-call median and quartiles, the work done (bytes moved or
  FLOPs), the achieved GB/s or GFLOP/s and its fraction of the limit measured in this same run.

The limits (the copy bandwidth and matmul rate of this machine) are measured once per session by
the project's ``limits`` fixture (``tests/conftest.py``, which knows the workloads) through
:func:`session_limits`, and go into ``machine_info`` with CPU model, core count, threads, GPU name
and torch version and build. This module never imports the project's content (``snippets/``).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from verify.settings import Settings

_LIMITS: dict[str, Any] = {}
_SETTINGS: list[Settings] = []
ROUND_TARGET_S = {"cpu": 2e-3, "cuda": 1e-3}  # a timed round lasts at least this long


def settings() -> Settings:
    """The settings of the checkout under test (pytest's root directory), made once per session."""
    if not _SETTINGS:
        _SETTINGS.append(Settings.discover())
    return _SETTINGS[0]


def pytest_configure(config: Any) -> None:
    if not _SETTINGS:
        _SETTINGS.append(Settings.discover(config.rootpath))


def device() -> str:
    import torch  # noqa: PLC0415

    return "cuda" if torch.cuda.is_available() and settings().device != "cpu" else "cpu"


def _sync(dev: str) -> Callable[[], None]:
    if dev == "cuda":
        import torch  # noqa: PLC0415

        return torch.cuda.synchronize
    return lambda: None


@pytest.fixture(scope="session")
def bench_device() -> str:
    return device()


def session_limits(measure_limits: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """This machine's limits, measured once in this run by ``measure_limits`` and kept for machine_info."""
    if not _LIMITS:
        _LIMITS.update(measure_limits())
    return _LIMITS


def calibrate(fn: Callable[[], Any], dev: str, target_s: float | None = None, cap: int = 20000) -> int:
    """How many back-to-back calls make one round last ``target_s``."""
    sync = _sync(dev)
    target_s = target_s or ROUND_TARGET_S[dev]
    fn()
    sync()
    inner = 1
    while True:
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        took = time.perf_counter() - start
        if took >= target_s or inner >= cap:
            return inner
        inner = min(cap, max(inner * 2, int(inner * target_s / max(took, 1e-9) * 1.2)))


def measure(
    benchmark: Any,
    fn: Callable[[], Any],
    *,
    dev: str,
    others: Iterable[Callable[[], Any]] = (),
    rounds: int = 15,
    warmup: int = 2,
    inner: int | None = None,
    bytes_moved: int | None = None,
    flops: int | None = None,
    limits: dict[str, Any] | None = None,
    flops_limit_key: str = "matmul_float32_GFLOPs",
    **info: Any,
) -> dict[str, Any]:
    """Time ``fn`` with pytest-benchmark, interleaved with ``others``; fill ``extra_info``.

    Args:
        benchmark: the pytest-benchmark fixture.
        fn: one call of the variant under test.
        dev: ``"cpu"`` or ``"cuda"``.
        others: the comparison's other variants; each runs once, untimed, before every round.
        rounds, warmup: timed rounds and untimed warm-up rounds.
        inner: calls per round; calibrated when ``None``.
        bytes_moved: bytes read + written by one call, for GB/s against the copy limit.
        flops: floating-point operations of one call, for GFLOP/s against the matmul limit.
        limits: the session's limits (the ``limits`` fixture).
        flops_limit_key: which matmul limit to divide by.
        **info: parameters to show in tables and plots (size, variant, ...).

    Returns:
        The ``extra_info`` written.
    """
    sync = _sync(dev)
    others = list(others)
    inner = inner or calibrate(fn, dev)

    def target() -> None:
        for _ in range(inner):
            fn()
        sync()

    def interleave() -> None:
        for other in others:
            other()
        sync()

    benchmark.pedantic(target, setup=interleave if others else None, rounds=rounds, warmup_rounds=warmup,
                       iterations=1)
    data = sorted(benchmark.stats.stats.data) if benchmark.stats else []
    extra = benchmark.extra_info
    extra.update(info)
    extra.update(inner=inner, interleaved=len(others), device=dev)
    if not data:  # --benchmark-disable: ran once as a plain test
        return extra
    extra.update(summarise(data, inner))
    median = extra["median_s"]
    if bytes_moved is not None:
        extra["bytes"] = bytes_moved
        if bytes_moved:
            extra["GBps"] = bytes_moved / median / 1e9
            if limits:
                extra["limit_GBps"] = limits["copy_GBps"]
                extra["fraction"] = extra["GBps"] / limits["copy_GBps"]
    if flops is not None:
        extra["flops"] = flops
        extra["GFLOPs"] = flops / median / 1e9
        if limits and flops_limit_key in limits:
            extra["limit_GFLOPs"] = limits[flops_limit_key]
            extra["fraction"] = extra["GFLOPs"] / limits[flops_limit_key]
    return extra


def summarise(samples: Iterable[float], inner: int = 1) -> dict[str, float]:
    """Per-call median, quartiles and spread (IQR / median) of round times of ``inner`` calls."""
    data = sorted(samples)
    q = statistics.quantiles(data, n=4) if len(data) >= 2 else [data[0]] * 3
    median = statistics.median(data) / inner
    return {"median_s": median, "q1_s": q[0] / inner, "q3_s": q[2] / inner,
            "spread": (q[2] - q[0]) / inner / median if median else 0.0}


def record(benchmark: Any, samples: Iterable[float], **info: Any) -> dict[str, Any]:
    """Fill ``extra_info`` from times measured inside the benchmarked call (e.g. in a child process).

    pytest-benchmark's own stats then hold the wall time of the whole call (a process start, say),
    while ``median_s`` and its quartiles, which tables, plots and compare read, hold what the call
    measured of itself.
    """
    extra = benchmark.extra_info
    extra.update(info)
    samples = list(samples)
    if samples:
        extra.update(summarise(samples))
        extra["samples_s"] = samples
    return extra


# --- pytest-benchmark hooks -------------------------------------------------------------------

def pytest_benchmark_update_machine_info(config: Any, machine_info: dict[str, Any]) -> None:
    import platform  # noqa: PLC0415

    import torch  # noqa: PLC0415

    from verify.running.probe import cpu_model  # noqa: PLC0415

    dev = device()
    machine_info.update(
        cpu_model=cpu_model(),
        cpu_count=os.cpu_count(),
        threads=torch.get_num_threads(),
        torch=torch.__version__.split("+")[0],
        torch_build=("cu" + torch.version.cuda.replace(".", "")) if torch.version.cuda else "cpu",
        device=dev,
        gpu_name=torch.cuda.get_device_name(0) if dev == "cuda" else None,
        python=platform.python_version(),
        limits=dict(_LIMITS),
    )


def pytest_benchmark_update_json(config: Any, benchmarks: Any, output_json: dict[str, Any]) -> None:
    """Record the source hash of every benchmark file that ran, for staleness."""
    from verify.bench.store import source_hash  # noqa: PLC0415

    files = sorted({b["fullname"].split("::")[0] for b in output_json.get("benchmarks", [])})
    conf = settings()
    output_json["sources"] = {f: source_hash(conf, f) for f in files if (conf.root / f).is_file()}
