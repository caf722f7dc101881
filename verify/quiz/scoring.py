"""A free answer's key points are marked by the candidate; the machine only finds words and adds up marks.

No mark is pre-selected. A keyword rule cannot tell a sentence from its inversion: 「expand 会拷贝」
and 「expand 不会拷贝」 share every word, and so do a right number and one off by ten times. So the
candidate marks each 考察点 说到了 / 没说到 / 说错了, and the rating comes from those marks alone
(:func:`rating`). Beside each point the quiz shows the sentences of the answer that contain one of
the point's words (its keywords and their synonyms), labelled as exactly that (:func:`shared`).

The rules are :data:`FIND_RULES`, one set for both quizzes: the quiz page carries them in its bank
(``find_rules``) and ``docs/assets/quiz/quiz-core.js`` applies them as here:

- a point's words are its keywords and their synonyms, each at least ``shortest`` characters
  (normalised, trimmed) long;
- the answer is cut into sentences (``sentence``: up to 。！？!?；; or a line break, that mark kept),
  each trimmed, empty ones and repeats left out, and shown as typed;
- a sentence and a word are compared NFKC-normalised and lower-cased; the word occurs where its
  text does, whitespace in it and between a Latin and a Chinese character typed or not; a word that
  starts (ends) with a ``word`` character (Latin letter, digit, ``_``) needs none just before (after)
  it, except an English plural ``s`` after it. Chinese is not segmented: 「共享」 is found in 「公共享有」,
  which is what 「含这些词」 says.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol


class KeyPoint(Protocol):
    """What is read of a :class:`verify.quiz.schema.KeyPoint` (the bank, in schema, carries FIND_RULES)."""

    @property
    def keywords(self) -> tuple[str, ...]: ...

    def variants(self, keyword: str) -> list[str]: ...

#: the marks a candidate gives each key point of a free answer, and their words
MARKS = {"said": "说到了", "missed": "没说到", "wrong": "说错了"}

FIND_RULES: dict[str, Any] = {
    "sentence": r"[^。！？!?；;\n]+[。！？!?；;\n]?",  # a regex, read alike by Python's re and JavaScript
    "word": r"[0-9a-z_]",
    "shortest": 2,  # a word of one character (「0」, 「快」) is in too many sentences to point at any
    "plural": "s",
    "marks": MARKS,
    "label": "你的回答里含这些词的句子",
    "none": "你的回答里没有含这些词的句子",
    "why": "机器分不清一句话和它的反话（「会拷贝」和「不会拷贝」用的是同样的词），所以每个考察点由你自己判断。",
}

_SENTENCE = re.compile(FIND_RULES["sentence"])
_WORD = re.compile(FIND_RULES["word"])


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _is_word(ch: str) -> bool:
    return bool(_WORD.fullmatch(ch))


def _pattern(word: str) -> re.Pattern[str]:
    # whitespace in the word, and between Latin and Chinese, may or may not be typed
    parts: list[str] = []
    prev = ""
    for ch in word:
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


def occurs(word: str, text: str) -> bool:
    """Whether ``word`` occurs in the normalised ``text`` (see the module's rules)."""
    w = normalize(word).strip()
    if not w:
        return False
    pattern, pos, plural = _pattern(w), 0, FIND_RULES["plural"]
    while (m := pattern.search(text, pos)) is not None:
        s, e = m.span()
        left = not _is_word(w[0]) or s == 0 or not _is_word(text[s - 1])
        right = (not _is_word(w[-1]) or e == len(text) or not _is_word(text[e])
                 or (text[e] == plural and (e + 1 == len(text) or not _is_word(text[e + 1]))))
        if left and right:
            return True
        pos = s + 1
    return False


def words(kp: KeyPoint) -> list[str]:
    """The point's words: each keyword, then its synonyms; each once; none shorter than ``shortest``."""
    return list(dict.fromkeys(v for kw in kp.keywords for v in kp.variants(kw)
                              if len(normalize(v).strip()) >= FIND_RULES["shortest"]))


def keywords_in(text: str, kp: KeyPoint) -> list[str]:
    """The point's keywords that ``text`` contains, itself or by a synonym."""
    norm = normalize(text)
    return [kw for kw in kp.keywords if any(occurs(v, norm) for v in kp.variants(kw))]


def sentences(answer: str) -> list[str]:
    """The answer's sentences as typed, trimmed, each once."""
    return list(dict.fromkeys(s for m in _SENTENCE.finditer(answer) if (s := m.group().strip())))


def shared(answer: str, kp: KeyPoint) -> list[tuple[str, list[str]]]:
    """(sentence, the point's words in it) for each sentence of ``answer`` that contains one of them."""
    out = []
    for sentence in sentences(answer):
        norm = normalize(sentence)
        found = [w for w in words(kp) if occurs(w, norm)]
        if found:
            out.append((sentence, found))
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
