"""Compare observed values with what a claim expects.

An expected value is either a plain literal (compared with ``==`` after normalising tuples to
lists) or a one-key dict naming a matcher::

    {">=": 2.0}   {"<": 0.01}   {"approx": [1.0, 0.05]}   {"contains": "view size"}
    {"in": ["a", "b"]}   {"between": [0.5, 2.0]}   {"type": "bool"}
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from verify.core.records import JsonObject

_MISSING = object()


def _num(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, observed {value!r}")
    return float(value)


def _approx(obs: Any, arg: Any) -> bool:
    target, rel = arg
    return math.isclose(_num(obs), float(target), rel_tol=float(rel))


MATCHERS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": lambda obs, arg: _num(obs) >= arg,
    ">": lambda obs, arg: _num(obs) > arg,
    "<=": lambda obs, arg: _num(obs) <= arg,
    "<": lambda obs, arg: _num(obs) < arg,
    "!=": lambda obs, arg: normalise(obs) != normalise(arg),
    "between": lambda obs, arg: arg[0] <= _num(obs) <= arg[1],
    "approx": _approx,
    "contains": lambda obs, arg: str(arg) in str(obs),
    "in": lambda obs, arg: normalise(obs) in normalise(arg),
    "type": lambda obs, arg: type(obs).__name__ == arg,
}


def normalise(value: Any) -> Any:
    """Tuples become lists so that JSON round trips compare equal."""
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    return value


def is_matcher(expected: Any) -> bool:
    return isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)) in MATCHERS


def describe(expected: Any) -> str:
    """Human-readable form of an expected value, for badges and failure summaries."""
    if is_matcher(expected):
        (op, arg), = expected.items()
        return f"{op} {arg!r}"
    return f"== {normalise(expected)!r}"


def check(expect: JsonObject, observed: JsonObject) -> list[str]:
    """Return one message per mismatch; an empty list means every expectation holds."""
    problems: list[str] = []
    for key, expected in expect.items():
        obs = observed.get(key, _MISSING)
        if obs is _MISSING:
            problems.append(f"{key}: expected {describe(expected)}, but the snippet did not observe it")
            continue
        try:
            if is_matcher(expected):
                (op, arg), = expected.items()
                ok = MATCHERS[op](obs, arg)
            else:
                ok = normalise(obs) == normalise(expected)
        except (TypeError, ValueError, IndexError) as exc:
            problems.append(f"{key}: cannot compare {obs!r} with {describe(expected)}: {exc}")
            continue
        if not ok:
            problems.append(f"{key}: expected {describe(expected)}, observed {obs!r}")
    return problems
