"""Shared pytest configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

@pytest.fixture(scope="session", autouse=True)
def _ledger_producer() -> None:
    """The site reads the ledger the engine makes, as a build wires them (verify.build)."""
    from verify.running import engine  # noqa: PLC0415
    from verify.site import session  # noqa: PLC0415

    session.use(engine.verify)


# --- the real site, built once per run for every test that reads it ------------------------------


@pytest.fixture(scope="session")
def real_site_from_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real site built ``--strict`` from what the cache and ``evidence/`` hold, running no claim
    (``VERIFY_NO_RUN``): every page with its marks as they are. The tests that read it never write to it."""
    out = tmp_path_factory.mktemp("site-from-cache") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", VERIFY_NO_RUN="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return out


@pytest.fixture(scope="session")
def real_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real site as ``make site`` builds it (``--strict``, every claim verified here first), watched:
    what of ``snippets/`` the building process itself ran is listed in ``snippets-ran.json`` beside it
    (``tests/_snippet_guard.py``)."""
    out = tmp_path_factory.mktemp("realsite") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "tests._snippet_guard", str(out.parent / "snippets-ran.json"),
                           "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return out


# --- benchmarks: fixtures (bench_device, limits) and pytest-benchmark hooks --------------------
pytest_plugins = ("verify.bench.plugin",)


@pytest.fixture(scope="session")
def limits(bench_device: str) -> dict[str, Any]:
    """This machine's copy bandwidth and matmul FLOP/s, measured once in this run."""
    from snippets._workloads import limits as workload  # noqa: PLC0415
    from verify.bench.plugin import session_limits  # noqa: PLC0415

    return session_limits(lambda: workload.measure(bench_device))
# --- end benchmarks ----------------------------------------------------------------------------
