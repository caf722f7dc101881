"""Score a free-text answer by the key points (考察点) it covers.

A keyword counts when the keyword or one of its synonyms occurs in the answer at word
boundaries. Chinese has no spaces, so the answer is segmented with jieba (search mode, which
also yields the shorter words inside long ones): 「共享」 is found in 「共享内存」 but not in
「公共享有」. Latin words need a non-letter on each side (an English plural ``s`` is allowed).
Full-width characters and case are normalised first. A word that is only the tail of a longer
keyword does not count (「拷贝」 in 「零拷贝」). The browser quiz implements the same rule
with ``Intl.Segmenter``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

_WORD = re.compile(r"[0-9a-z_]")
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


def spans(variant: str, text: str, bounds: set[int]) -> list[tuple[int, int]]:
    """Where ``variant`` occurs in normalised ``text`` at word boundaries."""
    v = normalize(variant).strip()
    if not v:
        return []
    out = []
    for m in _pattern(v).finditer(text):
        s, e = m.span()
        if _is_word(v[0]):
            left = s == 0 or not _is_word(text[s - 1])
        else:
            left = s in bounds
        if _is_word(v[-1]):
            right = e == len(text) or not _is_word(text[e]) or (
                text[e] == "s" and (e + 1 == len(text) or not _is_word(text[e + 1])))
        else:
            right = e in bounds
        if left and right:
            out.append((s, e))
    return out


def find(variant: str, text: str, bounds: set[int]) -> bool:
    return bool(spans(variant, text, bounds))


@dataclass
class PointScore:
    point: str
    hits: dict[str, str | None]  # keyword -> the variant found, or None

    @property
    def fraction(self) -> float:
        return sum(v is not None for v in self.hits.values()) / len(self.hits)

    @property
    def status(self) -> str:
        f = self.fraction
        return "covered" if f == 1 else ("partial" if f > 0 else "missed")

    @property
    def missing(self) -> list[str]:
        return [k for k, v in self.hits.items() if v is None]


@dataclass
class Score:
    points: list[PointScore] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        """Mean over key points of the fraction of their keywords found, 0..1."""
        return sum(p.fraction for p in self.points) / len(self.points) if self.points else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"coverage": round(self.coverage, 4),
                "points": [{"point": p.point, "status": p.status, "hits": p.hits} for p in self.points]}


def score(answer: str, key_points: list[dict[str, Any]]) -> Score:
    """Score ``answer`` against a question's key points (as in the bank).

    A variant found only as the tail of a longer keyword (拷贝 in 零拷贝, 连续 in 不连续) does
    not count, so saying 「零拷贝」 does not also earn a point about copying. 共享 in 共享内存
    still counts.
    """
    text = normalize(answer)
    bounds = boundaries(text) if text.strip() else {0}
    found: list[tuple[int, int, str, str]] = []  # (start, end, keyword, variant) over every key point
    for kp in key_points:
        for kw in kp["keywords"]:
            for variant in [kw, *kp.get("synonyms", {}).get(kw, [])]:
                found += [(s, e, kw, variant) for s, e in spans(variant, text, bounds)]

    def shadowed(s: int, e: int) -> bool:
        # a longer keyword ending at the same place adds a prefix, in Chinese usually a negation
        return any(s2 < s and e == e2 for s2, e2, _, _ in found)

    out = Score()
    for kp in key_points:
        hits: dict[str, str | None] = {}
        for kw in kp["keywords"]:
            hits[kw] = None
            for variant in [kw, *kp.get("synonyms", {}).get(kw, [])]:
                if any(k == kw and v == variant and not shadowed(s, e) for s, e, k, v in found):
                    hits[kw] = variant
                    break
        out.points.append(PointScore(kp["point"], hits))
    return out
