"""The page check that a page never says its own ``contradicts`` statements (tests/_contradicts.py)."""

from __future__ import annotations

import pytest
import yaml

from tests import _quiz_samples as samples
from tests._contradicts import said
from verify.quiz.schema import KeyPoint

POINTS = [KeyPoint.of(kp) for kp in yaml.safe_load(samples.REPEAT_EXPAND_KEY_POINTS)]


def _said(text: str) -> list[str | None]:
    return [next((w for st in kp.contradicts if (w := said(st, text, kp))), None) for kp in POINTS]


def test_a_statement_said_is_found_with_its_words():
    assert _said("expand 其实会拷贝数据")[0] == "expand 其实会拷贝"
    assert _said("expand 会复制一份")[0] == "expand 会复制"  # 复制 is in the statements as well


@pytest.mark.parametrize("text", [
    "repeat 会拷贝，expand 不拷贝",  # the parts are in different clauses
    "expand 不会拷贝数据",  # a negation between the parts
    "view 并不要求 contiguous",
    "“view 要求 contiguous”是简化说法，真正的要求是 stride 兼容",  # quoted to be refuted
])
def test_no_statement_where_the_text_says_otherwise(text):
    assert _said(text) == [None] * len(POINTS), text


def test_every_fact_of_the_inverted_answer_is_found():
    assert all(_said(samples.INVERTED_ANSWER)), _said(samples.INVERTED_ANSWER)
    assert _said(samples.GOOD_ANSWER) == [None] * len(POINTS)


def test_a_statement_may_carry_its_own_negation():
    kp = KeyPoint.of({"point": "print 会断图", "keywords": ["断图"], "contradicts": ["print 不会 断图"]})
    assert said("print 不会 断图", "其实 print 不会断图", kp) == "print 不会断图"
    assert said("print 不会 断图", "print 会断图，控制流也会", kp) is None
