"""The real site's practice material: drills answered by the ledger, and no placeholder anywhere.

Builds the checkout's site (warm when the claims are cached) and reads quiz.json, evidence.json,
the deck and the terminal's screens. Strictness of the build is test_site_real's business: this
test reads what the build wrote.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import zipfile
from pathlib import Path

import pexpect
import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from verify.quiz.deck import cards_of
from verify.quiz.schema import Bank
from verify.core import states

pytestmark = pytest.mark.slow
ROOT = SETTINGS.root
MIN_DRILLS = 40
_CODE = re.compile(r"```.*?```|`[^`\n]*`|<pre>.*?</pre>|<code>.*?</code>", re.S)
_MARKUP = re.compile(r"#!v |#!in |```(?:claim|bench|evidence|ledger|quizbank)\b")
_STATEMENT_KEY = re.compile(r"\{(?:=[^{}]+|[A-Za-z_][\w.\-]*(?::[^{}]*)?)\}")


@pytest.fixture(scope="module")
def site(real_site: Path) -> Path:
    """The real site as make site builds it: one build for the run (tests/conftest.py)."""
    return real_site


@pytest.fixture(scope="module")
def bank(site) -> dict:
    return json.loads((site / "quiz.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ledger(site) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads((site / "evidence.json").read_text(encoding="utf-8"))["claims"]}


def test_drills_are_answered_by_the_observed_values_in_the_ledger(bank, ledger):
    drills = bank["drills"]
    assert len(drills) >= MIN_DRILLS, len(drills)
    # "which is faster" drills all read a project helper they do not show (make_loader, compile_probe, ...),
    # so the real bank has none today; the sample site's is checked in test_quiz_drills
    assert {"value", "exception"} <= {d["format"] for d in drills} <= {"value", "exception", "faster"}
    for d in drills:
        row = ledger[d["claim"]]
        observed = row["observed"] if d["here"] else next(e["observed"] for e in row["elsewhere"]
                                                           if e["device"] == d["device"] and states.observed(e["status"]))
        if d["format"] == "exception":
            assert d["answer"] == observed["exception"].split(":")[0], d["id"]
        else:
            assert d["answer"] == observed[d["key"]], d["id"]
        if d["here"]:
            assert (d["device"], d["torch"]) == (row["device"], row["torch"]) and states.verified_here(row["status"]), d["id"]
        assert d["sentence"] == row["statement"] and d["question"] == row["question"], d["id"]
        assert "@claim" not in d["code"] and "expect=" not in d["code"], d["id"]  # the code does not give it away


def _unobserved(ledger: dict[str, dict]) -> list[str]:
    """Sentences of the ledger that show a value nobody observed (written there as —)."""
    return [r["statement"] for r in ledger.values() if r["statement"] != r["statement_source"] and "—" in r["statement"]
            and "—" not in r["statement_source"]]


def _no_placeholder(text: str, where: str, unobserved: list[str]) -> None:
    prose = _CODE.sub("", text)
    assert not _MARKUP.search(text), (where, _MARKUP.search(text))
    assert not _STATEMENT_KEY.search(prose), (where, _STATEMENT_KEY.search(prose))
    assert not [s for s in unobserved if s in text], (where, [s for s in unobserved if s in text])


def test_no_placeholder_in_any_answer_or_card(bank, ledger, site):
    unobserved = _unobserved(ledger)
    for cid, ev in bank["evidence"].items():
        assert ev["sentence"] == ledger[cid]["statement"] and ev["sentence"] not in unobserved, cid
    for q in bank["questions"]:
        for field in ("ordinary_answer", "better_answer", "ordinary_answer_html", "better_answer_html"):
            _no_placeholder(q[field], f"{q['id']}.{field}", unobserved)
        assert "点开" not in q["ordinary_answer"] + q["better_answer"], q["id"]  # the quiz has no markers to click
    cards = list(cards_of(Bank.from_json(bank)))
    assert len(cards) == sum(len(q["key_points"]) + len(q["follow_ups"]) for q in bank["questions"]) + len(bank["drills"])
    for card in cards:
        _no_placeholder(card.front_html + card.back_html, card.id, unobserved)
    with zipfile.ZipFile(site / "interview-quiz.apkg") as z:
        z.extract("collection.anki2", site.parent)
    notes = sqlite3.connect(site.parent / "collection.anki2").execute("SELECT flds FROM notes").fetchall()
    assert len(notes) == len(cards)
    for (fields,) in notes:
        _no_placeholder(fields, fields[:40], unobserved)


def test_no_placeholder_on_the_terminal_screens(bank, ledger, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIFY_")}
    env.update(XDG_DATA_HOME=str(tmp_path), NO_COLOR="1", TERM="dumb", COLUMNS="160")
    child = pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", "cards", "-n", str(len(bank["questions"]))],
                          env=env, cwd=str(ROOT), encoding="utf-8", timeout=120, dimensions=(60, 160))
    screens = []
    for _ in bank["questions"]:
        child.expect("想好后按回车翻面")
        child.sendline("")
        while child.expect([r"输入编号展开一节[^\n]*：", r"自评 \[[^\n]*: "]) == 0:
            screens.append(child.before)
            child.sendline("a" if "已折叠" in child.before else "")
        screens.append(child.before)
        child.sendline("3")
    child.expect(pexpect.EOF)
    screen = "".join(screens)
    assert "更好的回答" in screen and "图：" in screen  # a figure is a line that says where to see it
    _no_placeholder(screen, "terminal", _unobserved(ledger))
