"""Quiz progress: FSRS cards in SQLite under the user's data directory, and the progress file the
browser quiz exports and imports.

Card ids are derived from question (or drill) ids, so editing a page or reordering the bank keeps
each card's history. A database that SQLite cannot read is moved aside (never deleted) and a fresh
one is started, with a message saying where the old file went. A single row that cannot be read
(a hand-edited or truncated card) is skipped with a message; every other card and review is kept,
and the next review of that card writes a good row over it.

The progress file, one format for the browser and the terminal, is declared and read in
:mod:`verify.quiz.progress_file`. A card is ts-fsrs's (the browser's scheduler); py-fsrs (the
terminal's) keeps the same memory state (stability, difficulty, due, last review, state, learning
step), so a card crosses either way unchanged. Importing skips (and names) ids that are not in the
bank, adds the reviews that are not there yet, and takes a card from the file when its last review
is newer than the one here. A rating and an import hold the store's advisory lock (``.<db>.lock``)
around their read-modify-write.
"""


from __future__ import annotations

import hashlib
import math
import sqlite3
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import fsrs

from verify.core.records import JsonObject
from verify.storage.fs import locked
from verify.quiz.progress_file import (DIFFICULTY, MAX_BYTES, MAX_DAYS, STABILITY, VERSION, Card, NotAProgressFile,
                                       ProgressFile, read, read_path, validate)

__all__ = ["MAX_BYTES", "VERSION", "NotAProgressFile", "Progress", "ProgressFile", "export", "import_into", "read",
           "read_path", "validate"]

APP = "verified-infra-interview"
RATINGS = {1: "重来", 2: "困难", 3: "良好", 4: "简单"}  # FSRS Again, Hard, Good, Easy
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

    def locked(self) -> AbstractContextManager[None]:
        """The store's advisory lock (``.<db>.lock`` beside it), held around every read-modify-write."""
        return locked(self.path)

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
            when = _date(at)
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
        # the advisory lock from the card's read to the commit: two quiz processes rating one card cannot both
        # read the old card and leave one review out of it; the time is taken inside, so the log's order is the card's
        with self.locked(), self.conn:
            now = now or datetime.now(timezone.utc)
            card = self.card(question_id) or fsrs.Card(card_id=card_id(question_id), due=now)
            card, _log = self.scheduler.review_card(card, fsrs.Rating(rating), review_datetime=now)
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


def _date(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=timezone.utc)


def _is_date(text: object) -> bool:
    return _date(text) is not None


# --- the progress file (its schema and reader: verify.quiz.progress_file) ---------------------

def _clamped(value: float | None, span: tuple[float, float]) -> float:
    """A memory value within the file's range (py-fsrs leaves stability unbounded above; ts-fsrs clamps it)."""
    return min(max(value or span[0], span[0]), span[1])


def _iso(d: datetime | None) -> str | None:
    return d.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z") if d else None


def to_browser(card: fsrs.Card, reviews: list[JsonObject]) -> JsonObject:
    """A terminal card in the browser's shape; reps and lapses counted from its reviews (as the file's log keeps them)."""
    lapses, state = 0, None
    replay = fsrs.Scheduler(enable_fuzzing=False)
    probe = fsrs.Card(card_id=card.card_id, due=_date(reviews[0]["at"]) if reviews else card.due)
    for r in reviews:
        state = probe.state
        lapses += int(r["rating"] == 1 and state == fsrs.State.Review)
        probe, _ = replay.review_card(probe, fsrs.Rating(r["rating"]), review_datetime=_date(r["at"]))
    scheduled = (card.due - card.last_review).total_seconds() / 86400 if card.last_review else 0
    return {"due": _iso(card.due), "stability": _clamped(card.stability, STABILITY),
            "difficulty": _clamped(card.difficulty, DIFFICULTY),
            "elapsed_days": 0, "scheduled_days": min(max(0, math.floor(scheduled)), MAX_DAYS),
            "learning_steps": card.step or 0, "reps": len(reviews), "lapses": lapses,
            "state": card.state.value, "last_review": _iso(card.last_review)}


def from_browser(item_id: str, c: Card) -> fsrs.Card:
    """A browser card as the terminal's (a file holds reviewed cards only: learning, review or relearning)."""
    state = fsrs.State(int(c.state))
    return fsrs.Card(card_id=card_id(item_id), state=state,
                     step=int(c.learning_steps) if state in (fsrs.State.Learning, fsrs.State.Relearning) else None,
                     stability=c.stability, difficulty=c.difficulty, due=_date(c.due), last_review=_date(c.last_review))


def export(store: Progress, known: set[str] | None = None) -> JsonObject:
    """The store as a progress file (only ids in ``known``, when given)."""
    cards, log = {}, []
    for item_id in store.ids():
        card = store.card(item_id)
        if card is None or (known is not None and item_id not in known):
            continue
        reviews = store.reviews(item_id)
        cards[item_id] = to_browser(card, reviews)
        log += [{k: (_iso(_date(v)) if k == "at" else v) for k, v in r.items() if v is not None} for r in reviews]
    log.sort(key=lambda r: (str(r["at"]), str(r["id"])))
    return {"version": VERSION, "cards": cards, "log": log}


@dataclass
class Imported:
    cards: int = 0  # cards taken from the file
    reviews: int = 0  # reviews added
    kept: int = 0  # cards of the file older than the ones here
    unknown: list[str] = field(default_factory=list)  # ids the bank does not have, skipped


def import_into(store: Progress, file: ProgressFile, known: set[str]) -> Imported:
    """Merge a progress file (read by :func:`read`) into the store, in one transaction: all of it or nothing.

    Ids not in ``known`` are skipped and listed; a review already here (same card, rating and time
    to the millisecond, as the browser keeps it) is not added twice. The store's lock is held from
    the first card read to the commit, so a rating in another process waits rather than interleaves.
    """
    out = Imported()
    unknown: set[str] = set()
    cards: dict[str, fsrs.Card] = {}
    with store.locked():
        for item_id, c in file.cards.items():
            if item_id not in known:
                unknown.add(item_id)
                continue
            card = from_browser(item_id, c)
            mine = store.card(item_id)
            if mine is None or (mine.last_review or mine.due) < (card.last_review or card.due):
                cards[item_id] = card
            else:
                out.kept += 1
        reviews = []
        for r in file.log:
            if r.id not in known:
                unknown.add(r.id)
                continue
            reviews.append((r.id, int(r.rating), _iso(_date(r.at)) or r.at, r.coverage, r.seconds))
        out.cards = len(cards)
        out.reviews = store.add_all(cards, reviews)
    out.unknown = sorted(unknown)
    return out
