"""Whether a text says one of a key point's ``contradicts`` statements: a check of the pages, not of answers.

A key point's ``contradicts`` statements are the common wrong answers it names (the Anki cards show
them), so a page must never say one in its own answers. The quiz itself no longer looks for them in a candidate's answer (a keyword rule cannot
tell a sentence from its inversion); this is the page check that used to share that code. A statement
is said where its parts (split at spaces; a part that is a keyword of the point may be any of its
synonyms) occur in order inside one clause, the first not negated just before it, no negation
between two parts, and not inside quotation marks (quoting a wrong claim to refute it is not saying it).
"""

from __future__ import annotations

from verify.quiz.schema import KeyPoint
from verify.quiz.scoring import normalize

NEGATIONS = "不没未无非别"
CLAUSE_BREAKS = "，,。；;！!？?：:、\n"
QUOTES = {"“": "”", "「": "」", "『": "』", "‘": "’", '"': '"'}


def _unquoted(text: str) -> str:
    """``text`` with what stands inside quotation marks blanked (an unclosed quote runs to the end)."""
    out, close = [], None
    for ch in text:
        if close is None and ch in QUOTES:
            close = QUOTES[ch]
            out.append(" ")
        elif close is not None:
            out.append(" ")
            close = None if ch == close else close
        else:
            out.append(ch)
    return "".join(out)


def _clauses(text: str) -> list[str]:
    out, cur = [], ""
    for ch in text:
        if ch in CLAUSE_BREAKS:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [c for c in [*out, cur] if c.strip()]


def _alternatives(part: str, kp: KeyPoint) -> list[str]:
    for kw in kp.keywords:
        variants = [normalize(v).strip() for v in kp.variants(kw)]
        if part in variants:
            return variants
    return [part]


def _is_word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _find(alt: str, clause: str, start: int) -> tuple[int, int] | None:
    """The first place at or after ``start`` where ``alt`` stands as a word (Latin edges need a boundary)."""
    i = clause.find(alt, start)
    while i >= 0:
        e = i + len(alt)
        left = not _is_word(alt[0]) or i == 0 or not _is_word(clause[i - 1])
        right = not _is_word(alt[-1]) or e == len(clause) or not _is_word(clause[e]) or clause[e] == "s"
        if left and right:
            return i, e
        i = clause.find(alt, i + 1)
    return None


def said(statement: str, text: str, kp: KeyPoint) -> str | None:
    """The words of ``text`` that say ``statement``, or None."""
    parts = normalize(statement).split()
    for clause in _clauses(_unquoted(normalize(text))):
        pos, first = 0, None
        for k, part in enumerate(parts):
            hits = [h for alt in _alternatives(part, kp) if alt and (h := _find(alt, clause, pos))]
            if not hits:
                break
            hit = min(hits)
            gap = clause[max(pos, hit[0] - 2):hit[0]] if k == 0 else clause[pos:hit[0]]
            if any(ch in NEGATIONS for ch in gap):
                break
            first = hit[0] if first is None else first
            pos = hit[1]
        else:
            if first is not None:
                return clause[first:pos]
    return None
