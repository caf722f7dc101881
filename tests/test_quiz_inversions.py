"""Inverted answers on the real pages: the terminal pre-selects no mark, and shows the sentence as only that."""

from __future__ import annotations

import builtins
import re

import pytest

from tests._inversions import INVERSIONS
from tests._project import REPO_SETTINGS as SETTINGS
from verify.quiz import tui
from verify.quiz.bank import build_bank
from verify.quiz.scoring import FIND_RULES, MARKS, rating, sentences, shared, words

IDS = [f"{q}-{i}-{n}" for n, (q, i, _) in enumerate(INVERSIONS)]


@pytest.fixture(scope="module")
def bank():
    return build_bank(SETTINGS.docs_dir, html=False)


def test_the_set_is_large_and_wide(bank):
    assert len(INVERSIONS) >= 40 and len({q for q, _, _ in INVERSIONS}) >= 15
    assert all(0 <= i < len(bank.question(q).key_points) for q, i, _ in INVERSIONS)


def assess(answer: str, key_points, typed: list[str], monkeypatch) -> tuple[list[str], list[str], str]:
    """Run the terminal's marking on ``answer``, typing ``typed`` in turn: (marks, prompts, screen)."""
    prompts: list[str] = []
    replies = iter(typed)

    def fake_input(prompt: str = "") -> str:
        prompts.append(prompt)
        return next(replies)

    monkeypatch.setattr(builtins, "input", fake_input)
    with tui.console.capture() as cap:
        marks = tui.assess(answer, key_points)
    return marks, prompts, cap.get()


@pytest.mark.parametrize("qid, index, answer", INVERSIONS, ids=IDS)
def test_no_mark_is_pre_selected_in_the_terminal(bank, monkeypatch, qid, index, answer):
    points = bank.question(qid).key_points
    keys = list(MARKS)
    chosen = [keys[(index + k) % 3] for k in range(len(points))]
    # at each point Enter first: nothing is taken for it, the point is asked again; then the candidate's mark
    typed = [x for m in chosen for x in ("", str(keys.index(m) + 1))]
    marks, prompts, screen = assess(answer, points, typed, monkeypatch)
    assert marks == chosen  # what the candidate typed, and only that
    assert len(prompts) == 2 * len(points)
    assert all("回车" not in p and all(w in p for w in MARKS.values()) for p in prompts), prompts[0]
    assert screen.count("请输入 1、2 或 3。") == len(points)
    assert FIND_RULES["why"] in screen.replace("\n", "")


@pytest.mark.parametrize("qid, index, answer", INVERSIONS, ids=IDS)
def test_the_inverted_sentence_is_shown_under_its_point_as_a_sentence_with_its_words(bank, monkeypatch, qid, index, answer):
    points = bank.question(qid).key_points
    found = shared(answer, points[index])
    assert found and all(s in sentences(answer) for s, _ in found), (points[index].point, answer)
    _marks, _prompts, screen = assess(answer, points, ["2"] * len(points), monkeypatch)
    flat = re.sub(r"\s+", "", screen)
    block = flat.split(f"[{index + 1}]", 1)[1].split(f"[{index + 2}]", 1)[0]  # this point's lines
    assert FIND_RULES["label"] + "：" in block
    for sentence, said in found:
        assert "「" + re.sub(r"\s+", "", sentence) + "」（含" + "、".join(re.sub(r"\s+", "", w) for w in said) + "）" in block
    ours = flat
    for text in [kp.point for kp in points] + sentences(answer) + sorted({w for kp in points for w in words(kp)}, key=len, reverse=True):
        ours = ours.replace(re.sub(r"\s+", "", text), "")  # the machine's own words
    for judged in ("✓", "✗", "匹配", "命中", "预选"):
        assert judged not in ours


def test_the_rating_comes_from_the_marks_alone(bank, monkeypatch):
    """The same marks on a right answer, its inversion and nothing at all give the same marks and rating."""
    qid, index, inverted = next(x for x in INVERSIONS if x[0] == "repeat-vs-expand" and x[1] == 4)
    points = bank.question(qid).key_points
    right = "expand 只改 stride，是 O(1) 的；repeat 要拷贝数据，是 O(n) 的。"
    for typed in (["1"] * len(points), ["3"] + ["1"] * (len(points) - 1), ["1", "2"] * (len(points) // 2) + ["1"] * (len(points) % 2)):
        got = {answer: assess(answer, points, typed, monkeypatch)[0] for answer in (right, inverted, "")}
        assert len({tuple(m) for m in got.values()}) == 1, got
        marks = got[right]
        assert {rating(m) for m in got.values()} == {rating(marks)}
    assert rating(["said"] * 3) == 4 and rating(["said", "wrong", "said"]) == 1
