"""Every claim of the knowledge base is also a pytest test, run by the same engine as the site."""

from __future__ import annotations

import json

import pytest

from verify.running import engine
from verify.core import registry
from verify.storage import scan
from tests._project import REPO_SETTINGS as SETTINGS

ROOT = SETTINGS.root
CLAIMS = sorted(scan.load_registry(SETTINGS).claims.values(), key=lambda s: s.id)


@pytest.fixture(scope="session")
def outcome() -> engine.Verification:
    # One verification for all claims: cached evidence is reused, missing evidence is run once.
    return engine.verify(SETTINGS)


def test_registry_has_no_problems():
    assert [p.line() for p in scan.load_registry(SETTINGS).problems] == []


@pytest.mark.parametrize("spec", CLAIMS, ids=[s.id for s in CLAIMS])
def test_claim(spec: registry.ClaimSpec, outcome: engine.Verification) -> None:
    record = outcome.local[spec.id]
    if record.outcome == "skipped":
        pytest.skip(f"{spec.id}: {record.message}")
    # The whole observation goes into the message: a failure on another machine (CI) is then
    # diagnosable from its log alone.
    observed = json.dumps(record.observed, ensure_ascii=False, sort_keys=True)[:3000]
    assert record.outcome == "pass", (f"{spec.id} ({spec.snippet}:{spec.line}): {record.message}\n"
                                         f"observed: {observed}")
