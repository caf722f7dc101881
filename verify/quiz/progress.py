"""Terminal quiz progress: FSRS cards in SQLite under the user's data directory.

Card ids are derived from question (or drill) ids, so editing a page or reordering the bank keeps
each card's history. A database that SQLite cannot read is moved aside (never deleted) and a fresh
one is started, with a message saying where the old file went. A single row that cannot be read
(a hand-edited or truncated card) is skipped with a message; every other card and review is kept,
and the next review of that card writes a good row over it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import fsrs

APP = "verified-infra-interview"
RATINGS = {1: "重来 Again", 2: "困难 Hard", 3: "良好 Good", 4: "简单 Easy"}
STATE_NAMES = {0: "新卡", 1: "学习中", 2: "复习", 3: "重学"}  # as the browser quiz names them
_SCHEMA = """
CREATE TABLE IF NOT EXISTS cards (
    question_id TEXT PRIMARY KEY,
    card_id INTEGER NOT NULL,
    card_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    question_id TEXT NOT NULL,
    rating INTEGER NOT NULL,
    coverage REAL,
    seconds REAL,
    reviewed_at TEXT NOT NULL
);
"""


def data_dir() -> Path:
    """$XDG_DATA_HOME/verified-infra-interview, else ~/.local/share/verified-infra-interview."""
    from verify.settings import user_data_home  # noqa: PLC0415

    return user_data_home() / APP


def default_db() -> Path:
    return data_dir() / "quiz.sqlite3"


def card_id(question_id: str) -> int:
    """A stable positive 63-bit id from the question id."""
    return int.from_bytes(hashlib.sha256(question_id.encode()).digest()[:8], "big") >> 1


@dataclass
class Opened:
    store: Progress
    moved_aside: Path | None  # where a corrupted database went
    skipped: list[str] = field(default_factory=list)  # rows that could not be read, each with why


class Progress:
    """FSRS cards and review history for the terminal quiz."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path
        self.scheduler = fsrs.Scheduler(enable_fuzzing=False)

    @classmethod
    def open(cls, path: Path | None = None) -> Opened:
        path = Path(path) if path else default_db()
        path.parent.mkdir(parents=True, exist_ok=True)
        moved = None
        try:
            conn = cls._connect(path)
        except (sqlite3.DatabaseError, ValueError, KeyError):
            stamp = time.strftime("%Y%m%d-%H%M%S")
            moved = path.with_name(f"{path.name}.corrupt-{stamp}")
            n = 1
            while moved.exists():
                moved = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
                n += 1
            path.rename(moved)
            conn = cls._connect(path)
        store = cls(conn, path)
        return Opened(store, moved, store.unreadable())

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path)
        try:
            ok = conn.execute("PRAGMA integrity_check").fetchone()
            if not ok or ok[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {ok}")
            conn.executescript(_SCHEMA)
            conn.execute("SELECT question_id, card_json FROM cards LIMIT 1").fetchall()
            conn.commit()
        except Exception:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        self.conn.close()

    def unreadable(self) -> list[str]:
        """Rows that cannot be read, each as 'table id: why' (they are ignored, the rest is kept)."""
        out = []
        for qid, text in self.conn.execute("SELECT question_id, card_json FROM cards"):
            try:
                fsrs.Card.from_json(text)
            except (ValueError, KeyError, TypeError) as exc:
                out.append(f"cards {qid}: {type(exc).__name__}: {exc}"[:200])
        for rid, qid, rating, at in self.conn.execute("SELECT id, question_id, rating, reviewed_at FROM reviews"):
            if rating not in RATINGS or not _is_date(at):
                out.append(f"reviews #{rid} ({qid}): rating {rating!r}, time {at!r}"[:200])
        return out

    def card(self, question_id: str) -> fsrs.Card | None:
        row = self.conn.execute("SELECT card_json FROM cards WHERE question_id = ?", (question_id,)).fetchone()
        try:
            return fsrs.Card.from_json(row[0]) if row else None
        except (ValueError, KeyError, TypeError):
            return None  # reported by unreadable() when the store was opened

    def put_card(self, question_id: str, card: fsrs.Card) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO cards VALUES (?, ?, ?)", (question_id, card.card_id, card.to_json()))

    def ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT question_id FROM cards ORDER BY question_id")]

    def reviews(self, question_id: str | None = None) -> list[dict[str, object]]:
        """Readable reviews, oldest first: {id, rating, at, coverage, seconds}."""
        sql = "SELECT question_id, rating, coverage, seconds, reviewed_at FROM reviews"
        rows = self.conn.execute(sql + (" WHERE question_id = ?" if question_id else "") + " ORDER BY reviewed_at, id",
                                 (question_id,) if question_id else ()).fetchall()
        return [{"id": q, "rating": r, "at": at, "coverage": c, "seconds": s} for q, r, c, s, at in rows
                if r in RATINGS and _is_date(at)]

    def add_all(self, cards: dict[str, fsrs.Card], reviews: list[tuple[str, int, str, float | None, float | None]]
                ) -> int:
        """Cards and reviews made elsewhere, in one transaction (a failure leaves the store as it was).

        A review already here (same card, rating and time to the millisecond) is left out; returns
        how many reviews were added.
        """
        def key(qid: str, rating: int, at: object) -> tuple[str, int, str] | None:
            when = _parse(at)
            return (qid, rating, when.astimezone(timezone.utc).isoformat(timespec="milliseconds")) if when else None

        seen = {key(q, r, at) for q, r, at in self.conn.execute("SELECT question_id, rating, reviewed_at FROM reviews")}
        added = 0
        with self.conn:
            for qid, card in cards.items():
                self.conn.execute("INSERT OR REPLACE INTO cards VALUES (?, ?, ?)", (qid, card.card_id, card.to_json()))
            for qid, rating, at, coverage, seconds in reviews:
                k = key(qid, rating, at)
                if k is not None and k in seen:
                    continue
                seen.add(k)
                self.conn.execute("INSERT INTO reviews (question_id, rating, coverage, seconds, reviewed_at) "
                                  "VALUES (?, ?, ?, ?, ?)", (qid, rating, coverage, seconds, at))
                added += 1
        return added

    def review(self, question_id: str, rating: int, *, coverage: float | None = None,
               seconds: float | None = None, now: datetime | None = None) -> fsrs.Card:
        """Record a self-rating (1 Again .. 4 Easy) and return the rescheduled card."""
        now = now or datetime.now(timezone.utc)
        card = self.card(question_id) or fsrs.Card(card_id=card_id(question_id), due=now)
        card, _log = self.scheduler.review_card(card, fsrs.Rating(rating), review_datetime=now)
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO cards VALUES (?, ?, ?)",
                              (question_id, card.card_id, card.to_json()))
            self.conn.execute("INSERT INTO reviews (question_id, rating, coverage, seconds, reviewed_at) "
                              "VALUES (?, ?, ?, ?, ?)", (question_id, rating, coverage, seconds, now.isoformat()))
        return card

    def due(self, question_ids: list[str], now: datetime | None = None) -> list[str]:
        """Reviewed questions whose card is due now, most overdue first (new ones are not due)."""
        now = now or datetime.now(timezone.utc)
        out = []
        for qid in question_ids:
            card = self.card(qid)
            if card is not None and card.due <= now:
                out.append((card.due, qid))
        return [qid for _, qid in sorted(out)]

    def weakest(self, limit: int = 5) -> list[tuple[str, float, int]]:
        """(question id, mean coverage, reviews) with the lowest mean coverage."""
        rows = self.conn.execute(
            "SELECT question_id, AVG(coverage), COUNT(*) FROM reviews WHERE coverage IS NOT NULL "
            "GROUP BY question_id ORDER BY AVG(coverage) ASC LIMIT ?", (limit,)).fetchall()
        return [(q, float(c), int(n)) for q, c, n in rows]


def _parse(text: object) -> datetime | None:
    try:
        d = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=timezone.utc)


def _is_date(text: object) -> bool:
    return _parse(text) is not None
