"""The disk memo of the project's caches: hits, misses, atomic writes, corrupt entries, and pruning."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from verify.storage import fs


@pytest.fixture(autouse=True)
def _new_build():
    """Each test starts a build of its own: what earlier tests used is forgotten."""
    fs.prune([])
    yield
    fs.prune([])


def _counting(value: str):
    calls: list[str] = []

    def compute() -> str:
        calls.append(value)
        return value

    return compute, calls


def _age(path: Path, seconds: float = 3600) -> None:
    """Make ``path`` look written ``seconds`` ago (file-system clocks are coarser than two calls apart)."""
    then = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(then, then))


def test_a_miss_computes_and_writes_a_hit_reads_it_back(tmp_path):
    memo = fs.text_memo(tmp_path / "render", ".html")
    compute, calls = _counting("<p>one</p>")
    assert memo.get("k", compute) == "<p>one</p>"
    assert (tmp_path / "render" / "k.html").read_text(encoding="utf-8") == "<p>one</p>"
    assert fs.text_memo(tmp_path / "render", ".html").get("k", compute) == "<p>one</p>"
    assert calls == ["<p>one</p>"]  # computed once, then read from disk by another memo of the folder


def test_a_json_memo_keeps_its_files_as_dumps_writes_them_and_asks_valid(tmp_path):
    memo = fs.json_memo(tmp_path)
    assert memo.get("probe", lambda: {"fingerprint": "a", "n": 1}) == {"fingerprint": "a", "n": 1}
    assert (tmp_path / "probe.json").read_text(encoding="utf-8") == fs.dumps({"fingerprint": "a", "n": 1})
    fresh = memo.get("probe", lambda: {"fingerprint": "b"}, valid=lambda v: v.get("fingerprint") == "b")
    assert fresh == {"fingerprint": "b"} and json.loads((tmp_path / "probe.json").read_text()) == fresh


def test_writes_are_atomic_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    memo = fs.text_memo(tmp_path, ".svg")
    memo.put("plot", "old")

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(fs.os, "replace", crash)
    with pytest.raises(OSError):
        memo.put("plot", "new")
    assert memo.peek("plot") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot.svg"]


def test_a_cache_that_cannot_be_written_still_gives_the_value(tmp_path, monkeypatch, caplog):
    def refuse(path, text):
        raise PermissionError(13, "read-only", str(path))

    monkeypatch.setattr(fs, "atomic_write_text", refuse)
    compute, calls = _counting("v")
    with caplog.at_level("INFO", logger="mkdocs.verify"):
        assert fs.text_memo(tmp_path, ".html").get("k", compute) == "v"
        assert fs.text_memo(tmp_path, ".html").get("k", compute) == "v"
    assert calls == ["v", "v"] and "cannot write" in caplog.text


@pytest.mark.parametrize("raw", [b"{ not json", b"\xff\xfe not utf-8"])
def test_a_corrupt_entry_is_reported_and_computed_again(tmp_path, caplog, raw):
    path = tmp_path / "k.json"
    path.write_bytes(raw)
    with caplog.at_level("INFO", logger="mkdocs.verify"):
        assert fs.json_memo(tmp_path).get("k", lambda: {"ok": True}) == {"ok": True}
    assert json.loads(path.read_text(encoding="utf-8")) == {"ok": True}  # replaced by a good entry
    assert str(path) in caplog.text and ("corrupt" in caplog.text or "cannot read" in caplog.text)


def test_prune_deletes_only_what_this_build_did_not_use(tmp_path):
    folder = tmp_path / "render"
    memo = fs.text_memo(folder, ".html")
    for key in ("used", "kept", "stale"):
        memo.put(key, key)
    (folder / "sub").mkdir()
    (folder / "sub" / "x.html").write_text("other folder")
    for path in folder.glob("*.html"):
        _age(path)
    fs.prune([])  # the build that wrote them has ended

    assert memo.get("used", lambda: "recomputed") == "used"  # the next build: a hit
    memo.keep("kept")  # its user had it already (a hit of its own cache)
    memo.get("new", lambda: "new")  # a miss, written now
    (folder / "another-build.html").write_text("made by a build that started after this one")
    assert fs.prune([folder]) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["another-build.html", "kept.html", "new.html", "sub",
                                                        "used.html"]
    assert (folder / "sub" / "x.html").exists()  # only the folder's own files


def test_prune_deletes_everything_old_in_a_folder_the_build_did_not_use_and_nothing_without_a_build(tmp_path):
    used, unused = tmp_path / "render", tmp_path / "bench_svg"
    fs.text_memo(unused, ".svg").put("old", "<svg/>")
    _age(unused / "old.svg")
    fs.prune([])
    assert fs.prune([unused]) == 0 and (unused / "old.svg").exists()  # no memo was used: no build to judge by
    fs.text_memo(used, ".html").get("page", lambda: "<p/>")
    assert fs.prune([used, unused]) == 1
    assert not (unused / "old.svg").exists() and (used / "page.html").exists()


def test_a_memo_file_keeps_many_entries_in_one_file(tmp_path):
    path = tmp_path / "scan.json"
    memo = fs.MemoFile(path, 3, "files")
    assert memo.get("a", lambda: {"sha": "1"}) == {"sha": "1"}
    memo.get("b", lambda: {"sha": "2"})
    memo.save()
    assert json.loads(path.read_text()) == {"format": 3, "files": {"a": {"sha": "1"}, "b": {"sha": "2"}}}

    again = fs.MemoFile(path, 3, "files")
    compute, calls = _counting("unused")
    assert again.get("a", compute, valid=lambda e: e["sha"] == "1") == {"sha": "1"} and calls == []
    assert again.get("b", lambda: {"sha": "3"}, valid=lambda e: e["sha"] == "3") == {"sha": "3"}  # invalid: anew
    before = path.stat().st_mtime_ns
    fs.MemoFile(path, 3, "files").save()
    assert path.stat().st_mtime_ns == before  # nothing changed: not written
    again.save(prune=True)  # every entry was used: both stay
    assert json.loads(path.read_text())["files"] == {"a": {"sha": "1"}, "b": {"sha": "3"}}

    third = fs.MemoFile(path, 3, "files")
    third.get("a", compute)
    third.save(prune=True)  # "b" was not used: dropped
    assert json.loads(path.read_text())["files"] == {"a": {"sha": "1"}}


@pytest.mark.parametrize("text", ["{ broken", '{"format": 2, "files": {"a": 1}}', '{"format": 3, "files": []}', "[]"])
def test_a_memo_file_that_is_corrupt_or_of_another_format_starts_empty(tmp_path, text):
    path = tmp_path / "scan.json"
    path.write_text(text)
    memo = fs.MemoFile(path, 3, "files")
    assert memo.entries == {}
    assert memo.get("a", lambda: {"sha": "1"}) == {"sha": "1"}
    memo.save()
    assert json.loads(path.read_text()) == {"format": 3, "files": {"a": {"sha": "1"}}}


def test_empty_folder_keeps_only_what_it_is_told(tmp_path):
    for rel in ("evidence/env/a.json", "evidence/env/failed/b.json", "render/code/c.html", "scan.json", "run.lock"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert fs.empty_folder(tmp_path, {"run.lock"}) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["run.lock"]
    assert fs.empty_folder(tmp_path / "missing") == 0
