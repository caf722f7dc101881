"""How a drill is drawn in the terminal: long code lines wrap, so the asked expression is never cut;
the reveal says whether the prediction was right."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from verify.quiz import tui
from verify.quiz.schema import Drill

ASKED = "len(inside) == 2 and inside[0] == inside[1]"
LONG = ("import torch\n\ninside = [torch.ones(1).data_ptr(), torch.ones(1).data_ptr()]\n"
        f'return {{"first_key_that_pushes_the_line_wide": len(inside), "same_inside": {ASKED}}}')


@pytest.fixture
def screen(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(tui, "console", Console(file=out, width=80, color_system=None, highlight=False))
    return out


def drill() -> Drill:
    return Drill(format="value", answer=True, key="same_inside", expr=ASKED, code=LONG, title="t", snippet="snippets/t.py",
                 line=3, prompt=f"运行这段代码，`{ASKED}` 是什么？", answer_text="True", device="AMD EPYC", torch="2.13.0",
                 sentence="一句话。", url="questions/t/")


def test_a_line_wider_than_the_terminal_wraps_and_keeps_the_asked_expression(screen):
    assert max(len(line) for line in LONG.splitlines()) > 80
    tui.show_drill(1, 1, drill())
    text = screen.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    inside = "".join(line.strip(" │") for line in text.splitlines() if line.startswith("│"))  # the code's panel
    assert re.sub(r"\s", "", ASKED) in re.sub(r"\s", "", inside)
    assert "first_key_that_pushes_the_line_wide" in re.sub(r"\s", "", inside)


@pytest.mark.parametrize("right, said", [(True, "✓ 预测对了"), (False, "✗ 预测错了")])
def test_the_reveal_says_whether_the_prediction_was_right(screen, right, said):
    tui.reveal_drill(drill(), right)
    assert screen.getvalue().splitlines()[0] == said
