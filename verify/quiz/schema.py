"""What a question is: the front matter's schema (every problem named with its file and field), and
the bank's typed records.

A page's front matter is checked here as YAML read it; the bank then holds frozen records
(:class:`Question`, :class:`KeyPoint`, :class:`FollowUp`, :class:`Drill`, :class:`Bank`). JSON is
only at the edges: ``to_json`` writes the shape ``quiz.json`` has (the browser quiz,
``docs/assets/quiz/*.js``, reads it), ``from_json`` reads it back (the bank's disk cache, tests).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from dataclasses import dataclass, field, fields
from typing import Any, TypeGuard

from verify.core.frontmatter import PageError
from verify.core.frontmatter import front_matter as read_front_matter
from verify.core.records import JsonObject
from verify.errors import ClaimError

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# The syllabus' topics, in the order the site lists them.
TOPICS = ("pytorch-internals", "cuda-gpu", "training-memory", "distributed", "serving", "model-architecture",
          "quantization", "cpp-systems")
_KEY_POINT_FIELDS = {"point", "keywords", "synonyms", "contradicts"}


def _nonempty_str(v: Any) -> TypeGuard[str]:
    return isinstance(v, str) and bool(v.strip())


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(_nonempty_str(x) for x in v)


def _quote_hint(v: Any) -> str:
    """A hint when YAML read a number where text was meant (``[0, 65504]``): quote it."""
    if isinstance(v, list) and any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        numbers = ", ".join(repr(x) for x in v if isinstance(x, (int, float)) and not isinstance(x, bool))
        return f" (YAML read {numbers} as a number: quote it, e.g. \"0\")"
    return ""


def _records(meta: JsonObject, name: str, shape: str, bad: Callable[[str, str], None]) -> list[tuple[str, Any]]:
    """``(field path, item)`` of a required non-empty list field; reports the field when it is not one."""
    items = meta.get(name)
    if not isinstance(items, list) or not items:
        bad(name, f"required, a non-empty list of {shape}")
        return []
    return [(f"{name}[{i}]", item) for i, item in enumerate(items)]


def _has_strings(item: Any, *keys: str) -> bool:
    return isinstance(item, dict) and all(_nonempty_str(item.get(k)) for k in keys)


def _key_point(f: str, kp: Any, bad: Callable[[str, str], None]) -> None:
    if not isinstance(kp, dict):
        bad(f, "must be a mapping with point, keywords, synonyms")
        return
    if not _nonempty_str(kp.get("point")):
        bad(f + ".point", "required, a non-empty string")
    if not _str_list(kp.get("keywords")):
        bad(f + ".keywords", "required, a non-empty list of strings" + _quote_hint(kp.get("keywords")))
        return
    syn = kp.get("synonyms")
    syn = {} if syn is None else syn
    if not isinstance(syn, dict):
        bad(f + ".synonyms", "must map a keyword to a list of synonyms")
        return
    for k, v in syn.items():
        if k not in kp["keywords"]:
            bad(f + f".synonyms.{k}", f"{k!r} is not one of the keywords {kp['keywords']}")
        elif not _str_list(v):
            bad(f + f".synonyms.{k}", "must be a non-empty list of strings" + _quote_hint(v))
    contra = kp.get("contradicts")
    if contra is not None and not _str_list(contra):
        bad(f + ".contradicts", "a non-empty list of statements that contradict the point (e.g. 'expand 会拷贝')")
    extra = set(kp) - _KEY_POINT_FIELDS
    if extra:
        bad(f, f"unknown field(s) {sorted(extra)}")


def validate_meta(meta: Any, where: str, stem: str) -> list[str]:
    """Check one page's front matter; return 'file: field: problem' lines."""
    if not isinstance(meta, dict):
        return [f"{where}: front matter: must be a YAML mapping between '---' lines"]
    out: list[str] = []

    def bad(field: str, why: str) -> None:
        out.append(f"{where}: {field}: {why}")

    qid = meta.get("id")
    if not _nonempty_str(qid) or not _ID.match(qid):
        bad("id", "required, lower-case words joined by '-'")
    elif qid != stem:
        bad("id", f"{qid!r} must equal the file name {stem!r}")
    if not _nonempty_str(meta.get("title")):
        bad("title", "required, a non-empty string")
    topic = meta.get("topic")
    if topic is not None and topic not in TOPICS:
        bad("topic", f"{topic!r} is not one of {', '.join(TOPICS)}")
    for f, source in _records(meta, "sources", "{company, round}", bad):
        if not _has_strings(source, "company", "round"):
            bad(f, "needs non-empty 'company' and 'round'")
    diff = meta.get("difficulty")
    if isinstance(diff, bool) or not isinstance(diff, int) or not 1 <= diff <= 5:
        bad("difficulty", f"an integer 1..5, got {diff!r}")
    if not _str_list(meta.get("tags")):
        bad("tags", "required, a non-empty list of strings")
    for f, kp in _records(meta, "key_points", "{point, keywords, synonyms}", bad):
        _key_point(f, kp, bad)
    for f, fu in _records(meta, "follow_ups", "{q, a}", bad):
        if not _has_strings(fu, "q", "a"):
            bad(f, "needs non-empty 'q' and 'a'")
    return out



# --- records ------------------------------------------------------------------------------

BANK_VERSION = 4
_OMIT_NONE = {"omit_none": True}  # a field left out of the JSON while it is None


def _plain(value: Any) -> Any:
    """A record as JSON values: dataclasses as objects (in field order), tuples as lists."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)
                if not (f.metadata.get("omit_none") and getattr(value, f.name) is None)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _strings(items: Iterable[str] | None) -> tuple[str, ...]:
    return tuple(s.strip() for s in items or ())


class _Record:
    def to_json(self) -> JsonObject:
        return _plain(self)


@dataclass(frozen=True)
class Source(_Record):
    company: str
    round: str


@dataclass(frozen=True)
class KeyPoint(_Record):
    """A 考察点: the point, the keywords that cover it (with synonyms), what says the opposite."""

    point: str
    keywords: tuple[str, ...]
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    contradicts: tuple[str, ...] = ()

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> KeyPoint:
        """From front matter or JSON: ``{point, keywords, synonyms?, contradicts?}``."""
        return cls(point=obj["point"].strip(), keywords=_strings(obj["keywords"]),
                   synonyms={k: _strings(v) for k, v in (obj.get("synonyms") or {}).items()},
                   contradicts=_strings(obj.get("contradicts")))

    def variants(self, keyword: str) -> list[str]:
        return [keyword, *self.synonyms.get(keyword, ())]


@dataclass(frozen=True)
class FollowUp(_Record):
    """A 追问 and its answer."""

    q: str
    a: str


@dataclass(frozen=True)
class Question(_Record):
    """One page of the bank. The answers are empty in an outline (front matter only); the HTML ones
    are there only where the bank was rendered for the site."""

    id: str
    title: str
    question: str
    topic: str
    key_points: tuple[KeyPoint, ...]
    follow_ups: tuple[FollowUp, ...]
    tags: tuple[str, ...]
    difficulty: int
    sources: tuple[Source, ...]
    url: str
    page_url: str | None  # absolute, when the site's address is known
    file: str
    ordinary_answer: str = ""
    better_answer: str = ""  # the spoken answer where the page has a 逐点展开, else the whole better answer
    deeper_answer: str = ""  # 逐点展开: the long answer after the key points ("" where the page has none)
    evidence_url: str = ""
    claims: tuple[str, ...] = ()
    ordinary_answer_html: str | None = field(default=None, metadata=_OMIT_NONE)
    better_answer_html: str | None = field(default=None, metadata=_OMIT_NONE)
    deeper_answer_html: str | None = field(default=None, metadata=_OMIT_NONE)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Question:
        return cls(**{**obj, "key_points": tuple(KeyPoint.of(k) for k in obj["key_points"]),
                      "follow_ups": tuple(FollowUp(f["q"], f["a"]) for f in obj["follow_ups"]),
                      "sources": tuple(Source(s["company"], s["round"]) for s in obj["sources"]),
                      "tags": tuple(obj["tags"]), "claims": tuple(obj.get("claims", ()))})

    @property
    def source(self) -> str:
        return "；".join(f"{s.company} · {s.round}" for s in self.sources)


_PERF = _OMIT_NONE  # fields only a performance drill ("faster") has


@dataclass(frozen=True)
class Drill(_Record):
    """A predict-the-output drill: what :func:`verify.quiz.drills.make` takes from the claim and its
    observation, what :mod:`verify.quiz.claims` adds (provenance, sentence, prompt) and the page
    the bank adds (title, tags, address)."""

    format: str  # value | exception | faster
    answer: Any  # the observed value (a JSON value)
    key: str = ""
    accept: tuple[str, ...] = ()
    answer_text: str = ""
    expr: str = ""
    code: str = ""
    options: tuple[str, ...] | None = field(default=None, metadata=_PERF)  # (slower-named, faster-named) variants
    faster: str | None = field(default=None, metadata=_PERF)
    factor: float | None = field(default=None, metadata=_PERF)
    tolerance: float | None = field(default=None, metadata=_PERF)
    same: bool | None = field(default=None, metadata=_PERF)
    # the claim
    id: str = ""
    claim: str = ""
    question: str = ""
    kind: str = ""
    snippet: str = ""
    line: int = 0
    device: str = ""
    torch: str = ""
    torch_build: str = ""
    date: str = ""
    here: bool = False
    sentence: str = ""
    prompt: str = ""
    anchor: str = ""
    # the page
    title: str = ""
    tags: tuple[str, ...] = ()
    topic: str = ""
    difficulty: int = 0
    url: str = ""
    page_url: str | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Drill:
        known = {f.name for f in fields(cls)}
        tuples = {k: tuple(obj[k]) for k in ("accept", "tags", "options") if obj.get(k) is not None}
        return cls(**{**{k: v for k, v in obj.items() if k in known}, **tuples})

    @property
    def where(self) -> str:
        """``AMD EPYC · torch 2.13.0+cpu · 2026-12-01``: where the answer was observed."""
        build = f"+{self.torch_build}" if self.torch_build else ""
        return f"{self.device} · torch {self.torch}{build}" + (f" · {self.date}" if self.date else "")


@dataclass(frozen=True)
class Objective(_Record):
    """An item with one right answer (:mod:`verify.quiz.objective`): a 判断题 (``judge``: is a claim's
    sentence, or the same with one observed value changed, right?) or a 计算题 (``calc``: a number a
    claim-checked formula gives, within ``tolerance``)."""

    id: str
    kind: str  # judge | calc
    question: str
    prompt: str
    answer: Any  # True / False, or the number
    answer_text: str
    explain: str = ""  # the claim's true sentence (judge), the formula (calc)
    unit: str = ""
    tolerance: float = 0.0  # relative
    claim: str = ""  # the claim whose sentence is judged, or that checks a calculator's formula
    #: a calculator's parameters; for a false 判断题, the observed ``key`` changed and the wrong ``value``
    params: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    tags: tuple[str, ...] = ()
    difficulty: int = 0
    url: str = ""
    page_url: str | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Objective:
        known = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in obj.items() if k in known}, "tags": tuple(obj.get("tags", ()))})


@dataclass(frozen=True)
class ClaimSentence(_Record):
    """A claim an answer shows: its sentence with the values filled in, and where they were observed."""

    sentence: str
    where: str = ""


def _progress_rules() -> dict[str, Any]:
    from verify.quiz.progress_file import browser_rules  # noqa: PLC0415  (msgspec: not on the terminal's start)

    return browser_rules()


def _find_rules() -> dict[str, Any]:
    from verify.quiz.scoring import FIND_RULES  # noqa: PLC0415  (scoring imports this module)

    return FIND_RULES


@dataclass(frozen=True)
class Bank(_Record):
    """The question bank: ``quiz.json``, the quiz fence, the terminal quiz and the deck read it.

    ``progress_rules`` is the progress file's schema (:func:`verify.quiz.progress_file.browser_rules`):
    the browser quiz checks an imported file, and what it keeps in localStorage, against it.
    ``find_rules`` are :data:`verify.quiz.scoring.FIND_RULES`: how the browser finds the sentences of
    an answer that contain a key point's words, and the words it shows beside them.
    """

    questions: tuple[Question, ...]
    drills: tuple[Drill, ...] = ()
    objective: tuple[Objective, ...] = ()  # 判断题 and 计算题
    evidence: dict[str, ClaimSentence] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    site_url: str | None = None
    version: int = BANK_VERSION
    progress_rules: dict[str, Any] = field(default_factory=_progress_rules)  # made here, never read from a file
    find_rules: dict[str, Any] = field(default_factory=_find_rules)  # likewise

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Bank:
        return cls(questions=tuple(Question.from_json(q) for q in obj["questions"]),
                   drills=tuple(Drill.from_json(d) for d in obj.get("drills", ())),
                   objective=tuple(Objective.from_json(o) for o in obj.get("objective", ())),
                   evidence={k: ClaimSentence(**v) for k, v in obj.get("evidence", {}).items()},
                   tags=tuple(obj.get("tags", ())), topics=tuple(obj.get("topics", ())),
                   site_url=obj.get("site_url"), version=obj.get("version", BANK_VERSION))

    def question(self, qid: str) -> Question:
        return next(q for q in self.questions if q.id == qid)

    def known(self) -> set[str]:
        """Every id progress may be kept under: the questions', the drills' and the objective items'."""
        return {q.id for q in self.questions} | {d.id for d in self.drills} | {o.id for o in self.objective}


# --- the outline: what the terminal needs to start, from the front matter alone ----------------------

class BankError(ClaimError):
    """One or more pages do not fit the bank's schema; the message lists each file and field."""

    def __init__(self, problems: list[str]):
        super().__init__("question bank: " + str(len(problems)) + " problem(s):\n" +
                         "\n".join("  - " + p for p in problems))
        self.problems = problems


def _meta_entry(meta: dict[str, Any], where: str, site_url: str | None = None) -> Question:
    """A question as far as the front matter (validated) tells it: no answers yet."""
    qid = meta["id"]
    return Question(
        id=qid,
        title=meta["title"].strip(),
        question=meta["title"].strip(),  # the H1, which must equal the title
        topic=meta.get("topic") or "",
        key_points=tuple(KeyPoint.of(kp) for kp in meta["key_points"]),
        follow_ups=tuple(FollowUp(fu["q"].strip(), fu["a"].strip()) for fu in meta["follow_ups"]),
        tags=tuple(t.strip() for t in meta["tags"]),
        difficulty=meta["difficulty"],
        sources=tuple(Source(s["company"], s["round"]) for s in meta["sources"]),
        url=f"questions/{qid}/",
        page_url=f"{site_url}questions/{qid}/" if site_url else None,
        file=where,
    )


def outline(docs_dir: Path) -> list[Question]:
    """Every question's front-matter fields, validated, without reading the bodies (the terminal's start).

    Raises BankError naming each file and field, like :func:`build_bank`.
    """
    docs_dir = Path(docs_dir)
    entries: list[Question] = []
    problems: list[str] = []
    for path in sorted((docs_dir / "questions").glob("*.md")):
        where = _where(path, docs_dir)
        try:
            front, meta = read_front_matter(path)
        except PageError as exc:
            problems.append(f"{where}: {exc.problem}")
            continue
        if front is None:
            problems.append(f"{where}: front matter: missing (the page must start with a '---' YAML block)")
            continue
        errs = validate_meta(meta, where, path.stem)
        problems += errs
        if not errs:
            entries.append(_meta_entry(meta, where))
    if problems:
        raise BankError(problems)
    return entries


def _where(path: Path, docs_dir: Path) -> str:
    try:
        return path.relative_to(docs_dir.parent).as_posix()
    except ValueError:
        return path.as_posix()
