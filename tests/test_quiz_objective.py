"""Objective items: 判断题 from key points and contradicts, 计算题 that claims observed (formulas they check)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from tests._quiz_samples import write_sample_docs
from verify.claim import LOADED, Context
from verify.quiz import claims as claims_mod
from verify.quiz import objective
from verify.quiz.bank import build_bank
from verify.quiz.claims import ClaimFacts
from verify.storage.scan import load_registry


def test_key_points_are_true_and_their_contradicts_false(tmp_path):
    write_sample_docs(tmp_path / "docs")
    bank = build_bank(tmp_path / "docs", html=False)
    q = bank.question("expand-demo")
    items = [o for o in bank.objective if o.question == "expand-demo"]
    assert [(o.prompt, o.answer) for o in items if o.answer] == [(kp.point, True) for kp in q.key_points]
    wrong = [o for o in items if not o.answer]
    assert len(wrong) == sum(len(kp.contradicts) for kp in q.key_points)
    assert all(o.explain in {kp.point for kp in q.key_points} and o.tags == q.tags for o in items)
    assert bank.known() >= {o.id for o in bank.objective}  # progress can be kept under their ids


def test_a_contradicts_statement_reads_as_a_sentence():
    assert objective.plain_statement("expand 会 拷贝") == "expand 会拷贝"
    assert objective.plain_statement("检查点 什么都 不保存") == "检查点什么都不保存"
    assert objective.plain_statement("print 不会 断图") == "print 不会断图"


@pytest.mark.parametrize("answer, kind, truth, right", [
    ("对", "judge", True, True), ("错", "judge", True, False), ("错", "judge", False, True), ("不对", "judge", False, True),
    ("2.5", "calc", 2.5, True), ("约 2.52 GiB", "calc", 2.5, True), ("2.6", "calc", 2.5, False), ("", "calc", 2.5, False),
    ("1,280", "calc", 1280, True), ("3e9", "calc", 3e9, True)])
def test_an_answer_is_checked_by_its_kind(answer, kind, truth, right):
    item = objective.Objective(id="x", kind=kind, question="q", prompt="p", answer=truth, answer_text="", tolerance=0.01)
    assert objective.check(item, answer) is right


def _snippet(rel: str):
    """A question's calc.py, loaded by path as the runner's worker loads it (its claims land in LOADED)."""
    spec = importlib.util.spec_from_file_location(f"_calc_{Path(rel).parent.name.replace('-', '_')}", SETTINGS.root / rel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALC_CLAIMS = {"snippets/kv-cache/calc.py": "kvcache.calc-items", "snippets/zero-stages/calc.py": "zero.calc-items",
               "snippets/gpu-execution-model/calc.py": "exec.occupancy-items"}


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    """rel -> (the calc.py module, what its items claim observes), the claims called as a worker calls them."""
    if str(SETTINGS.root) not in sys.path:
        sys.path.insert(0, str(SETTINGS.root))
    out = {}
    for rel, cid in CALC_CLAIMS.items():
        module = _snippet(rel)
        out[rel] = module, LOADED[cid](Context("cpu", tmp_path_factory.mktemp("calc")))
    return out


def test_the_items_claims_observe_the_calculators_answers(observed):
    """What each items claim observes is its calc.py's formula on the drawn parameters, checked, in the
    shape the quiz reads; the items are the ones the quiz asked before they became observations."""
    claims = load_registry(SETTINGS).claims
    for rel, (module, obs) in observed.items():
        sets = objective.calc_sets(obs[objective.OBSERVED_KEY], rel)
        assert obs.get("equal", True) and obs.get("worst", 0) < 1e-6 and obs["n_items"] == 6, rel
        for calc, spec in zip(sets, module.CALCULATORS, strict=True):
            assert calc.claim in claims and claims[calc.claim].question == calc.question == spec["question"], calc.id
            assert len(calc.items) == 6 and len({i.prompt for i in calc.items}) == 6, calc.id
            for item in calc.items:
                exact = spec["answer"](**item.params) / spec.get("scale", 1.0)
                assert item.answer == exact and set(item.params) == set(spec["params"]), (calc.id, item)
    kv = next(s for s in objective.calc_sets(observed["snippets/kv-cache/calc.py"][1]["calc_items"], "kv")
              if s.id == "kv-cache-bytes")
    # the first item the quiz asked (and whose progress a reader keeps) before items were observations
    assert kv.items[0].params == {"layers": 40, "kv_heads": 1, "head_dim": 64, "batch": 64, "seq": 4096, "dtype": "BF16"}


def test_the_bank_asks_what_the_claims_observed(observed):
    """计算题 come from the facts (the ledger), rounded to the calculator's digits; without them there are none."""
    sets = tuple(s for _m, obs in observed.values() for s in objective.calc_sets(obs["calc_items"], "x"))
    without = build_bank(SETTINGS.docs_dir, html=False)
    assert not [o for o in without.objective if o.kind == "calc"]
    bank = build_bank(SETTINGS.docs_dir, html=False, facts=ClaimFacts(calculations=sets))
    items = [o for o in bank.objective if o.kind == "calc"]
    assert len(items) == 18 and bank.known() >= {o.id for o in items}
    for calc in sets:
        for n, item in enumerate(calc.items):
            o = next(o for o in items if o.id == f"calc:{calc.id}:{n}")
            assert o.prompt == item.prompt and o.claim == calc.claim and o.params == item.params
            assert objective.check(o, str(item.answer)) and not objective.check(o, str(item.answer * 1.1)), o.id


def test_the_kv_cache_formula_is_the_one_a_config_gives(observed):
    module = observed["snippets/kv-cache/calc.py"][0]
    # Llama-2-7B: 32 layers, 32 KV heads, head_dim 128, FP16: 2 GiB per sequence of 4096 tokens
    assert module.kv_cache_bytes(layers=32, batch=1, kv_heads=32, head_dim=128, seq=4096, dtype="FP16") == 2 * 2**30


@pytest.mark.parametrize("bad, field", [
    ({"items": [{"params": {}, "prompt": "p", "answer": float("nan")}]}, "answer"),
    ({"tolerance": 0}, "tolerance"), ({"colour": "red"}, "colour"), ({"items": "x"}, "items")])
def test_observed_items_that_do_not_fit_are_named_and_left_out(bad, field, caplog):
    good = {"id": "x", "question": "q", "claim": "c", "unit": "GiB", "tolerance": 0.02, "digits": 3, "explain": "",
            "items": [{"params": {"n": 1}, "prompt": "p", "answer": 2.0}]}
    with pytest.raises(ValueError, match=f"kv.items: observed calc_items.*{field}"):
        objective.calc_sets([{**good, **bad}], "kv.items")
    record = SimpleNamespace(observed={"calc_items": [{**good, **bad}]})
    assert claims_mod._calculations({"kv.items": record, "other": None}) == ()
    assert "kv.items" in caplog.text and "left out" in caplog.text
    assert len(claims_mod._calculations({"kv.items": SimpleNamespace(observed={"calc_items": [good]})})) == 1
