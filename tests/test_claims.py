"""Every claim of the knowledge base is also a pytest test, run by the same engine as the site."""

from __future__ import annotations

import json

import pytest

from verify import engine, registry
from verify.paths import project_root

ROOT = project_root()
CLAIMS = sorted(registry.load(ROOT).claims.values(), key=lambda s: s.id)


@pytest.fixture(scope="session")
def outcome() -> engine.Outcome:
    # One verification for all claims: cached evidence is reused, missing evidence is run once.
    return engine.verify(ROOT)


def test_registry_has_no_problems():
    assert [p.line() for p in registry.load(ROOT).problems] == []


@pytest.mark.parametrize("spec", CLAIMS, ids=[s.id for s in CLAIMS])
def test_claim(spec: registry.ClaimSpec, outcome: engine.Outcome) -> None:
    record = outcome.local[spec.id]
    if record["outcome"] == "skipped":
        pytest.skip(f"{spec.id}: {record['message']}")
    # The whole observation goes into the message: a failure on another machine (CI) is then
    # diagnosable from its log alone.
    observed = json.dumps(record.get("observed"), ensure_ascii=False, sort_keys=True)[:3000]
    assert record["outcome"] == "pass", (f"{spec.id} ({spec.snippet}:{spec.line}): {record['message']}\n"
                                         f"observed: {observed}")
