"""FSRS progress in SQLite: stable card ids, persistence, due cards, a corrupted file moved aside."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

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


def test_unreadable_card_row_counts_as_corruption(tmp_path):
    db = tmp_path / "p.sqlite3"
    Progress.open(db).store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO cards VALUES ('x', 1, 'not json')")
    conn.close()
    opened = Progress.open(db)
    assert opened.moved_aside is not None
    assert opened.store.card("x") is None
    opened.store.close()
