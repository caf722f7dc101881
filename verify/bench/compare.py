"""Comparing two benchmark result files: per-call medians, ratios and verdicts."""

from __future__ import annotations

from dataclasses import dataclass

from verify.bench.results import BenchMachine, Results


@dataclass(frozen=True)
class Comparison:
    """One benchmark in both files: its medians per call (seconds), ``b / a``, and the verdict."""

    group: str | None
    name: str
    a_s: float
    b_s: float
    ratio: float
    verdict: str  # regressed | improved | same


def compare(a: Results, b: Results, threshold: float = 0.1) -> list[Comparison]:
    """One row per benchmark in both: medians per call, ratio ``b / a``, and the verdict.

    A row *regresses* when ``b`` is slower than ``a`` by more than ``threshold`` (0.1: 10 %) and
    *improves* when faster by more than it.
    """
    bmap = {y.fullname: y for y in b.benchmarks}
    rows = []
    for x in a.benchmarks:
        y = bmap.get(x.fullname)
        if y is None:
            continue
        ta, tb = x.per_call, y.per_call
        ratio = tb / ta if ta else float("inf")
        verdict = "regressed" if ratio > 1 + threshold else "improved" if ratio < 1 / (1 + threshold) else "same"
        rows.append(Comparison(x.group, x.name, ta, tb, ratio, verdict))
    return rows


def _shown(value: object) -> str:
    return "?" if value is None else str(value)


def machine_line(data: Results) -> str:
    m = data.machine or BenchMachine.from_json({})
    return (f"{m.name} · torch {_shown(m.torch)} ({_shown(m.torch_build)}) · {_shown(m.threads)} threads · "
            f"{(data.datetime or '')[:16]}")
