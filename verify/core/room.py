"""How much room a measured claim's bounds leave on a machine's observation.

A measured claim (``perf``, or a ``measured`` fact: an error ratio, an allocator- or
schedule-dependent count) states what holds on any machine that can run it, so every bound it
checks keeps room on every machine we have observations from and under every stress variant
(``verify stress``): the observed value is at least :data:`ROOM` (relative to the bound) away from
it. Exact facts are exempt (a byte count or a dtype is the same everywhere, or the claim is wrong),
and so are equality and ``approx``: only inequalities are measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.core import matchers
from verify.core.records import JsonObject

ROOM = 0.25
_INEQUALITIES = (">=", ">", "<=", "<", "between")
#: the kinds whose observed values differ between machines: the room rule applies to them
MEASURED = frozenset({"perf", "measured"})


def is_measured(kind: str) -> bool:
    return kind in MEASURED


def bounded(expect: JsonObject) -> list[str]:
    """The keys of ``expect`` checked by an inequality: what the room rule measures."""
    return [key for key, expected in expect.items()
            if matchers.is_matcher(expected) and next(iter(expected)) in _INEQUALITIES]


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
