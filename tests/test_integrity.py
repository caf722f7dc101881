"""The promise: every number a reader reads comes from a run, and no verdict can be forged.

Each test here fails on a site that types its numbers beside the claims or trusts stored verdicts.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from tests._project import GOOD_SNIPPET, PAGE, file_as_device, mkdocs_build, question_page, settings, tiny_project
from verify import settings as settings_mod
from verify.core import evidence
from verify.running import engine, record
from verify.site import session

pytestmark = pytest.mark.slow

BOUND_SNIPPET = '''\
import torch
from verify.claim import claim

Q = "tiny"


@claim("tiny.bytes", question=Q, statement="`x` 的存储共 {nbytes:bytes}。", expect={"nbytes": 24})
def _(ctx):
    x = torch.arange(3)
    return {"nbytes": x.untyped_storage().nbytes()}
'''

BOUND_PAGE = question_page("""\
三个 int64 一共 `#!v tiny.bytes nbytes` 字节。

```claim
tiny.bytes
```
""")


def _bound(root) -> dict[tuple[str, str], list[str]]:
    html = (root / "site/questions/tiny/index.html").read_text(encoding="utf-8")
    out: dict[tuple[str, str], list[str]] = {}
    for m in re.finditer(r'<span class="vf-val[^"]*" data-claim="([^"]+)" data-key="([^"]+)"[^>]*>([^<]*)</span>', html):
        out.setdefault((m.group(1), m.group(2)), []).append(m.group(3))
    return out


def test_a_bound_number_is_what_the_run_observed_and_follows_it(tmp_path):
    root = tiny_project(tmp_path, snippet=BOUND_SNIPPET, page=BOUND_PAGE)
    out = mkdocs_build(root)
    assert out.returncode == 0, out.stderr
    assert _bound(root) == {("tiny.bytes", "nbytes"): ["24", "24 字节"]}
    # one text per claim: the quiz and the ledger read the same sentence, its value filled in
    quiz = json.loads((root / "site/quiz.json").read_text(encoding="utf-8"))
    assert "`x` 的存储共 24 字节。" in quiz["questions"][0]["better_answer"] or \
        "x 的存储共 24 字节。" in quiz["questions"][0]["better_answer"]
    ledger = json.loads((root / "site/evidence.json").read_text(encoding="utf-8"))
    assert ledger["claims"][0]["statement"] == "`x` 的存储共 24 字节。"

    # the snippet now observes a different tensor: the sentence changes with it, nobody retypes it
    snippet = root / "snippets/tiny/basic.py"
    snippet.write_text(BOUND_SNIPPET.replace("torch.arange(3)", "torch.arange(6)").replace('{"nbytes": 24}', '{"nbytes": 48}'))
    out = mkdocs_build(root)
    assert out.returncode == 0, out.stderr
    assert _bound(root) == {("tiny.bytes", "nbytes"): ["48", "48 字节"]}


def test_a_hand_typed_measurement_fails_the_strict_build_naming_file_and_line(tmp_path):
    page = BOUND_PAGE.replace("`#!v tiny.bytes nbytes` 字节", "24 字节")
    root = tiny_project(tmp_path, snippet=BOUND_SNIPPET, page=page)
    out = mkdocs_build(root)
    assert out.returncode != 0
    line = page.splitlines().index("三个 int64 一共 24 字节。") + 1
    assert f"docs/questions/tiny.md:{line}" in out.stderr and "hand-typed measurement '24 字节'" in out.stderr


def test_a_hand_typed_measurement_or_an_unreadable_reference_in_a_statement_fails(tmp_path):
    """Both would reach the reader as typed: a number no run made, or braces the page cannot fill."""
    snippet = BOUND_SNIPPET.replace("{nbytes:bytes}", "24 字节，{shape[0]} 个")
    root = tiny_project(tmp_path, snippet=snippet, page=BOUND_PAGE)
    out = mkdocs_build(root)
    assert out.returncode != 0 and "hand-typed measurement '24 字节' in the statement" in out.stderr
    assert "{shape[0]} in the statement is not a reference the page can fill" in out.stderr


def test_a_reference_to_an_unknown_claim_or_key_fails(tmp_path):
    page = BOUND_PAGE.replace("`#!v tiny.bytes nbytes`", "`#!v tiny.bytes nbites` `#!v tiny.nope n`")
    root = tiny_project(tmp_path, snippet=BOUND_SNIPPET, page=page)
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "key 'nbites' was not observed" in out.stderr
    assert "no snippet declares claim 'tiny.nope'" in out.stderr


def test_a_claim_fence_inside_a_comment_is_an_error(tmp_path):
    page = PAGE + "\n<!--\n```claim\ntiny.stride\n```\n-->\n"
    root = tiny_project(tmp_path, page=page)
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "a claim fence inside an HTML comment" in out.stderr


def test_a_claim_on_another_questions_page_or_no_page_is_an_error(tmp_path):
    snippet = GOOD_SNIPPET.replace('Q = "tiny"', 'Q = "tinny"')
    root = tiny_project(tmp_path, snippet=snippet)
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "question='tinny' names no page" in out.stderr


def _record_elsewhere(root, key: str = "cuda-test-gpu"):
    path, out = record.record(settings(root), jobs=1)
    assert out.failures == []
    return file_as_device(path, key)


def test_a_recorded_pass_with_contradicting_values_is_not_verified(tmp_path, monkeypatch):
    root = tiny_project(tmp_path)
    path = _record_elsewhere(root)
    data = json.loads(path.read_text())
    data["claims"]["tiny.stride"]["observed"] = {"stride": [3, 1]}  # still says "pass"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    sess = session.get()
    assert sess.remote_statuses("tiny.stride") == {"cuda-test-gpu": evidence.FAILED}
    assert any(f.where == "evidence/cuda-test-gpu.json" and "expected == [0, 1]" in f.message for f in sess.failures)


def test_a_recorded_failure_fails_the_strict_build(tmp_path):
    root = tiny_project(tmp_path)
    path = _record_elsewhere(root)
    data = json.loads(path.read_text())
    data["claims"]["tiny.stride"].update(outcome="fail", message="stride was [1, 1]", observed={"stride": [1, 1]})
    path.write_text(json.dumps(data))
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "tiny.stride (evidence/cuda-test-gpu.json)" in out.stderr


def test_a_same_size_edit_with_its_mtime_restored_runs_again(tmp_path):
    root = tiny_project(tmp_path)
    first = engine.verify(settings(root))
    assert first.failures == [] and set(first.ran) == {"tiny.stride", "tiny.error"}
    snippet = root / "snippets/tiny/basic.py"
    st = snippet.stat()
    text = snippet.read_text()
    edited = text.replace("expect={\"stride\": [0, 1]}", "expect={\"stride\": [0, 2]}")
    assert len(edited) == len(text)
    snippet.write_text(edited)
    os.utime(snippet, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = engine.verify(settings(root))
    assert "tiny.stride" in second.ran
    assert [f.claim for f in second.failures] == ["tiny.stride"]


FORGER = GOOD_SNIPPET + '''

@claim("tiny.forger", question=Q, statement="伪造别人的证据。", expect={"done": True})
def _(ctx):
    import glob, json, pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    for path in glob.glob(str(root / ".cache" / "evidence" / "*" / "tiny.stride.json")):
        data = json.loads(pathlib.Path(path).read_text())
        data["observed"] = {"stride": [0, 1], "forged": True}
        pathlib.Path(path).write_text(json.dumps(data))
    (root / "docs" / "questions" / "tiny.md").open("a").write("\\n伪造的一句话。\\n")
    pathlib.Path("relative.txt").write_text("lands in the scratch folder")
    return {"done": True}
'''


def test_a_claim_writing_into_the_cache_cannot_change_another_claims_evidence(tmp_path):
    page = PAGE + "\n```claim\ntiny.forger\n```\n"
    root = tiny_project(tmp_path, snippet=FORGER, page=page)
    first = engine.verify(settings(root), select=lambda s: s.id != "tiny.forger")
    assert first.failures == [] and "tiny.stride" in first.ran
    out = engine.verify(settings(root), jobs=1)  # only the forger runs: the others are cached
    assert out.ran == ["tiny.forger"] and out.local["tiny.stride"].observed == {"stride": [0, 1]}
    assert any("a claim changed the project cache" in f.message and "tiny.stride.json" in f.message for f in out.failures)
    assert not (root / "relative.txt").exists()  # a relative path is the worker's scratch folder, not the root
    # the forged file is gone: the next verification runs the claim again instead of trusting it
    again = engine.verify(settings(root), select=lambda s: s.id == "tiny.stride")
    assert "tiny.stride" in again.ran and again.local["tiny.stride"].observed == {"stride": [0, 1]}


BUILDER = '''from verify.claim import claim


@claim("tiny.builder", question="tiny", statement="编译一次，存进构建缓存。", expect={"done": True})
def _(ctx):
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    for folder in ("cxx", "judge-gpu"):
        (root / ".cache" / folder / "k").mkdir(parents=True, exist_ok=True)
        (root / ".cache" / folder / "k" / "a.out").write_text("built")
    return {"done": True}
'''


def test_a_claim_may_fill_the_build_caches_and_they_are_kept(tmp_path):
    """The g++ builder's cxx/ and the judge's GPU section are compiler caches, like inductor/: a claim that fills
    them is not a claim tampering with the cache, and what it built stays for the next run."""
    page = PAGE + "\n```claim\ntiny.builder\n```\n"
    root = tiny_project(tmp_path, snippet=BUILDER, page=page)
    out = engine.verify(settings(root), jobs=1, select=lambda s: s.id == "tiny.builder")
    assert out.failures == [] and "tiny.builder" in out.ran
    assert (root / ".cache" / "cxx" / "k" / "a.out").read_text() == "built"
    assert (root / ".cache" / "judge-gpu" / "k" / "a.out").read_text() == "built"
