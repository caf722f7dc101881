"""Shared pytest configuration."""

from __future__ import annotations

from typing import Any

import pytest

@pytest.fixture(scope="session", autouse=True)
def _ledger_producer() -> None:
    """The site reads the ledger the engine makes, as a build wires them (verify.build)."""
    from verify.running import engine  # noqa: PLC0415
    from verify.site import session  # noqa: PLC0415

    session.use(engine.verify)


# --- benchmarks: fixtures (bench_device, limits) and pytest-benchmark hooks --------------------
pytest_plugins = ("verify.bench.plugin",)


@pytest.fixture(scope="session")
def limits(bench_device: str) -> dict[str, Any]:
    """This machine's copy bandwidth and matmul FLOP/s, measured once in this run."""
    from snippets._workloads import limits as workload  # noqa: PLC0415
    from verify.bench.plugin import session_limits  # noqa: PLC0415

    return session_limits(lambda: workload.measure(bench_device))
# --- end benchmarks ----------------------------------------------------------------------------
