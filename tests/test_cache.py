"""The evidence cache: hits, targeted re-runs, corruption, and no lost evidence."""

from __future__ import annotations

import json

from tests._project import settings, write
from verify.storage import cache
from verify.running import engine

SNIP = ("from verify.claim import claim\nQ = 'c'\n"
        "@claim('{cid}', question=Q, statement='s', expect={{'x': {value}}})\ndef _(ctx):\n    return {{'x': 1}}\n")


def _project(tmp_path):
    return write(tmp_path, {"snippets/c/a.py": SNIP.format(cid="c.a", value=1),
                            "snippets/c/b.py": SNIP.format(cid="c.b", value=1)})


def test_second_run_is_served_from_cache(tmp_path):
    root = _project(tmp_path)
    first = engine.verify(settings(root), jobs=1)
    assert sorted(first.ran) == ["c.a", "c.b"]
    second = engine.verify(settings(root), jobs=1)
    assert second.ran == [] and second.local["c.a"] == first.local["c.a"]


def test_editing_one_snippet_reruns_only_its_claims(tmp_path):
    root = _project(tmp_path)
    engine.verify(settings(root), jobs=1)
    (root / "snippets/c/b.py").write_text(SNIP.format(cid="c.b", value=1) + "N = 2\n")
    assert engine.verify(settings(root), jobs=1).ran == ["c.b"]


def test_editing_a_sentence_an_expectation_or_a_comment_reruns_nothing(tmp_path):
    root = _project(tmp_path)
    engine.verify(settings(root), jobs=1)
    edited = (SNIP.format(cid="c.b", value="{'>=': 1}").replace("statement='s'", "statement='x 是 {x}'")
              + "# a comment\n")
    (root / "snippets/c/b.py").write_text(edited)
    again = engine.verify(settings(root), jobs=1)
    assert again.ran == [] and again.local["c.b"].outcome == "pass"
    assert again.local["c.b"].expected == {"x": {">=": 1}} and again.sentence("c.b") == "x 是 1"
    # an expectation the cached observation no longer meets is judged false, and the claim runs again
    (root / "snippets/c/b.py").write_text(SNIP.format(cid="c.b", value=2))
    third = engine.verify(settings(root), jobs=1)
    assert third.ran == ["c.b"] and third.local["c.b"].outcome == "fail"


def test_corrupt_entry_is_ignored_and_run_again(tmp_path, caplog):
    root = _project(tmp_path)
    first = engine.verify(settings(root), jobs=1)
    entry = cache.EvidenceCache(settings(root).cache_dir, first.probe).path("c.a")
    entry.write_text("{ not json")
    with caplog.at_level("INFO", logger="mkdocs.verify"):
        again = engine.verify(settings(root), jobs=1)
    assert again.ran == ["c.a"] and again.local["c.a"].outcome == "pass"
    assert any(str(entry) in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
    assert json.loads(entry.read_text())["outcome"] == "pass"  # replaced by a good entry


def test_a_failing_run_does_not_lose_cached_evidence(tmp_path):
    root = _project(tmp_path)
    first = engine.verify(settings(root), jobs=1)
    (root / "snippets/c/a.py").write_text(SNIP.format(cid="c.a", value=2))  # now false
    second = engine.verify(settings(root), jobs=1)
    assert second.local["c.a"].outcome == "fail"
    assert second.local["c.b"] == first.local["c.b"]
    # the old passing entry is still on disk (under the old hash: not used, not lost)
    path = cache.EvidenceCache(settings(root).cache_dir, first.probe).path("c.a")
    assert json.loads(path.read_text())["snippet_hash"] == first.local["c.a"].snippet_hash
    (root / "snippets/c/a.py").write_text(SNIP.format(cid="c.a", value=1))
    assert engine.verify(settings(root), jobs=1).ran == []  # back to the old source: served from cache again


def test_clear_removes_selected_or_all_entries(tmp_path):
    root = _project(tmp_path)
    engine.verify(settings(root), jobs=1)
    assert cache.clear(settings(root).cache_dir, ["c.a"]) == 1
    assert engine.verify(settings(root), jobs=1).ran == ["c.a"]
    assert cache.clear(settings(root).cache_dir) == 2
