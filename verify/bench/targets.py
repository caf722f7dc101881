"""The project's own speed targets, kept beside a benchmark's result as met or missed.

A target is an absolute number on one machine ("第一题在 0.5 s 内出现"), so it is shown, never
asserted: the test asserts only relations measured within its own run, with room on every machine
we have, and a missed target never stops ``make site`` or ``make serve``. The ``bench`` fence
shows each target under its table, with the machine.
"""

from __future__ import annotations

from typing import Any


def target(benchmark: Any, text: str, met: bool) -> None:
    """Record ``text`` as this result's target, and whether this run met it."""
    benchmark.extra_info.update(target=text, target_met=bool(met))
