"""Scope as data (issue 35): every claim's sentence carries a tag saying where its evidence ran.

A CPU run, a GPU run, a kernel compiled but not run, a simulator, published specs: the backend
comes from the claim's needs and its record; a model or shape family it fixed is declared in its
docstring (``范围：…``). The tag is rendered beside the sentence, so a CPU result in a GPU answer
shows as one.
"""

from __future__ import annotations

import re

import pytest

from tests._project import GOOD_SNIPPET, REPO, cold_cache, tiny_project
from verify import settings as settings_mod
from verify.core import scope
from verify.core.records import Evidence, Outcome
from verify.settings import Settings
from verify.site import fences, session
from verify.storage import scan

SCOPED = GOOD_SNIPPET + '''

@claim("tiny.scoped", question=Q, statement="专家的 all-to-all 字节与专家数无关。", expect={"same": True})
def _(ctx):
    """Bytes sent by one rank's dispatch for two expert counts.

    范围：Mixtral 8x7B 的专家形状，每 rank 不去重
    """
    return {"same": True}


@claim("tiny.gpu", question=Q, statement="GPU 上也一样。", expect={"same": True}, needs=("cuda",))
def _(ctx):
    return {"same": True}
'''


def _record(spec, note: dict | None) -> Evidence:
    return Evidence(spec.id, spec.question, spec.statement, spec.kind, spec.snippet, spec.line, "h", {}, spec.needs,
                    Outcome.PASS, "", observed={"evidence": note} if note else {})


def test_the_backend_comes_from_needs_and_how_the_record_was_made(tmp_path):
    reg = scan.load_registry(Settings.for_root(tiny_project(tmp_path / "p", snippet=SCOPED)))
    plain, gpu, scoped = reg.claims["tiny.stride"], reg.claims["tiny.gpu"], reg.claims["tiny.scoped"]
    assert scope.tag(plain) == "CPU" and scope.tag(gpu) == "GPU"
    assert scope.tag(scoped) == "CPU · Mixtral 8x7B 的专家形状，每 rank 不去重"
    assert "范围" not in scoped.pending and "two expert counts" in scoped.pending  # the scope is not the summary
    for kind, word in scope.MADE.items():
        assert scope.backend(plain, _record(plain, {"kind": kind, "targets": [], "tools": {}, "gpus": []})) == word


@pytest.mark.parametrize("need, word", [("nvcc", "编译"), ("numba", "模拟"), ("g++", "CPU")])
def test_a_claim_not_yet_run_is_tagged_by_what_it_needs(tmp_path, need, word):
    snippet = GOOD_SNIPPET + f'''

@claim("tiny.tool", question=Q, statement="x。", expect={{"ok": True}}, needs=("{need}",))
def _(ctx):
    return {{"ok": True}}
'''
    reg = scan.load_registry(Settings.for_root(tiny_project(tmp_path / "p", snippet=snippet)))
    assert scope.backend(reg.claims["tiny.tool"]) == word


def test_the_page_shows_the_tag_beside_the_sentence(tmp_path, monkeypatch):
    root = tiny_project(tmp_path / "p", snippet=SCOPED)
    settings = Settings.for_root(root, {"VERIFY_CACHE_DIR": str(cold_cache(tmp_path / "cache")), "VERIFY_NO_RUN": "1"})
    monkeypatch.setattr(settings_mod, "_site", settings)
    session.get()
    for cid, tag in [("tiny.stride", "CPU"), ("tiny.scoped", "CPU · Mixtral 8x7B 的专家形状，每 rank 不去重"),
                     ("tiny.gpu", "GPU")]:
        html = fences.claim_fence(cid, "claim", "claim", {}, None)
        summary = html.split("<summary>", 1)[1].split("</summary>", 1)[0]
        assert re.search(r'<span class="vf-stmt">.*</span><span class="vf-scope"[^>]*>' + re.escape(tag) + "</span>",
                         summary), summary


def test_every_real_claim_has_a_tag_and_every_declared_scope_is_short():
    reg = scan.load_registry(Settings.for_root(REPO))
    tags = {cid: scope.tag(spec) for cid, spec in reg.claims.items()}
    assert all(tags.values())
    assert set(scope.backend(spec) for spec in reg.claims.values()) <= {"CPU", "GPU", "编译", "模拟", "规格"}
    long = [cid for cid, spec in reg.claims.items() if len(spec.scope) > 40]
    assert not long, f"a scope tag is a few words, not a sentence: {long}"
