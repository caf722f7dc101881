"""Objective items: 判断题 from key points and contradicts, 计算题 from claim-checked formulas."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from tests._quiz_samples import write_sample_docs
from verify.quiz import objective
from verify.quiz.bank import build_bank
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


def test_the_real_calculators_give_items_their_claims_check():
    """Each 计算题 names a claim that exists and checks its formula; the answers are the formula's."""
    calcs = objective.calculators(SETTINGS.root)
    assert {c.id for c in calcs} >= {"kv-cache-bytes", "zero-model-states", "occupancy"}
    claims = load_registry(SETTINGS).claims
    bank = build_bank(SETTINGS.docs_dir, html=False)
    for calc in calcs:
        assert calc.claim in claims and claims[calc.claim].question == calc.question, calc.id
        items = [o for o in bank.objective if o.id.startswith(f"calc:{calc.id}:")]
        assert len(items) == objective.PER_CALCULATOR and len({o.prompt for o in items}) == len(items)
        for o in items:
            exact = calc.answer(**o.params) / calc.scale
            assert objective.check(o, str(exact)) and not objective.check(o, str(exact * 1.1)), o.id


def test_the_kv_cache_formula_is_the_one_a_config_gives():
    calc = next(c for c in objective.calculators(SETTINGS.root) if c.id == "kv-cache-bytes")
    # Llama-2-7B: 32 layers, 32 KV heads, head_dim 128, FP16: 2 GiB per sequence of 4096 tokens
    assert calc.answer(layers=32, batch=1, kv_heads=32, head_dim=128, seq=4096, dtype="FP16") == 2 * 2**30


def test_a_calculator_that_does_not_fit_names_its_file(tmp_path):
    calc = tmp_path / "snippets" / "q" / "calc.py"
    calc.parent.mkdir(parents=True)
    calc.write_text("CALCULATORS = [{'id': 'x', 'question': 'q', 'colour': 'red'}]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="snippets/q/calc.py: CALCULATORS\\[0\\]"):
        objective.calculators(Path(tmp_path))
