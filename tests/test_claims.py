"""Every claim of the knowledge base is also a pytest test, run by the same engine as the site."""

from __future__ import annotations

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
    assert record["outcome"] == "pass", f"{spec.id} ({spec.snippet}:{spec.line}): {record['message']}"
