"""Score a free-text answer by the key points (考察点) it covers, and notice what contradicts them.

The score is a hint beside the candidate's own rating, not a grade. The rules (the browser quiz,
``docs/assets/quiz/quiz-core.js``, implements the same ones with ``Intl.Segmenter``):

- Text is normalised first (NFKC, lower case). Chinese has no spaces, so it is segmented with
  jieba (search mode, which also yields the shorter words inside long ones).
- A keyword or one of its synonyms counts where it occurs as a word. A Latin variant needs a
  non-letter on each side (an English plural ``s`` is allowed). A Chinese variant must *start* at
  a word boundary (「共享」 is not in 「公共享有」); its end may fall inside a segment, because
  segmenters glue particles to the end of an unknown word (「写|穿到」).
- A variant negated just before it (不、没、未、无、非、别 within two characters of the same
  clause) does not count, unless the variant says the negation itself (「不拷贝」).
- A variant that is only the tail of a longer variant found at the same place does not count
  (「拷贝」 in 「零拷贝」).
- A sentence that is mostly keywords (less than a fifth of it other words) is a list, not an
  answer: a keyword found only in lists counts half, so a keyword list never reaches full marks.
- A key point's ``contradicts`` statements (e.g. 「expand 会拷贝」) are split at spaces into parts
  that must occur in this order inside one clause, with no negation between them, and not inside
  quotation marks (quoting a wrong claim to refute it is not saying it). A hit costs the whole
  point and is shown as a mistake beside the correct statement.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from verify.core.records import JsonObject
from verify.quiz.schema import KeyPoint

_WORD = re.compile(r"[0-9a-z_]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
NEGATIONS = "不没未无非别"
CLAUSE_BREAKS = "，,。；;！!？?：:、\n"
_SENTENCES = re.compile(r"[^。！？!?；;\n]+")
_UNITS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[0-9a-z_]+")
LIST_SHARE = 0.2  # below this share of other words a sentence is a list of terms
LIST_WEIGHT = 0.5  # what a keyword found only in a list counts
_jieba = None


def _segmenter():
    global _jieba
    if _jieba is None:
        import logging  # noqa: PLC0415

        import jieba  # noqa: PLC0415

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        _jieba = jieba
    return _jieba


def warm_up() -> None:
    """Load jieba's dictionary (about a second); the terminal quiz does it in the background."""
    _segmenter()


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def boundaries(text: str) -> set[int]:
    """Every position where a word starts or ends, in search mode (nested words included)."""
    out = {0, len(text)}
    for _word, start, end in _segmenter().tokenize(text, mode="search"):
        out.add(start)
        out.add(end)
    return out


def _is_word(ch: str) -> bool:
    return bool(_WORD.match(ch))


def _pattern(variant: str) -> re.Pattern[str]:
    # whitespace in the keyword, and between Latin and Chinese, may or may not be typed
    parts: list[str] = []
    prev = ""
    for ch in variant:
        if ch.isspace():
            if parts and parts[-1] != r"\s*":
                parts.append(r"\s*")
            prev = ""
            continue
        if prev and _is_word(prev) != _is_word(ch) and parts[-1] != r"\s*":
            parts.append(r"\s*")
        parts.append(re.escape(ch))
        prev = ch
    return re.compile("".join(parts))


def negated(text: str, start: int) -> bool:
    """Whether a negation stands within two characters before ``start``, in the same clause."""
    seen = 0
    i = start - 1
    while i >= 0 and seen < 2:
        ch = text[i]
        if ch in CLAUSE_BREAKS:
            return False
        if not ch.isspace():
            if ch in NEGATIONS:
                return True
            seen += 1
        i -= 1
    return False


def spans(variant: str, text: str, bounds: set[int], guard: bool = True) -> list[tuple[int, int]]:
    """Where ``variant`` occurs in normalised ``text`` as a word (not negated, with ``guard``)."""
    v = normalize(variant).strip()
    if not v:
        return []
    out = []
    for m in _pattern(v).finditer(text):
        s, e = m.span()
        left = (s == 0 or not _is_word(text[s - 1])) if _is_word(v[0]) else s in bounds
        right = True
        if _is_word(v[-1]):
            right = e == len(text) or not _is_word(text[e]) or (
                text[e] == "s" and (e + 1 == len(text) or not _is_word(text[e + 1])))
        if left and right and (not guard or v[0] in NEGATIONS or not negated(text, s)):
            out.append((s, e))
    return out


def find(variant: str, text: str, bounds: set[int]) -> bool:
    return bool(spans(variant, text, bounds))


def _clauses(text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for i, ch in enumerate(text):
        if ch in CLAUSE_BREAKS:
            out.append((start, i))
            start = i + 1
    out.append((start, len(text)))
    return [(s, e) for s, e in out if e > s]


QUOTES = {"“": "”", "「": "」", "『": "』", "‘": "’", '"': '"'}


def quoted(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` inside quotation marks (an unclosed quote runs to the end)."""
    out, start, close = [], 0, None
    for i, ch in enumerate(text):
        if close is None and ch in QUOTES:
            start, close = i, QUOTES[ch]
        elif close is not None and ch == close:
            out.append((start, i + 1))
            close = None
    if close is not None:
        out.append((start, len(text)))
    return out


def paraphrases(part: str, key_point: KeyPoint | None) -> list[str]:
    """A part of a ``contradicts`` statement and what else says it: where the part is one of the key
    point's keywords or synonyms, every variant of that keyword (「会 复制」 for 「会 拷贝」)."""
    if key_point is None:
        return [part]
    for kw in key_point.keywords:
        variants = key_point.variants(kw)
        if part in (normalize(v).strip() for v in variants):
            return list(dict.fromkeys([part, *(normalize(v).strip() for v in variants)]))
    return [part]


def contradiction(statement: str, text: str, bounds: set[int], key_point: KeyPoint | None = None) -> tuple[int, int] | None:
    """Where ``statement``'s parts (or their paraphrases) occur in order inside one clause of ``text``,
    no negation between them, outside quotation marks."""
    parts = normalize(statement).split()
    if not parts:
        return None
    quotes = quoted(text)
    # the first part must not be negated; the others may follow the statement's own negation
    # (「print 不会 断图」), but no negation may stand between two parts
    found = {(k == 0, p): sorted((s, e) for alt in paraphrases(p, key_point)
                                 for s, e in spans(alt, text, bounds, guard=k == 0)
                                 if not any(qs <= s < qe for qs, qe in quotes)) for k, p in enumerate(parts)}
    for cs, ce in _clauses(text):
        pos, first = cs, None
        for k, part in enumerate(parts):
            hit = next(((s, e) for s, e in found[(k == 0, part)] if s >= pos and e <= ce), None)
            if hit is None or (first is not None and any(ch in NEGATIONS for ch in text[pos:hit[0]])):
                break
            first = hit[0] if first is None else first
            pos = hit[1]
        else:
            return (cs if first is None else first, pos)
    return None


def _list_sentences(text: str, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sentences in which less than LIST_SHARE of the words are not keywords."""
    out = []
    for m in _SENTENCES.finditer(text):
        s, e = m.span()
        total = len(_UNITS.findall(text[s:e]))
        if not total:
            continue
        chars = list(text[s:e])
        for cs, ce in covered:
            for i in range(max(cs, s), min(ce, e)):
                chars[i - s] = " "
        if len(_UNITS.findall("".join(chars))) < LIST_SHARE * total:
            out.append((s, e))
    return out


@dataclass
class PointScore:
    point: str
    hits: dict[str, str | None]  # keyword -> the variant found, or None
    weights: dict[str, float] = field(default_factory=dict)  # keyword -> 1 (in a sentence), 0.5 (only in a list), 0
    contradicted: dict[str, str] | None = None  # {"statement": ..., "said": the words of the answer}

    @property
    def fraction(self) -> float:
        if self.contradicted:
            return 0.0
        weights = self.weights or {k: float(v is not None) for k, v in self.hits.items()}
        return sum(weights.values()) / len(self.hits)

    @property
    def status(self) -> str:
        if self.contradicted:
            return "contradicted"
        f = self.fraction
        return "covered" if f == 1 else ("partial" if f > 0 else "missed")

    @property
    def missing(self) -> list[str]:
        return [k for k, v in self.hits.items() if v is None]

    @property
    def listed(self) -> list[str]:
        """Keywords found only in a list of terms, not in a sentence."""
        return [k for k, w in self.weights.items() if 0 < w < 1]


@dataclass
class Score:
    points: list[PointScore] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        """Mean over key points of the share of their keywords found, 0..1 (0 for a contradicted point)."""
        return sum(p.fraction for p in self.points) / len(self.points) if self.points else 0.0

    def to_dict(self) -> JsonObject:
        return {"coverage": round(self.coverage, 4),
                "points": [{"point": p.point, "status": p.status, "hits": p.hits, "listed": p.listed,
                            "contradicted": p.contradicted} for p in self.points]}


@dataclass
class _Found:
    """An answer read against key points: its text, word boundaries, every keyword place, its lists."""

    answer: str
    text: str
    bounds: set[int]
    found: list[tuple[int, int, str, str]]  # (start, end, keyword, variant), shadowed places left out
    lists: list[tuple[int, int]]

    def places(self, kw: str, variant: str) -> list[tuple[int, int]]:
        return [(s, e) for s, e, k, v in self.found if k == kw and v == variant]

    def in_list(self, pos: int) -> bool:
        return any(ls <= pos < le for ls, le in self.lists)

    def contradicted(self, kp: KeyPoint) -> dict[str, str] | None:
        for statement in kp.contradicts:
            where = contradiction(statement, self.text, self.bounds, kp)
            if where:
                return {"statement": statement, "said": answer_slice(self.answer, self.text, where)}
        return None


def _read(answer: str, key_points: Sequence[KeyPoint]) -> _Found:
    text = normalize(answer)
    bounds = boundaries(text) if text.strip() else {0}
    found: list[tuple[int, int, str, str]] = []  # over every key point
    for kp in key_points:
        for kw in kp.keywords:
            for variant in kp.variants(kw):
                found += [(s, e, kw, variant) for s, e in spans(variant, text, bounds)]
    # a longer variant ending at the same place adds a prefix, in Chinese usually a negation
    kept = [f for f in found if not any(s2 < f[0] and f[1] == e2 for s2, e2, _, _ in found)]
    return _Found(answer, text, bounds, kept, _list_sentences(text, [(s, e) for s, e, _, _ in found]))


def score(answer: str, key_points: Sequence[KeyPoint]) -> Score:
    """Score ``answer`` against a question's key points."""
    read = _read(answer, key_points)
    out = Score()
    for kp in key_points:
        hits: dict[str, str | None] = {}
        weights: dict[str, float] = {}
        for kw in kp.keywords:
            hits[kw], weights[kw] = None, 0.0
            for variant in kp.variants(kw):
                places = [s for s, _ in read.places(kw, variant)]
                if places and hits[kw] is None:
                    hits[kw] = variant
                if places:
                    weights[kw] = max(weights[kw], *(LIST_WEIGHT if read.in_list(p) else 1.0 for p in places))
        out.points.append(PointScore(kp.point, hits, weights, read.contradicted(kp)))
    return out


# --- the candidate judges: a suggestion per key point, never a score ------------------------------

#: the marks a candidate gives each key point of a free answer, and their words
MARKS = {"said": "说到了", "missed": "没说到", "wrong": "说错了"}
#: what denies a clause for a suggestion: the negations, and calling it wrong or false (「是错的」)
DENIALS = NEGATIONS + "错假"
#: words with such a character that deny nothing (「非常」 is "very", 「假设」 "suppose")
NOT_NEGATING = ("非常", "不仅", "无论", "不断", "假设", "假定", "交错", "错位", "报错", "出错", "容错")
#: a negated word of the point itself is content (「不变」, 「不拷贝」); after these it is only a negation
GENERIC = "有是用需要会能必"
#: comparisons: a clause that compares in a direction the point's text does not name (「更少」 where the
#: point says 「一样多」) may be an inversion the keywords cannot see
DIRECTIONS = "多少大小高低快慢粗细增减"
NOT_DIRECTIONS = ("大小", "多少", "多个", "很多", "许多", "大多", "最大值", "最小值")


@dataclass(frozen=True)
class Suggestion:
    """What the matcher pre-selects for one key point: a suggestion the candidate may change.

    ``mark`` is ``said`` only where every keyword of the point stands in a sentence (not in a list of
    terms) whose clause neither denies nor compares, and nothing says the point's opposite:

    - denies: a negation anywhere in the clause (不 / 没 / 无 / 非 / 未 / 别, so 不是, 不用, 不需要, 无关,
      并非 too) or calling it wrong or false (错 / 假), other than inside a keyword, in a negated
      content word of the point itself (「不变」 of 「K、V 不变」), in an A-not-A question (「有没有」)
      or in a word that denies nothing (:data:`NOT_NEGATING`);
    - compares: a direction word (多 / 少 / 大 / 小 / 高 / 低 / 快 / 慢 …) the point's own text does
      not use (「指数位比 FP16 少」 where the point says 「一样多」).

    A keyword matcher cannot tell a paraphrase from an inversion, so it never suggests more than it
    can see. ``wrong`` where a ``contradicts`` statement or a paraphrase of it was said; ``said`` then
    holds the words. ``negated``: a clause with a keyword that denies or compares, quoted for the
    candidate to judge.
    """

    point: str
    mark: str
    said: str = ""
    statement: str = ""
    negated: str = ""

    def to_dict(self) -> JsonObject:
        return {"point": self.point, "mark": self.mark, "said": self.said, "statement": self.statement,
                "negated": self.negated}


def own_negations(point: str) -> tuple[str, ...]:
    """The point's own negated content words (「不变」 in 「K、V 不变」, not 「没有」): the answer may say them too."""
    text = normalize(point)
    return tuple(sorted({text[i:i + 2] for i, ch in enumerate(text[:-1])
                         if ch in NEGATIONS and text[i + 1].strip() and text[i + 1] not in GENERIC}))


#: a question of the form A-not-A (「有没有」, 「报不报错」) asks; it does not deny
_A_NOT_A = re.compile(r"(\S)[不没]\1")


def _masked(text: str, cs: int, ce: int, covered: list[tuple[int, int]], words: Sequence[str]) -> str:
    """``text[cs:ce]`` with blanks where a keyword stands (``covered``), where ``words`` stand and
    where it asks A-not-A, each found in the clause as written."""
    raw = text[cs:ce]
    chars = list(raw)
    spans_ = [m.span() for m in _A_NOT_A.finditer(raw)]
    for word in words:
        spans_ += [m.span() for m in re.finditer(re.escape(word), raw)]
    spans_ += [(max(s, cs) - cs, min(e, ce) - cs) for s, e in covered if s < ce and e > cs]
    for s, e in spans_:
        for i in range(s, e):
            chars[i] = " "
    return "".join(chars)


def _negation(text: str, cs: int, ce: int, covered: list[tuple[int, int]], allowed: Sequence[str] = (),
              point: str = "") -> bool:
    """Whether ``text[cs:ce]``, outside the keyword places ``covered``, denies (:data:`DENIALS`, other than
    :data:`NOT_NEGATING` and the point's own negated words ``allowed``) or compares in a direction
    the ``point`` does not name (:data:`DIRECTIONS`)."""
    clause = _masked(text, cs, ce, covered, (*NOT_NEGATING, *allowed))
    if any(ch in DENIALS for ch in clause):
        return True
    named = normalize(point)
    clause = _masked(text, cs, ce, covered, NOT_DIRECTIONS)
    return any(ch in DIRECTIONS and ch not in named for ch in clause)


def suggest(answer: str, key_points: Sequence[KeyPoint]) -> list[Suggestion]:
    """The suggested mark of each key point for ``answer`` (see :class:`Suggestion`)."""
    read = _read(answer, key_points)
    clauses = _clauses(read.text)
    covered = [(s, e) for s, e, _, _ in read.found]

    def clause_of(pos: int) -> tuple[int, int]:
        return next(((cs, ce) for cs, ce in clauses if cs <= pos < ce), (pos, pos))

    out = []
    for kp in key_points:
        wrong = read.contradicted(kp)
        if wrong:
            out.append(Suggestion(kp.point, "wrong", said=wrong["said"], statement=wrong["statement"]))
            continue
        plain, negated, own = 0, "", own_negations(kp.point)
        for kw in kp.keywords:
            places = [s for v in kp.variants(kw) for s, _ in read.places(kw, v) if not read.in_list(s)]
            free = [p for p in places if not _negation(read.text, *clause_of(p), covered, own, kp.point)]
            if free:
                plain += 1
            elif places and not negated:
                cs, ce = clause_of(places[0])
                negated = answer_slice(answer, read.text, (cs, ce)).strip()
        if plain == len(kp.keywords) and kp.keywords:
            out.append(Suggestion(kp.point, "said"))
        else:
            out.append(Suggestion(kp.point, "missed", negated=negated))
    return out


def rating(marks: Sequence[str], over_time: bool = False) -> int:
    """The FSRS rating (1 重来, 2 困难, 3 良好, 4 简单) that a round's marks of one question give.

    A point said wrong: 重来. Every point said: 简单 within the time, 良好 over it. At least half
    said: 困难. Less: 重来. The browser's ``QuizCore.rating`` is the same rule.
    """
    if not marks or "wrong" in marks:
        return 1
    said = sum(m == "said" for m in marks)
    if said == len(marks):
        return 3 if over_time else 4
    return 2 if 2 * said >= len(marks) else 1


def answer_slice(answer: str, text: str, where: tuple[int, int]) -> str:
    """The words of the answer at ``where`` (positions in its normalised text, which NFKC may shift)."""
    if len(text) == len(answer):
        return answer[where[0]:where[1]]
    return text[where[0]:where[1]]
