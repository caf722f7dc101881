"""Evidence states are data (verify.core.states): a new kind of evidence is one row and its rule,
and the page, the ledger and the terminal show it with nothing else changed."""

from __future__ import annotations

import importlib
import re

import pytest

from tests._project import question_page, settings, tiny_project
from verify import settings as settings_mod
from verify.core import states
from verify.site import fences, session

SNIPPET = '''\
from verify.claim import claim

Q = "tiny"


@claim("tiny.tile", question=Q, statement="一个 128×128×64 的 fp16 tile 编译成 {n} 条 wgmma。", expect={"n": 4})
def _(ctx):
    return {"n": 4, "sass": "HGMMA.64x128x16.F32"}
'''
PAGE = question_page("```claim\ntiny.tile\n```\n\n它编译成 `#!v tiny.tile n` 条。\n")


@pytest.fixture
def compiled_kind():
    """A kind of evidence the project does not have yet: facts read from compiled code, not from a run on a GPU."""
    row = states.register(states.State("compiled-here", "已编译（为 sm_90a 编译，未在 GPU 上运行）", "已编译 · sm_90a",
                                       "ok", observed=True, ran="here", colour="cyan",
                                       rule=lambda record: "sass" in record.observed))
    yield row
    del states.STATES[row.key]


def test_a_new_kind_shows_on_the_page_in_the_ledger_and_in_the_terminal(compiled_kind, tmp_path, monkeypatch):
    root = tiny_project(tmp_path / "p", snippet=SNIPPET, page=PAGE)
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    assert sess.outcome.status("tiny.tile") == "compiled-here" and sess.failures == []

    html = fences.claim_fence("tiny.tile", "claim", "claim", {}, None)
    mark = re.search(r'<span class="vf-mark vf-ok" data-status="compiled-here" title="([^"]*)"[^>]*>([^<]*)</span>', html)
    assert mark and mark.group(2) == "已编译 · sm_90a" and mark.group(1).startswith("已编译（为 sm_90a 编译")
    value = re.search(r'data-claim="tiny.tile" data-key="n" data-status="compiled-here"[^>]*>4</span>(<sup[^>]*>)?', html)
    assert value and value.group(1) is None  # shown as observed: no note beside the value

    ledger = fences.ledger_fence("all", "ledger", "ledger", {}, None)
    assert '<option value="compiled-here">已编译（为 sm_90a 编译，未在 GPU 上运行）</option>' in ledger
    assert 'data-status="compiled-here"' in ledger
    assert {r.id: r.status for r in sess.ledger()}["tiny.tile"] == "compiled-here"

    from rich.console import Console  # noqa: PLC0415
    from typer.testing import CliRunner  # noqa: PLC0415

    main = importlib.import_module("verify.cli.main")  # the package exports a function of that name

    monkeypatch.setattr(main, "console", Console(force_terminal=True, color_system="standard", width=200))
    out = CliRunner().invoke(main.app, ["status", "--root", str(root)])
    assert out.exit_code == 0, out.output
    assert re.search(r"\x1b\[36mcompiled-here", out.output), out.output  # the row's colour: cyan


def test_every_state_has_words_and_a_tone_the_css_styles():
    css = (settings_mod.Settings.discover().docs_dir / "assets" / "verify.css").read_text(encoding="utf-8")
    for row in states.STATES.values():
        assert row.label and row.mark and f".vf-{row.tone}" in css, row
    with pytest.raises(ValueError, match="tone 'green'"):
        states.State("x", "x", "x", "green", True, "here", "green")
