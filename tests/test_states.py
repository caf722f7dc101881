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


@claim("tiny.tile", question=Q, statement="一个 128×128×64 的 fp16 tile 编译成 {n} 条 wgmma。", expect={"n": 8})
def _(ctx):
    # what a helper of snippets/_gpu writes: the kind, the architecture, the tool
    ctx.observe(evidence={"kind": "compiled", "targets": ["sm_90a"], "tools": {"triton": "3.9.0"}, "gpus": []})
    return {"n": 8}
'''
PAGE = question_page("```claim\ntiny.tile\n```\n\n它编译成 `#!v tiny.tile n` 条。\n")


def test_a_kind_of_evidence_shows_on_the_page_in_the_ledger_and_in_the_terminal(tmp_path, monkeypatch):
    """Compiled for a GPU architecture, not run on a GPU: its own row, marker and words everywhere."""
    root = tiny_project(tmp_path / "p", snippet=SNIPPET, page=PAGE)
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    assert sess.outcome.status("tiny.tile") == "compiled-here" and sess.failures == []

    html = fences.claim_fence("tiny.tile", "claim", "claim", {}, None)
    mark = re.search(r'<span class="vf-mark vf-derived" data-status="compiled-here" title="([^"]*)"[^>]*>([^<]*)</span>', html)
    assert mark and mark.group(2) == "已编译 · sm_90a · triton 3.9.0", html
    assert mark.group(1).startswith("构建机（") and "：已编译：为 GPU 架构编译" in mark.group(1)  # the machine, its words
    assert "没有在 GPU 上运行" in mark.group(1)
    value = re.search(r'data-claim="tiny.tile" data-key="n" data-status="compiled-here"[^>]*>8</span>(<sup[^>]*>)?', html)
    assert value and value.group(1) is None  # shown as observed: no note beside the value

    ledger = fences.ledger_fence("all", "ledger", "ledger", {}, None)
    assert f'<option value="compiled-here">{states.get("compiled-here").label}</option>' in ledger
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


NEEDS_TOOL = '''\
from verify.claim import claim

Q = "tiny"


@claim("tiny.sass", question=Q, statement="这个 kernel 在 sm_90a 上有 {n} 条 SHFL。", expect={"n": 5}, needs=["nvcc"])
def _(ctx):
    return {"n": 5}
'''


def test_a_claim_whose_tool_is_missing_shows_what_it_needs_never_a_failure(tmp_path, monkeypatch):
    root = tiny_project(tmp_path / "p", snippet=NEEDS_TOOL, page=question_page("```claim\ntiny.sass\n```\n"))
    monkeypatch.setenv("VERIFY_GPU_TOOLS", str(tmp_path / "no-tools"))
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    assert sess.outcome.status("tiny.sass") == "needs-tool" and sess.failures == []
    html = fences.claim_fence("tiny.sass", "claim", "claim", {}, None)
    assert re.search(r'data-status="needs-tool" title="构建机（[^"）]*）：需要 GPU 工具链[^"]*"[^>]*>需要 nvcc</span>', html), html
