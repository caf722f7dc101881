"""Evidence recorded on another machine: shown beside local evidence, stale once the snippet changes."""

from __future__ import annotations

import json

import pytest

from tests._project import GOOD_SNIPPET, file_as_device, settings, tiny_project
from verify import settings as settings_mod
from verify.core import evidence
from verify.running import record
from verify.site import fences, session
from verify.errors import ClaimError


def _as_other_machine(root, key: str = "cuda-test-gpu") -> None:
    """Record here, then file the record under another device key, as a committed GPU file would be."""
    path, out = record.record(settings(root), jobs=1)
    assert out.failures == []
    data = json.loads(path.read_text())
    assert data["machine"]["torch"] and set(data["claims"]) == {"tiny.stride", "tiny.error"}
    file_as_device(path, key)


def test_recorded_evidence_is_verified_elsewhere_then_stale_after_an_edit(tmp_path, monkeypatch):
    root = tiny_project(tmp_path)
    _as_other_machine(root)
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    assert sess.remote_statuses("tiny.stride") == {"cuda-test-gpu": evidence.VERIFIED_ELSEWHERE}
    row = {r.id: r for r in sess.ledger()}["tiny.stride"]
    assert row.elsewhere[0].status == evidence.VERIFIED_ELSEWHERE and row.elsewhere[0].observed

    (root / "snippets/tiny/basic.py").write_text(GOOD_SNIPPET + "\n# a comment added since the recording\n")
    sess = session.get()  # a change to a snippet starts a fresh session
    assert sess.remote_statuses("tiny.stride") == {"cuda-test-gpu": evidence.VERIFIED_ELSEWHERE}  # not measuring code
    (root / "snippets/tiny/basic.py").write_text(GOOD_SNIPPET + "\nEXTRA = 1  # code changed since the recording\n")
    sess = session.get()
    assert sess.remote_statuses("tiny.stride") == {"cuda-test-gpu": evidence.STALE}
    html = fences.claim_fence("tiny.stride", "claim", "claim", {}, None)
    assert 'data-status="stale"' in html and 'data-status="verified-here"' in html


def test_a_broken_recorded_file_is_a_clear_error_naming_it(tmp_path, monkeypatch):
    root = tiny_project(tmp_path)
    (root / "evidence").mkdir()
    (root / "evidence/cuda-x.json").write_text("[1, 2")
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    with pytest.raises(ClaimError, match=r"evidence/cuda-x.json: not a recorded-evidence file"):
        session.get()


def test_record_keeps_claims_it_did_not_run(tmp_path):
    root = tiny_project(tmp_path)
    path, _ = record.record(settings(root), jobs=1)
    data = json.loads(path.read_text())
    data["claims"]["old.claim"] = {**data["claims"]["tiny.stride"], "id": "old.claim"}  # a claim since removed
    path.write_text(json.dumps(data))
    path, _ = record.record(settings(root), jobs=1)
    assert "old.claim" in json.loads(path.read_text())["claims"]


def test_a_snippet_with_a_syntax_error_shows_the_error_not_an_unknown_claim(tmp_path, monkeypatch):
    root = tiny_project(tmp_path, snippet=GOOD_SNIPPET.replace("def _(ctx):\n    return {", "def _(ctx:\n    return {", 1))
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    html = fences.claim_fence("tiny.stride", "claim", "claim", {}, None)
    assert "snippet 无法载入" in html and "snippets/tiny/basic.py" in html and "syntax error at line" in html
    assert "未知论断" not in html
    assert "未知论断" in fences.claim_fence("tiny.nowhere", "claim", "claim", {}, None)  # named by no file at all
