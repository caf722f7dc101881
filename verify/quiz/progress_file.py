"""The progress file's one schema, read at the edge; the browser's reader gets the same rules from it.

The browser quiz exports its FSRS cards and review log as this file and imports it back, and so do
``verify quiz export/import``. It comes from other machines and careless hands, so it is declared
here once, as :mod:`msgspec` types, and nothing else decides what a progress file may hold:

- every field has a type and bounds: FSRS's own ranges for a card's memory (stability 0.001 to
  36,500 days, difficulty 1 to 10; a card of stability 0 made every rating crash), whole numbers
  for counts, a rating 1 to 4, coverage 0 to 1; no field is free-form, so the nesting is bounded by
  the shape (3 levels) and a deeper value is refused at the first field that is not its declared shape;
- every string and collection has a cap, and the file a byte cap counted while it is read
  (:func:`verify.storage.edge.read_bytes`: a FIFO or ``/dev/zero`` is refused, not read);
- a date is one format, ISO 8601 with a time zone, as both writers write it
  (``2026-01-01T08:00:00.000Z``), and in range: a review by now, a card due within 100 years;
- a review names a card the file has: a log without its card would be imported and then dropped
  by the next export, so the file is refused instead, saying how many reviews have no card;
- ``version`` newer than :data:`VERSION` is refused as a newer format, before anything else.

:func:`browser_rules` is the same schema as JSON Schema plus the few rules JSON Schema cannot say
(the date window, the version); the quiz page carries it in its bank, and ``quiz-core.js`` checks a
file against it with the same words as :func:`schema_reason` here. The Chinese words of every refusal are
made in :func:`schema_reason`, from msgspec's message, and in ``quiz-core.js``, from the same rule.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from verify.storage import edge

VERSION = 1
MAX_BYTES = 16 * 2**20  # a progress file of years of daily practice is well under 1 MiB
MAX_CARDS, MAX_REVIEWS = 20_000, 100_000  # 100,000 reviews: 50 a day for more than five years
MAX_ID = 300  # question ids are short; a drill's id names its claim
STABILITY = (0.001, 36_500.0)  # ts-fsrs' S_MIN and S_MAX; py-fsrs' STABILITY_MIN is the same floor
DIFFICULTY = (1.0, 10.0)  # both schedulers clamp difficulty to this range
MAX_DAYS = 2 * 36_500
MAX_SECONDS = 366 * 86_400.0  # time spent on one answer: finite, and well past any real session
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
AHEAD_DAYS = {"review": 1, "due": 36_500}  # a review happened by now (a day for clocks); a card falls due later
#: ISO 8601 with a time zone, ASCII digits only, fields in range (the day of the month is checked on reading).
DATE = (r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
        r"(?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$")
DATE_EXAMPLE = "2026-01-01T08:00:00.000Z"


Id = Annotated[str, Meta(min_length=1, max_length=MAX_ID)]
Due = Annotated[str, Meta(pattern=DATE, extra_json_schema={"x-ahead": "due"})]
When = Annotated[str, Meta(pattern=DATE, extra_json_schema={"x-ahead": "review"})]
# Whole numbers are floats that are a multiple of 1: ``1`` and ``1.0`` alike, as the browser's JSON.parse
# cannot tell them apart.
Days = Annotated[float, Meta(ge=0, le=MAX_DAYS, multiple_of=1)]
Count = Annotated[float, Meta(ge=0, le=MAX_REVIEWS, multiple_of=1)]
Steps = Annotated[float, Meta(ge=0, le=100, multiple_of=1)]
State = Annotated[float, Meta(ge=1, le=3, multiple_of=1)]  # learning, review, relearning: reviewed cards only
Rating = Annotated[float, Meta(ge=1, le=4, multiple_of=1)]
Version = Annotated[float, Meta(ge=1, le=VERSION, multiple_of=1)]


def _out_of_range(field: str, text: str | None, ahead: str) -> str | None:
    """``"<field> why"`` when the date ``text`` is not a calendar date within its window, else None."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:  # the pattern holds, the calendar does not: 2026-02-30
        return f"{field} 不是日期"
    latest = datetime.now(timezone.utc) + timedelta(days=AHEAD_DAYS[ahead])
    try:
        if EARLIEST <= when <= latest:
            return None
    except OverflowError:  # 9999-12-31T23:59:59-05:00 is past the year 9999 in UTC
        pass
    return f"{field} 不在 2000 年到现在之间（到期日可以晚一些，但不超过 100 年）"


class Card(Struct, forbid_unknown_fields=True):
    """A card as ts-fsrs keeps it (the browser's scheduler); py-fsrs keeps the same memory state."""

    due: Due
    stability: Annotated[float, Meta(ge=STABILITY[0], le=STABILITY[1])]
    difficulty: Annotated[float, Meta(ge=DIFFICULTY[0], le=DIFFICULTY[1])]
    elapsed_days: Days
    scheduled_days: Days
    learning_steps: Steps
    reps: Count
    lapses: Count
    state: State
    last_review: When | None = None

    def __post_init__(self) -> None:
        why = _out_of_range("due", self.due, "due") or _out_of_range("last_review", self.last_review, "review")
        if why:
            raise ValueError(why)


class Review(Struct, forbid_unknown_fields=True):
    id: Id
    rating: Rating
    at: When
    coverage: Annotated[float, Meta(ge=0, le=1)] | None = None
    seconds: Annotated[float, Meta(ge=0, le=MAX_SECONDS)] | None = None
    correct: bool | None = None  # a drill or objective item: whether the answer was right

    def __post_init__(self) -> None:
        why = _out_of_range("at", self.at, "review")
        if why:
            raise ValueError(why)


class ProgressFile(Struct, forbid_unknown_fields=True):
    version: Version
    cards: Annotated[dict[Id, Card], Meta(max_length=MAX_CARDS)]
    log: Annotated[list[Review], Meta(max_length=MAX_REVIEWS)]

    def __post_init__(self) -> None:
        orphans = [r.id for r in self.log if r.id not in self.cards]
        if orphans:
            raise ValueError(orphan_reason(len(orphans), orphans[0]))


def orphan_reason(count: int, first: str) -> str:
    return f"log 里有 {count} 条自评没有对应的卡片（如 「{first}」），导入后也导不出来：cards 里应有它们的卡片"


class _Version(Struct):
    version: Annotated[float, Meta(ge=1, multiple_of=1)]


class NotAProgressFile(ValueError):
    """Why a file is not a progress file, in the words the browser uses too."""


# --- reading ------------------------------------------------------------------------------------

def read_path(path: Path) -> ProgressFile:
    """The progress file at ``path``: a regular file of at most :data:`MAX_BYTES`, read as :class:`ProgressFile`.

    ``FileNotFoundError`` passes through; everything else wrong is :class:`NotAProgressFile`.
    """
    try:
        data = edge.read_bytes(Path(path), _REL, MAX_BYTES)
    except edge.FileRefused as exc:
        raise NotAProgressFile(_file_reason(str(exc))) from None
    return read(data)


def read(data: bytes) -> ProgressFile:
    """``data`` as a progress file, checked whole (the browser's ``QuizCore.readProgress``)."""
    if len(data) > MAX_BYTES:
        raise NotAProgressFile(f"文件有 {len(data):,} 字节，进度文件最多 {MAX_BYTES:,} 字节")
    newer = _newer(data)
    if newer is not None:
        raise NotAProgressFile(newer_reason(newer))
    try:
        return edge.decode(data, ProgressFile, _REL)
    except edge.FileRefused as exc:
        raise NotAProgressFile(_reason(data, str(exc))) from None


def newer_reason(version: float) -> str:
    return f"这是更新的格式（version {_num(version)}），这里只读得懂 version {VERSION}：请先更新本项目"


def _newer(data: bytes) -> float | None:
    """The file's ``version`` when it is a whole number newer than :data:`VERSION` (a newer format is named
    as such before any field it may have added is refused as unknown)."""
    try:
        version = msgspec.json.decode(data, type=_Version, strict=True).version
    except (msgspec.MsgspecError, RecursionError):
        return None  # the whole read names what is wrong
    return version if version > VERSION else None


def validate(obj: Any) -> str | None:
    """Why the JSON value ``obj`` is not a progress file, or None."""
    try:
        read(msgspec.json.encode(obj))
    except NotAProgressFile as exc:
        return str(exc)
    return None


# --- the words of a refusal ------------------------------------------------------------------------
# edge refuses; the words are made here from msgspec's own message for the same data (its format is
# msgspec's, "Expected `float` >= 0.001 - at `$.cards[...].stability`"), and quiz-core.js makes the same.

_REL = "progress"
_TYPES = {"int": "整数", "float": "数", "str": "字符串", "object": "对象", "array": "数组", "bool": "布尔值",
          "null": "空值 null"}
_SCHEMA_WORDS = [  # msgspec's message -> the quiz's words after the place
    (re.compile(r"Expected `([^`]+)`, got `([^`]+)`"),
     lambda m: f" 应为{'或'.join(_TYPES.get(t, t) for t in m[1].split(' | '))}，不是{_TYPES.get(m[2], m[2])}"),
    (re.compile(r"Expected `\w+` that's a multiple of .*"), lambda m: " 应为整数"),
    (re.compile(r"Expected `\w+` (>=|>|<=|<) (\S+)"),
     lambda m: f" 应 {dict([('>=', '≥'), ('<=', '≤')]).get(m[1], m[1])} {_num(float(m[2]))}"),
    (re.compile(r"Expected `str` matching regex .*", re.S), lambda m: f" 不是带时区的 ISO 8601 时间（如 {DATE_EXAMPLE}）"),
    (re.compile(r"Expected `str` of length >= \d+"), lambda m: " 不能为空"),
    (re.compile(r"Expected `str` of length <= (\d+)"), lambda m: f" 太长（最多 {m[1]} 个字符）"),
    (re.compile(r"Expected `(?:array|object)` of length <= (\d+)"), lambda m: f" 太多（最多 {m[1]} 项）"),
    (re.compile(r"Object missing required field `(.+)`"), lambda m: f" 缺少字段 {m[1]}"),
    (re.compile(r"Object contains unknown field `(.+)`", re.S), lambda m: f" 有未知字段 {m[1]}"),
    (re.compile(r"Number out of range"), lambda m: " 超出数的范围"),
]
_AT = re.compile(r"(?P<what>.*) - at `(?P<where>[^`]*)`(?: in `(?P<map>[^`]*)`)?", re.S)
_FILE_WORDS = [  # edge's refusal of the file itself -> the quiz's words
    (re.compile(r"larger than ([\d,]+) bytes"), lambda m: f"文件超过 {m[1]} 字节，进度文件最多 {MAX_BYTES:,} 字节"),
    (re.compile(r"is a folder"), lambda m: "是文件夹，只能导入普通文件"),
    (re.compile(r"is a pipe"), lambda m: "是管道，只能导入普通文件"),
    (re.compile(r"is not a regular file"), lambda m: "不是普通文件（是设备或其他特殊文件），只能导入普通文件"),
    (re.compile(r"cannot be (?:opened|read) \((.*)\)"), lambda m: f"读不了（{m[1]}）"),
]


def _num(x: float) -> str:
    """A bound as JavaScript's ``String(x)`` writes it: ``36500``, ``0.001``."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _file_reason(message: str) -> str:
    for pattern, words in _FILE_WORDS:
        if m := pattern.search(message):
            return words(m)
    return message


def _reason(data: bytes, refused: str) -> str:
    """Why edge refused ``data``, in the quiz's words (``quiz-core.js`` makes the same ones)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"文件不是 UTF-8 文本（第 {exc.start} 字节）"
    try:
        msgspec.json.decode(data, type=ProgressFile, strict=True)
    except msgspec.ValidationError as exc:
        return schema_reason(str(exc), data)
    except msgspec.DecodeError:
        return "文件不是合法的 JSON"
    except RecursionError:
        return "文件嵌套太深"
    twice = re.search(r"the key (.+) appears twice", refused)  # what edge adds to msgspec: no key twice
    return f"键 {twice[1]} 在同一个对象里出现了两次" if twice else refused


def schema_reason(message: str, data: bytes | None = None) -> str:
    """msgspec's ``message`` (a :class:`ProgressFile` refused) in the quiz's words."""
    m = _AT.fullmatch(message)
    what, where = (m["what"], m["where"]) if m else (message, "")
    if m and m["map"]:  # a key of a map: "at `key` in `$.cards`"
        where = m["map"] + " 的键"
    where = _place(where.removeprefix("$").lstrip("."), data)
    for pattern, words in _SCHEMA_WORDS:
        if found := pattern.fullmatch(what):
            return (where or "文件") + words(found)
    return f"{where}.{what}" if where else what  # a rule of __post_init__: "<field> why", or the whole file's


def _place(where: str, data: bytes | None) -> str:
    """msgspec's ``cards[...].due`` as ``cards.<id>.due``."""
    if where.startswith("cards[...]") and data is not None:
        return "cards." + _failing_card(data) + where.removeprefix("cards[...]")
    return where


class _Cards(Struct):
    cards: dict[str, msgspec.Raw]


def _failing_card(data: bytes) -> str:
    """The id of the first card that does not read as a :class:`Card` (msgspec's path leaves it out)."""
    try:
        cards = msgspec.json.decode(data, type=_Cards).cards
    except (msgspec.MsgspecError, RecursionError):
        return "[...]"
    for key, raw in cards.items():
        try:
            msgspec.json.decode(raw, type=Card, strict=True)
        except (msgspec.MsgspecError, RecursionError):
            return key
    return "[...]"


# --- the same rules for the browser ----------------------------------------------------------------

def browser_rules() -> dict[str, Any]:
    """What ``quiz-core.js`` checks a progress file against: the schema above as JSON Schema (dates carry
    ``x-ahead``: the days a date may lie past now) and the rules it cannot state."""
    return {"schema": msgspec.json.schema(ProgressFile), "version": VERSION, "max_bytes": MAX_BYTES,
            "earliest": EARLIEST.isoformat().replace("+00:00", "Z"), "ahead_days": AHEAD_DAYS,
            "date_example": DATE_EXAMPLE}
