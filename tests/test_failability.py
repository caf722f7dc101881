"""Every claim can fail: a plausible wrong observation breaks its expectation (issue 35).

Each fact, measured fact and timing claim is checked against what it observed where a committed
record or this checkout's cache holds one, else against a stand-in near what it expects (a CUDA
claim on a CPU). A wrong value is a flipped flag, a number 10x off, negated, off by one or zero,
a list reversed or shortened, a string changed (:mod:`verify.core.perturb`). An expectation that
accepts all of them checks nothing. What this cannot see, a claim that compares one expression
with itself, is for a reader of its code: the pages' reviews look for it.
"""

from __future__ import annotations

import pytest

from tests._project import REPO, tiny_project
from verify.core import perturb
from verify.settings import Settings
from verify.storage import recorded, scan
from verify.storage.fs import read_json


def _observations(settings: Settings) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for records in recorded.load_all(settings).values():
        for cid, rec in records.items():
            if rec.observed:
                out.setdefault(cid, rec.observed)
    for path in sorted((settings.cache_dir / "evidence").glob("*/*.json")):  # this checkout's runs, when there are some
        data = read_json(path)
        if isinstance(data, dict) and isinstance(data.get("observed"), dict) and data["observed"]:
            out[str(data.get("id"))] = data["observed"]
    return out


def test_every_claim_can_fail_on_a_plausible_wrong_observation():
    settings = Settings.for_root(REPO)
    reg = scan.load_registry(settings)
    seen = _observations(settings)
    vacuous = []
    for cid, spec in sorted(reg.claims.items()):
        if spec.kind == "error":  # fails whenever the call does not raise that exception
            continue
        if not spec.expect or not perturb.can_fail(spec.expect, seen.get(cid)):
            vacuous.append(f"{cid}: expects {spec.expect!r}")
    assert not vacuous, "these claims accept every plausible wrong observation:\n" + "\n".join(vacuous)


@pytest.mark.parametrize("expect, observed, fails", [
    ({"ok": True}, {"ok": True}, True),
    ({"ratio": {">=": 2.0}}, {"ratio": 3.1}, True),
    ({"err": {"<": 1e-6}}, {"err": 1e-9}, True),
    ({"stride": [0, 1]}, {"stride": [0, 1]}, True),
    ({"name": {"contains": ""}}, {"name": "abc"}, False),  # every string contains ""
    ({"x": {"between": [float("-inf"), float("inf")]}}, {"x": 1.0}, False),
    ({"x": {">=": float("-inf")}}, None, False),
    ({"x": {"type": "float"}}, None, False),  # a type alone: a number 10x off is still a float
    ({"x": {"approx": [1.0, 0.05]}}, None, True),
])
def test_the_check_tells_a_vacuous_expectation_from_one_that_can_fail(expect, observed, fails):
    assert perturb.can_fail(expect, observed) is fails


def test_a_claim_with_a_vacuous_expectation_is_named(tmp_path):
    root = tiny_project(tmp_path / "p", extra={"snippets/tiny/vacuous.py": (
        "from verify.claim import claim\n\n"
        "@claim('tiny.vacuous', question='tiny', statement='总是对。', expect={'x': {'>=': -1e308}})\n"
        "def _(ctx):\n    return {'x': 1.0}\n")})
    reg = scan.load_registry(Settings.for_root(root))
    assert not perturb.can_fail(reg.claims["tiny.vacuous"].expect)
    assert perturb.can_fail(reg.claims["tiny.stride"].expect)
