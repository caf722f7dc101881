"""An examiner who does not know the subject: answers a 判断题 from its text alone, by the rules an
adversarial examiner used on the bank (issue 36).

(a) Arithmetic inside the sentence: a number that relates to no two others, but would relate (product,
    ratio, sum or difference, within 2%) once a common perturbation is undone (÷10, ×10, negated, ±1,
    (v-1)/2, ÷2, ×2), was changed: the sentence contradicts itself. 错.
    A sharper form looks only at a number a cue word says is made of others (倍, 正好, 合计, 之和…): fewer
    items flagged, far fewer of them true.
(b) Implausible values: a negative size, time or count; a percentage above 100; 「快 0 倍」. 错.
(d) Words the value contradicts (a review of the bank, issue H9): a magnitude the sentence's other numbers
    make impossible (a list said to grow that does not, until one element is divided or multiplied by 10:
    「1、20、4 MiB」; a count ten times the one a word says: 「两遍法…是 20 次归约」; 「20 条对 1 条」); a count
    larger than its own total (「6 格里有 10 格」); a nonzero count next to a negation (「没有 running 统计
    （buffer 1 个）」, 「不经过它：…有 1 个」); a count that the names listed after it do not match
    (「2 个（`square`）」). 错.
(c) Otherwise the examiner guesses: 对 (nothing looks wrong), or by length with the best threshold and
    direction over the bank (an upper bound: it is fitted with the answers).

:func:`solve` gives the answer for one prompt; :func:`accuracy` scores a bank of items with ``prompt`` and
``answer``, taking the best of the solver's variants, so the bank is measured against its strongest form.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

TOLERANCE = 0.02
_SCALE = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "字节": 1, "ns": 1e-9, "µs": 1e-6, "μs": 1e-6,
          "us": 1e-6, "ms": 1e-3, "s": 1.0, "%": 0.01}
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-−])([-−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?![A-Za-z_\d])"
                     r"\s?(KiB|MiB|GiB|TiB|字节|ns|µs|μs|us|ms|s(?![A-Za-z])|%)?")
#: a negative number this unit follows is a size, a time or a count: none of them is ever negative
_NEVER_NEGATIVE = re.compile(r"(?<![A-Za-z0-9_)·])[-−]\d[\d,.]*\s?(?:KiB|MiB|GiB|字节|ns|µs|ms|s\b|秒|次|个|倍|条|块|层|趟|%)")
_PERCENT = re.compile(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)%")
_ZERO_TIMES = re.compile(r"(?<![\d.])0 倍")
#: words near a number that say it is made of others: 「快 4 倍」, 「正好是」, 「合计」
_CUE = re.compile(r"倍|正好|合计|共|之和|总量|即|等于|一半|之比|比值|加起来")
#: words that stand for a number: 「一半」 is a factor of 2 between two values
_WORDS = {"一半": 2.0, "两倍": 2.0, "翻倍": 2.0}

#: what the false items' wrong values were made by, undone
UNDO_ALL: tuple[Callable[[float], float], ...] = (
    lambda v: v / 10, lambda v: v * 10, lambda v: -v, lambda v: v - 1, lambda v: v + 1, lambda v: (v - 1) / 2,
    lambda v: v / 2, lambda v: v * 2)
UNDO_OLD = UNDO_ALL[:6]  # the old generator's: ×10, ÷10, negated, ±1, 2v+1


def read(text: str) -> list[tuple[float, float]]:
    """The numbers a prompt says as written, each with its unit's scale to a base (bytes, seconds, a fraction
    for %), then the words that stand for one. A number glued to a name (``sm_90a``, ``fc1``, ``H100``) is not one."""
    out = [(float(m.group(1).replace(",", "").replace("−", "-")), _SCALE.get(m.group(2) or "", 1.0))
           for m in _NUMBER.finditer(text)]
    return out + [(v, 1.0) for w, v in _WORDS.items() if w in text]


def numbers(text: str) -> list[float]:
    """:func:`read`'s numbers in their bases."""
    return [v * scale for v, scale in read(text)]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b)) and (a != 0 or b == 0)


def _makes(c: float, a: float, b: float) -> bool:
    """Whether ``c`` is a·b, a/b, a+b or a-b, leaving out what says nothing (×1, ÷1, ±0, c equal to an operand)."""
    if 0 in (a, b) or _close(c, a) or _close(c, b):
        return False
    if a != 1 and b != 1 and (_close(c, a * b) or _close(c, a / b)):
        return True
    return _close(c, a + b) or _close(c, a - b)


def related(values: Sequence[float], i: int) -> bool:
    """Whether ``values[i]`` is one of three numbers (at different places) where one is made of the other two."""
    others = [j for j in range(len(values)) if j != i]
    for j, k in itertools.permutations(others, 2):
        v, a, b = values[i], values[j], values[k]
        if _makes(v, a, b) or _makes(a, v, b) or _makes(a, b, v):
            return True
    return False


def _cued(text: str) -> list[bool]:
    """For each number :func:`numbers` reads (the words after them never cued), whether a cue word is next to it."""
    return [bool(_CUE.search(text[max(0, m.start() - 8):m.end() + 4])) for m in _NUMBER.finditer(text)]


def broken_arithmetic(text: str, undo: Iterable[Callable[[float], float]] = UNDO_ALL, cued: bool = False) -> bool:
    """A number that relates to no two others in the prompt, but would once a perturbation is undone
    (``cued``: only a number with a cue word next to it)."""
    written = read(text)
    values = [v * scale for v, scale in written]
    if len(values) < 3 or len(values) > 40:
        return False
    undo = tuple(undo)
    asked = _cued(text) if cued else [True] * len(values)
    for i, (v, scale) in enumerate(written):
        if v == 0 or not (i < len(asked) and asked[i]) or related(values, i):
            continue
        for u in undo:
            fixed = u(v) * scale  # undone as written: 13 MiB was 12 MiB, not 13 MiB less a byte
            if fixed != values[i] and related([*values[:i], fixed, *values[i + 1:]], i):
                return True
    return False


def implausible(text: str) -> bool:
    """A negative size, time or count; a percentage above 100; a speed-up of 0 times."""
    if _NEVER_NEGATIVE.search(text) or _ZERO_TIMES.search(text):
        return True
    return any(float(m.group(1).replace(",", "")) > 100 for m in _PERCENT.finditer(text))


_LIST = re.compile(r"\d[\d,.]*\s?(?:KiB|MiB|GiB|ms|µs|%)?(?:、\d[\d,.]*\s?(?:KiB|MiB|GiB|ms|µs|%)?){2,}")
#: Chinese numerals before a counter of passes: 「两遍」 says 2; a count of passes said after it in digits
_WORD_NUMBER = re.compile(r"([一两二三四五])[遍次轮趟]")
_PASSES = re.compile(r"(?<![\d.])(\d+)\s?[遍次轮趟]")
_CHINESE = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5}
_PAIR = re.compile(r"(?<![\d.])(\d+)\s?([个条块次])对\s?(\d+)\s?\2")
_OUT_OF = re.compile(r"(?<![\d.])(\d+)\s?([个格条块项层次])(?:里|中|之中|当中)(?:有|的)?\s?(\d+)")
_NEGATED = (re.compile(r"(?:没有|不|无|未)[^。；，（(]{0,16}[（(][^）)]*?(?<![\d.])[1-9]\d*\s?(?:个|次|条|字节|项)"),
            re.compile(r"(?:没有|不|无|未)[^。；]{0,20}?有\s?[1-9]\d*\s?(?:个|次|条|项)"))
_NAMED = re.compile(r"(?<![\d.])(\d+)\s?个\s?[（(]((?:`[^`]+`[、,，\s]*)+)[）)]")


def _parts(text: str) -> list[str]:
    return [p for p in re.split(r"[。；]", text) if p.strip()]


def _monotone(values: Sequence[float]) -> bool:
    steps = [b - a for a, b in itertools.pairwise(values)]
    return all(s > 0 for s in steps) or all(s < 0 for s in steps)


def wrong_magnitude(text: str) -> bool:
    """Rule (d) on magnitudes: a 、-list of three or more numbers that is not monotone but is once one of them is
    divided or multiplied by 10; a number of a part ten times a number its words say (「两遍」); 「A 条对 B 条」
    with A ten times B or more while A / 10 is no more than twice B."""
    for m in _LIST.finditer(text):
        values = [v * scale for v, scale in read(m.group())]
        if len(values) >= 3 and not _monotone(values) and any(
                _monotone([*values[:i], v * f, *values[i + 1:]]) for i, v in enumerate(values) for f in (0.1, 10)):
            return True
    for part in _parts(text):
        for m in _WORD_NUMBER.finditer(part):
            if any(float(n.group(1)) == 10 * _CHINESE[m.group(1)] for n in _PASSES.finditer(part, m.end())):
                return True
    for m in _PAIR.finditer(text):
        a, b = sorted((float(m.group(1)), float(m.group(3))))
        if a > 0 and b >= 10 * a and b / 10 <= 2 * a:
            return True
    return False


def contradicted(text: str) -> bool:
    """Rule (d) on words: a count larger than its total, a nonzero count after a negation, a count the listed
    names do not match, or a magnitude the other numbers make impossible (:func:`wrong_magnitude`)."""
    if any(float(m.group(3)) > float(m.group(1)) for m in _OUT_OF.finditer(text)):
        return True
    if any(r.search(text) for r in _NEGATED):
        return True
    if any(int(m.group(1)) != len(re.findall(r"`[^`]+`", m.group(2))) for m in _NAMED.finditer(text)):
        return True
    return wrong_magnitude(text)


def flags(text: str, undo: Iterable[Callable[[float], float]] = UNDO_ALL, cued: bool = False) -> bool:
    """Whether the prompt gives itself away as false by rule (a), (b) or (d)."""
    return implausible(text) or contradicted(text) or broken_arithmetic(text, undo, cued)


def solve(text: str, undo: Iterable[Callable[[float], float]] = UNDO_ALL, cued: bool = False) -> bool:
    """The examiner's answer (True: 对) with nothing to go on but the text: 错 where a rule flags it, else 对."""
    return not flags(text, undo, cued)


def _length_answers(items: Sequence[Any], undecided: Sequence[int]) -> dict[int, bool]:
    """For the undecided items, the best rule "true when longer than t" (or not longer) over every t."""
    best: tuple[int, dict[int, bool]] = (-1, {})
    lengths = sorted({len(items[i].prompt) for i in undecided})
    for t in [lengths[0] - 1, *lengths] if lengths else []:
        for longer in (True, False):
            answers = {i: (len(items[i].prompt) > t) is longer for i in undecided}
            right = sum(answers[i] is bool(items[i].answer) for i in undecided)
            if right > best[0]:
                best = (right, answers)
    return best[1]


def scores(items: Sequence[Any]) -> dict[str, float]:
    """The accuracy of each variant of the solver on ``items`` (with ``prompt`` and ``answer``): the old or
    the full set of undone perturbations, every number or only cued ones, then 对 or the best length rule
    where no rule flags an item."""
    out = {}
    for (name, undo), cued in itertools.product((("old", UNDO_OLD), ("all", UNDO_ALL)), (False, True)):
        flagged = [flags(o.prompt, undo, cued) for o in items]
        guess = {i: True for i, f in enumerate(flagged) if not f}
        by_length = _length_answers(items, list(guess))
        for fallback, answers in (("对", guess), ("length", by_length)):
            said = [False if f else answers[i] for i, f in enumerate(flagged)]
            out[f"{name}{'+cued' if cued else ''}+{fallback}"] = sum(s is bool(o.answer) for s, o in zip(said, items, strict=True)) / len(items)
    return out


def accuracy(items: Sequence[Any]) -> float:
    """The solver's best accuracy on ``items`` over its variants."""
    return max(scores(items).values())
