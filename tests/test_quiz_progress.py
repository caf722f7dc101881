"""FSRS progress in SQLite: stable card ids, persistence, due cards, a corrupted file moved aside."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from verify.quiz import progress
from verify.quiz.progress import Progress, card_id, data_dir


def test_card_id_stable_and_distinct():
    assert card_id("repeat-vs-expand") == card_id("repeat-vs-expand")
    assert card_id("repeat-vs-expand") != card_id("graph-fusion")
    assert 0 < card_id("x") < 2**63


def test_data_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_dir() == tmp_path / "verified-infra-interview"


def test_review_persists_and_schedules(tmp_path):
    db = tmp_path / "p.sqlite3"
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    store = Progress.open(db).store
    again = store.review("a", 1, coverage=0.2, now=now)
    easy = store.review("b", 4, coverage=0.9, now=now)
    assert again.card_id == card_id("a")
    assert again.due < easy.due  # Again comes back sooner than Easy
    store.close()
    store = Progress.open(db).store
    assert store.card("a").due == again.due
    assert store.due(["a", "b", "c"], now=now + timedelta(hours=1)) == ["a"]  # c is new: not due
    assert store.due(["a", "b"], now=now + timedelta(days=365)) == ["a", "b"]
    assert store.weakest()[0][0] == "a"
    store.close()


def test_corrupted_database_moved_aside(tmp_path):
    db = tmp_path / "p.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    opened = Progress.open(db)
    assert opened.moved_aside is not None and opened.moved_aside.exists()
    assert opened.moved_aside.read_bytes().startswith(b"this is not")
    opened.store.review("a", 3)
    opened.store.close()
    assert Progress.open(db).moved_aside is None


def test_an_unreadable_row_is_skipped_and_the_rest_kept(tmp_path):
    db = tmp_path / "p.sqlite3"
    store = Progress.open(db).store
    good = store.review("good", 3, coverage=0.8)
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO cards VALUES ('x', 1, 'not json')")
        conn.execute("INSERT INTO reviews (question_id, rating, reviewed_at) VALUES ('x', 9, 'yesterday')")
    conn.close()
    opened = Progress.open(db)
    assert opened.moved_aside is None
    assert len(opened.skipped) == 2 and opened.skipped[0].startswith("cards x:") and "reviews" in opened.skipped[1]
    store = opened.store
    assert store.card("x") is None
    assert store.card("good").due == good.due and [r["id"] for r in store.reviews()] == ["good"]
    store.review("x", 4)  # the next review writes a good row over the bad one
    store.close()
    assert len(Progress.open(db).skipped) == 1  # only the bad review row is left


# --- one progress format: the browser's export ---------------------------------------------------

from tests._progress_files import BROWSER_EXPORT, HOSTILE  # noqa: E402


def _read(data: dict) -> progress.ProgressFile:
    return progress.read(json.dumps(data).encode())


def test_a_browser_export_imports_and_unknown_ids_are_skipped(tmp_path):
    assert progress.validate(BROWSER_EXPORT) is None
    store = Progress.open(tmp_path / "p.sqlite3").store
    done = progress.import_into(store, _read(BROWSER_EXPORT), {"expand-demo", "compile-demo"})
    assert (done.cards, done.reviews, done.unknown) == (1, 1, ["<img src=x onerror=alert(1)>"])
    card = store.card("expand-demo")
    assert card.stability == 2.3065 and card.step == 1 and card.due == datetime(2026, 1, 1, 0, 10, tzinfo=timezone.utc)
    assert store.reviews() == [{"id": "expand-demo", "rating": 3, "at": "2026-01-01T00:00:00.000Z", "coverage": 0.5,
                                "seconds": 31}]
    again = progress.import_into(store, _read(BROWSER_EXPORT), {"expand-demo"})
    assert (again.cards, again.reviews, again.kept) == (0, 0, 1)  # nothing twice
    # and back: the terminal's export is a file the browser reads, with the same card and review
    out = progress.export(store)
    assert progress.validate(out) is None
    assert out["cards"]["expand-demo"]["stability"] == 2.3065 and out["cards"]["expand-demo"]["due"] == "2026-01-01T00:10:00.000Z"
    assert out["log"] == [BROWSER_EXPORT["log"][0]]
    store.close()


@pytest.mark.parametrize("mutate, why", [
    (lambda d: d.update(version=2), "version 2"),
    (lambda d: d["cards"]["expand-demo"].update(due="soon"), "due"),
    (lambda d: d["cards"]["expand-demo"].update(reps=-1), "reps"),
    (lambda d: d["log"].append({"id": "x", "rating": 7, "at": "2026-01-01T00:00:00Z"}), "log[2]"),
])
def test_a_bad_file_is_refused_naming_what_is_wrong(mutate, why):
    import copy  # noqa: PLC0415

    bad = copy.deepcopy(BROWSER_EXPORT)
    mutate(bad)
    assert why in progress.validate(bad)


# --- hostile progress files: refused whole, nothing already recorded changes -----------------------

@pytest.mark.parametrize("mutate, why", [
    (lambda d: d["cards"]["expand-demo"].update(due="9999-12-31T00:00:00.000Z"), "cards.expand-demo.due 不在"),
    (lambda d: d["cards"]["expand-demo"].update(last_review="0001-01-01T00:00:00+05:00"), "last_review 不在"),
    (lambda d: d["log"][0].update(at="9999-01-01T00:00:00Z"), "log[0].at 不在"),
    (lambda d: d["log"][0].update(coverage="<img src=x>"), "log[0].coverage"),
    (lambda d: d["log"][0].update(coverage=3), "log[0].coverage"),
    (lambda d: d["log"][0].update(seconds="12"), "log[0].seconds"),
])
def test_out_of_range_dates_and_non_numbers_are_refused(mutate, why):
    import copy  # noqa: PLC0415

    bad = copy.deepcopy(BROWSER_EXPORT)
    mutate(bad)
    assert why in progress.validate(bad)


def _import(tmp_path, text: str, db):
    from typer.testing import CliRunner  # noqa: PLC0415

    from verify.cli.quiz import quiz_app  # noqa: PLC0415
    from tests._quiz_samples import write_sample_docs  # noqa: PLC0415

    write_sample_docs(tmp_path / "docs")
    (tmp_path / "in.json").write_text(text, encoding="utf-8")
    return CliRunner().invoke(quiz_app, ["import", str(tmp_path / "in.json"), "--db", str(db),
                                         "--root", str(tmp_path)])


def test_a_key_given_twice_or_a_file_too_large_is_refused_and_nothing_changes(tmp_path):
    db = tmp_path / "p.sqlite3"
    store = Progress.open(db).store
    store.review("expand-demo", 3)
    before = store.reviews()
    store.close()
    twice = json.dumps(BROWSER_EXPORT).replace('"version": 1', '"version": 1, "version": 1', 1)
    result = _import(tmp_path, twice, db)
    assert result.exit_code == 2 and "'version'" in result.output and "现有进度未改动" in result.output
    huge = json.dumps(BROWSER_EXPORT) + " " * (progress.MAX_BYTES + 1)
    result = _import(tmp_path, huge, db)
    assert result.exit_code == 2 and "最多" in result.output
    store = Progress.open(db).store
    assert store.reviews() == before
    store.close()


def test_an_import_is_one_transaction_and_deduplicates_in_one_pass(tmp_path, monkeypatch):
    import copy  # noqa: PLC0415

    store = Progress.open(tmp_path / "p.sqlite3").store
    big = copy.deepcopy(BROWSER_EXPORT)
    big["log"] = [{"id": "expand-demo", "rating": 3, "at": f"2026-01-01T00:{m // 60:02d}:{m % 60:02d}.000Z"}
                  for m in range(3000)] * 2  # every review twice
    assert progress.validate(big) is None
    done = progress.import_into(store, _read(big), {"expand-demo"})
    assert done.reviews == 3000 and len(store.reviews()) == 3000

    # a failure half way leaves the store as it was: cards and reviews together or not at all
    again = copy.deepcopy(big)
    again["log"] = [{"id": "expand-demo", "rating": 4, "at": "2026-02-01T00:00:00.000Z"}, {"id": "expand-demo",
                    "rating": 4, "at": "2026-02-01T00:00:01.000Z"}]
    again["cards"]["expand-demo"]["last_review"] = "2026-02-01T00:00:00.000Z"
    real = store.conn.execute
    calls = {"n": 0}

    class Flaky:
        def __init__(self, conn):
            self._conn = conn

        def execute(self, sql, *args):
            if sql.startswith("INSERT INTO reviews"):
                calls["n"] += 1
                if calls["n"] == 2:
                    raise RuntimeError("disk full")
            return real(sql, *args)

        def __getattr__(self, name):
            return getattr(self._conn, name)

        def __enter__(self):
            return self._conn.__enter__()

        def __exit__(self, *exc):
            return self._conn.__exit__(*exc)

    card_before = store.card("expand-demo")
    monkeypatch.setattr(store, "conn", Flaky(store.conn))
    with pytest.raises(RuntimeError, match="disk full"):
        progress.import_into(store, _read(again), {"expand-demo"})
    monkeypatch.undo()
    assert len(store.reviews()) == 3000 and store.card("expand-demo") == card_before
    store.close()


@pytest.mark.parametrize("text, why", [(t, w) for _, t, w in HOSTILE], ids=[n for n, _, _ in HOSTILE])
def test_the_terminal_refuses_each_hostile_file_as_the_browser_does(text, why):
    """The same cases and words as test_quiz_browser.py::test_the_browser_refuses_each_hostile_file."""

    with pytest.raises(progress.NotAProgressFile, match=re.escape(why)):
        progress.read(text.encode())
    with pytest.raises(progress.NotAProgressFile, match="进度文件最多"):
        progress.read(b" " * (progress.MAX_BYTES + 1))
    with pytest.raises(progress.NotAProgressFile, match="不是 UTF-8"):
        progress.read(b'{"version": 1\xff}')
