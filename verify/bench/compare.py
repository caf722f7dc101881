"""Comparing two benchmark result files: per-call medians, ratios and verdicts."""

from __future__ import annotations

from typing import Any

def per_call(bench: dict[str, Any]) -> float:
    extra = bench.get("extra_info", {})
    if "median_s" in extra:
        return float(extra["median_s"])
    return float(bench["stats"]["median"]) / float(extra.get("inner", 1))


def compare(a: dict[str, Any], b: dict[str, Any], threshold: float = 0.1) -> list[dict[str, Any]]:
    """One row per benchmark in both: medians per call, ratio ``b / a``, and the verdict.

    A row *regresses* when ``b`` is slower than ``a`` by more than ``threshold`` (0.1: 10 %) and
    *improves* when faster by more than it.
    """
    bmap = {x["fullname"]: x for x in b.get("benchmarks", [])}
    rows = []
    for x in a.get("benchmarks", []):
        y = bmap.get(x["fullname"])
        if y is None:
            continue
        ta, tb = per_call(x), per_call(y)
        ratio = tb / ta if ta else float("inf")
        verdict = "regressed" if ratio > 1 + threshold else "improved" if ratio < 1 / (1 + threshold) else "same"
        rows.append({"group": x.get("group"), "name": x["name"], "a_s": ta, "b_s": tb, "ratio": ratio,
                     "verdict": verdict})
    return rows


def machine_line(data: dict[str, Any]) -> str:
    m = data.get("machine_info", {})
    dev = m.get("gpu_name") or m.get("cpu_model") or "?"
    return (f"{dev} · torch {m.get('torch', '?')} ({m.get('torch_build', '?')}) · {m.get('threads', '?')} threads · "
            f"{(data.get('datetime') or '')[:16]}")
