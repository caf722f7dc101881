"""One progress format for the browser and the terminal: the file the browser quiz exports.

::

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

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import fsrs

from verify.quiz.progress import Progress, card_id
from verify.storage.fs import DuplicateKey, unique_keys

VERSION = 1
_NUMBERS = ("stability", "difficulty", "elapsed_days", "scheduled_days", "learning_steps", "reps", "lapses")
MAX_BYTES = 16 * 2**20  # a progress file of years of daily practice is well under 1 MiB
MAX_CARDS, MAX_REVIEWS = 20_000, 200_000
_EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _date(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=timezone.utc)


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


def read(raw: bytes) -> dict[str, Any]:
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


def to_browser(card: fsrs.Card, reviews: list[dict[str, Any]]) -> dict[str, Any]:
    """A terminal card in the browser's shape; reps and lapses counted from its reviews."""
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


def from_browser(item_id: str, c: dict[str, Any]) -> fsrs.Card | None:
    """A browser card as the terminal's; None for a card never reviewed (state New)."""
    if c["state"] == 0:
        return None
    state = fsrs.State(c["state"])
    return fsrs.Card(card_id=card_id(item_id), state=state,
                     step=int(c["learning_steps"]) if state in (fsrs.State.Learning, fsrs.State.Relearning) else None,
                     stability=float(c["stability"]), difficulty=float(c["difficulty"]), due=_date(c["due"]),
                     last_review=_date(c.get("last_review")))


def export(store: Progress, known: set[str] | None = None) -> dict[str, Any]:
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


def import_into(store: Progress, obj: dict[str, Any], known: set[str]) -> Imported:
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
