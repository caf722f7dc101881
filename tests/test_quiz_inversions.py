"""Inverted answers on the real pages get no 说到了 suggestion; answers that make the point get it."""

from __future__ import annotations

import pytest

from tests._inversions import INVERSIONS, RIGHT
from tests._project import REPO_SETTINGS as SETTINGS
from verify.quiz.bank import build_bank
from verify.quiz.scoring import suggest


@pytest.fixture(scope="module")
def bank():
    return build_bank(SETTINGS.docs_dir, html=False)


def test_the_set_is_large_and_wide():
    assert len(INVERSIONS) >= 40 and len({q for q, _, _ in INVERSIONS}) >= 8


@pytest.mark.parametrize("qid, index, answer", INVERSIONS, ids=[f"{q}-{i}-{n}" for n, (q, i, _) in enumerate(INVERSIONS)])
def test_an_inversion_is_never_suggested_as_said(bank, qid, index, answer):
    points = bank.question(qid).key_points
    got = suggest(answer, points)[index]
    assert got.mark != "said", (points[index].point, answer)


@pytest.mark.parametrize("qid, index, answer", RIGHT, ids=[f"{q}-{i}" for q, i, _ in RIGHT])
def test_an_answer_that_makes_the_point_is_suggested_as_said(bank, qid, index, answer):
    points = bank.question(qid).key_points
    assert suggest(answer, points)[index].mark == "said", (points[index].point, answer)
