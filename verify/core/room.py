"""How much room a performance claim's bounds leave on a machine's observation.

A perf claim states what holds on any machine that can run it, so every bound it checks keeps
room on every machine we have observations from: the observed value is at least :data:`ROOM`
(relative to the bound) away from it. Exact facts are exempt: equality and ``approx`` (a byte count
or a dtype is the same everywhere, or the claim is wrong); only inequalities are measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.core import matchers
from verify.core.records import JsonObject

ROOM = 0.25
_INEQUALITIES = (">=", ">", "<=", "<", "between")


@dataclass(frozen=True)
class Margin:
    key: str
    bound: str  # as the expectation reads, e.g. ">= 1.2"
    observed: float
    room: float  # relative distance from the nearest bound: 0.3 = 30% away


def _rel(value: float, bound: float) -> float:
    return (value - bound) / abs(bound) if bound else value - bound


def margins(expect: JsonObject, observed: JsonObject) -> list[Margin]:
    """The room of every inequality in ``expect`` on ``observed`` (keys it did not observe are left out)."""
    out = []
    for key, expected in expect.items():
        value = observed.get(key)
        if not matchers.is_matcher(expected) or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        (op, arg), = expected.items()
        if op not in _INEQUALITIES:
            continue
        if op in (">=", ">"):
            room = _rel(value, arg)
        elif op in ("<=", "<"):
            room = -_rel(value, arg)
        else:
            room = min(_rel(value, arg[0]), -_rel(value, arg[1]))
        out.append(Margin(key, matchers.describe(expected), float(value), room))
    return out
