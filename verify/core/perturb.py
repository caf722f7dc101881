"""Plausible wrong values: what a claim's observation would be if the mechanism were otherwise.

A claim that no wrong observation could fail checks nothing. :func:`wrong_values` gives, for one
observed value, the values a mistaken mechanism would plausibly produce: a flipped flag, a number
ten times larger or smaller, negated, off by one or zero, a list reversed, shortened or with an
element changed, a string emptied or changed. :func:`can_fail` says whether a claim's expectation
rejects at least one of them on some key it expects (``tests/test_failability.py`` runs it on every
claim with a recorded observation). The same values can make false statements for practice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from verify.core import matchers
from verify.core.records import JsonObject


def wrong_values(value: Any) -> Iterator[Any]:
    """Values a wrong mechanism would plausibly have produced instead of ``value`` (never ``value`` itself)."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, (int, float)):
        candidates = [value * 10, value / 10, -value, value + 1, value - 1, 0, 2 * value + 1]
        if isinstance(value, int):
            candidates = [int(c) if isinstance(c, float) and c.is_integer() else c for c in candidates]
        seen = set()
        for c in candidates:
            if c != value and not (isinstance(c, float) and not math.isfinite(c)) and c not in seen:
                seen.add(c)
                yield c
    elif isinstance(value, str):
        for text in ("", value + "?", value[::-1], "other"):
            if text != value:
                yield text
    elif isinstance(value, (list, tuple)):
        items = list(value)
        if len(items) > 1 and items[::-1] != items:
            yield items[::-1]
        if items:
            yield items[:-1]
            for wrong in wrong_values(items[0]):
                yield [wrong, *items[1:]]
                break
        yield [*items, items[-1] if items else 0]
    elif isinstance(value, dict):
        for key, inner in value.items():
            for wrong in wrong_values(inner):
                yield {**value, key: wrong}
                break
    elif value is None:
        yield 0


def likely_wrong_values(value: Any) -> Iterator[Any]:
    """The wrong values a reader could not tell from the true one without knowing the mechanism, most likely
    first: a flipped flag; a number doubled or halved (both directions counted, two bytes for four), one more
    or less for a small count, then ten times more or less, then zero. Never a sign the true value lacks (a
    negative size, time or count is no mechanism's result). Lists and the rest as :func:`wrong_values`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list, tuple)):
        yield from wrong_values(value)
        return
    if isinstance(value, (list, tuple)):
        items = list(value)
        if len(items) > 1 and items[::-1] != items:
            yield items[::-1]
        for i, item in enumerate(items):
            for wrong in likely_wrong_values(item):
                yield [*items[:i], wrong, *items[i + 1:]]
                break
        return
    small = isinstance(value, int) and abs(value) <= 64
    candidates = [value * 2, value / 2, *((value + 1, value - 1) if small else ()), value * 10, value / 10, 0]
    seen = set()
    for c in candidates:
        if isinstance(value, int) and isinstance(c, float) and c.is_integer():
            c = int(c)
        if c != value and c not in seen and (c >= 0 or value < 0) and not (isinstance(c, float) and not math.isfinite(c)):
            seen.add(c)
            yield c



def close_wrong_values(value: Any) -> Iterator[Any]:
    """:func:`likely_wrong_values` without ten times more or less: the wrong values a sentence can say without
    saying an impossible magnitude (「线性增长：1、20、4 MiB」 and 「两遍法是 20 次归约」 give themselves away).
    A dict's values are each changed so, one at a time (:func:`wrong_values` would change a dict's first
    value tenfold); a list as :func:`likely_wrong_values` changes it (an element doubled or halved, never tenfold)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            for wrong in close_wrong_values(inner):
                yield {**value, key: wrong}
        return
    tenfold = isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0
    for wrong in likely_wrong_values(value):
        if not (tenfold and isinstance(wrong, (int, float)) and wrong != 0
                and any(math.isclose(wrong, value * f) for f in (10, 0.1))):
            yield wrong

_TYPE_VALUES = {"bool": True, "int": 1, "float": 1.0, "str": "text", "list": [1], "dict": {"k": 1}}


def stand_in(expected: Any) -> Any:
    """A value near what ``expected`` accepts, for a claim nothing observed yet (a CUDA claim on a CPU):
    a literal itself, a bound's edge, an approximation's target, a contained string, a member."""
    if not matchers.is_matcher(expected):
        return expected
    (op, arg), = expected.items()
    if op in ("between", "approx"):
        return arg[0]
    if op == "in":
        return arg[0] if arg else None
    if op == "type":
        return _TYPE_VALUES.get(arg)
    return arg


def rejected(expect: JsonObject, observed: JsonObject, keys: Iterable[str] | None = None,
             values: Callable[[Any], Iterable[Any]] = wrong_values) -> Iterator[tuple[str, Any]]:
    """``(key, wrong value)`` for each plausible wrong value (``values`` of the observed one) of an expected key
    (of ``keys``, default every expected key) that the key's expectation rejects: what the observation would be
    were the mechanism otherwise."""
    for key in expect if keys is None else keys:
        if key not in expect or key not in observed:
            continue
        for wrong in values(observed[key]):
            if matchers.check({key: expect[key]}, {**observed, key: wrong}):
                yield key, wrong


def can_fail(expect: JsonObject, observed: JsonObject | None = None) -> bool:
    """Whether changing one expected key of ``observed`` to a plausible wrong value breaks the expectation.

    Without an observation each key stands in with :func:`stand_in` of what it expects.
    """
    if observed is None:
        observed = {key: stand_in(expected) for key, expected in expect.items()}
    return next(rejected(expect, observed), None) is not None
