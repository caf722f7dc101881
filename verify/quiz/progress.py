"""Quiz progress: FSRS cards in SQLite under the user's data directory, and the progress file the
browser quiz exports and imports.

Card ids are derived from question (or drill) ids, so editing a page or reordering the bank keeps
each card's history. A database that SQLite cannot read is moved aside (never deleted) and a fresh
one is started, with a message saying where the old file went. A single row that cannot be read
(a hand-edited or truncated card) is skipped with a message; every other card and review is kept,
and the next review of that card writes a good row over it.

The progress file, one format for the browser and the terminal::

    {"version": 1,
     "cards": {"<question or drill id>": {"due": ISO, "stability": f, "difficulty": f, "elapsed_days": n,
               "scheduled_days": n, "learning_steps": n, "reps": n, "lapses": n, "state": 0..3,
               "last_review": ISO or null}},
     "log": [{"id": "...", "rating": 1..4, "at": ISO, "coverage": f?, "seconds": f?}]}

A card is ts-fsrs's (the browser's scheduler); py-fsrs (the terminal's) keeps the same memory
state (stability, difficulty, due, last review, state, learning step), so a card crosses either
way unchanged. Importing checks the file like the browser does, skips (and names) ids that are not
in the bank, adds the reviews that are not there yet, and takes a card from the file when its last
review is newer than the one here.
"""


from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import fsrs

from verify.core.records import JsonObject
from verify.storage.fs import DuplicateKey, unique_keys

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


# --- the progress file ----------------------------------------------------------------------

VERSION = 1
_NUMBERS = ("stability", "difficulty", "elapsed_days", "scheduled_days", "learning_steps", "reps", "lapses")
MAX_BYTES = 16 * 2**20  # a progress file of years of daily practice is well under 1 MiB
MAX_CARDS, MAX_REVIEWS = 20_000, 200_000
_EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _when(text: Any, ahead: timedelta) -> str | None:
    """Why ``text`` is not a date between 2000 and ``ahead`` from now, or None."""
    d = _date(text)
    if d is None:
        return "不是日期"
    try:
        ok = _EARLIEST <= d <= datetime.now(timezone.utc) + ahead
    except OverflowError:
        ok = False
    return None if ok else "不在 2000 年到现在之间（到期日可以晚一些，但不超过 100 年）"


_PAST, _FUTURE = timedelta(days=1), timedelta(days=36500)  # a review happened by now; a card falls due later


def validate(obj: Any) -> str | None:
    """Why ``obj`` is not a progress file, or None (the browser's rules, in the same words)."""
    if not isinstance(obj, dict):
        return "不是一个 JSON 对象"
    if obj.get("version") != VERSION:
        return f"version 必须是 {VERSION}"
    cards = obj.get("cards")
    if not isinstance(cards, dict):
        return "缺少 cards 对象"
    for cid, c in cards.items():
        where = f"cards.{cid}"
        if not isinstance(c, dict):
            return where + " 不是对象"
        if (why := _when(c.get("due"), _FUTURE)) is not None:
            return f"{where}.due {why}"
        if c.get("last_review") is not None and (why := _when(c.get("last_review"), _PAST)) is not None:
            return f"{where}.last_review {why}"
        for name in _NUMBERS:
            if not _number(c.get(name)):
                return f"{where}.{name} 不是非负数"
        if c.get("state") not in (0, 1, 2, 3):
            return where + ".state 必须是 0..3"
    log = obj.get("log")
    if not isinstance(log, list):
        return "缺少 log 数组"
    if len(cards) > MAX_CARDS or len(log) > MAX_REVIEWS:
        return f"卡片或自评太多（最多 {MAX_CARDS} 张卡片、{MAX_REVIEWS} 条自评）"
    for k, r in enumerate(log):
        if not isinstance(r, dict) or not isinstance(r.get("id"), str) or r.get("rating") not in (1, 2, 3, 4):
            return f"log[{k}] 格式不对"
        if (why := _when(r.get("at"), _PAST)) is not None:
            return f"log[{k}].at {why}"
        if r.get("coverage") is not None and not (_number(r["coverage"]) and r["coverage"] <= 1):
            return f"log[{k}].coverage 不是 0 到 1 之间的数"
        if r.get("seconds") is not None and not _number(r["seconds"]):
            return f"log[{k}].seconds 不是非负数"
    return None


class NotAProgressFile(ValueError):
    """Why a file is not a progress file, in the words the browser uses too."""


def read(raw: bytes) -> JsonObject:
    """The progress file in ``raw``, checked whole (the browser's ``QuizCore.readProgress``).

    :class:`NotAProgressFile` says why not: too large, not UTF-8, not JSON, a key twice in one
    object (``json`` would keep the later copy silently), or a field :func:`validate` refuses.
    """
    if len(raw) > MAX_BYTES:
        raise NotAProgressFile(f"文件有 {len(raw):,} 字节，进度文件最多 {MAX_BYTES:,} 字节")
    try:
        obj = json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys)
    except UnicodeDecodeError as exc:
        raise NotAProgressFile(f"文件不是 UTF-8 文本（第 {exc.start} 字节）") from None
    except DuplicateKey as exc:
        raise NotAProgressFile(f"键 {exc.key!r} 在同一个对象里出现了两次") from None
    except ValueError:
        raise NotAProgressFile("文件不是合法的 JSON") from None
    why = validate(obj)
    if why:
        raise NotAProgressFile(why)
    return obj


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
    return {"due": _iso(card.due), "stability": card.stability or 0.0, "difficulty": card.difficulty or 0.0,
            "elapsed_days": 0, "scheduled_days": max(0, math.floor(scheduled)),
            "learning_steps": card.step or 0, "reps": len(reviews), "lapses": lapses,
            "state": card.state.value, "last_review": _iso(card.last_review)}


def from_browser(item_id: str, c: JsonObject) -> fsrs.Card | None:
    """A browser card as the terminal's; None for a card never reviewed (state New)."""
    if c["state"] == 0:
        return None
    state = fsrs.State(c["state"])
    return fsrs.Card(card_id=card_id(item_id), state=state,
                     step=int(c["learning_steps"]) if state in (fsrs.State.Learning, fsrs.State.Relearning) else None,
                     stability=float(c["stability"]), difficulty=float(c["difficulty"]), due=_date(c["due"]),
                     last_review=_date(c.get("last_review")))


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


def import_into(store: Progress, obj: JsonObject, known: set[str]) -> Imported:
    """Merge a validated progress file into the store, in one transaction: all of it or nothing.

    Ids not in ``known`` are skipped and listed; a review already here (same card, rating and time
    to the millisecond, as the browser keeps it) is not added twice.
    """
    out = Imported()
    unknown: set[str] = set()
    cards: dict[str, fsrs.Card] = {}
    for item_id, c in obj["cards"].items():
        if item_id not in known:
            unknown.add(item_id)
            continue
        card = from_browser(item_id, c)
        if card is None:
            continue
        mine = store.card(item_id)
        if mine is None or (mine.last_review or mine.due) < (card.last_review or card.due):
            cards[item_id] = card
        else:
            out.kept += 1
    reviews = []
    for r in obj["log"]:
        if r["id"] not in known:
            unknown.add(r["id"])
            continue
        reviews.append((r["id"], r["rating"], _iso(_date(r["at"])) or r["at"], r.get("coverage"), r.get("seconds")))
    out.cards = len(cards)
    out.reviews = store.add_all(cards, reviews)
    out.unknown = sorted(unknown)
    return out
