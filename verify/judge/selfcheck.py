"""What a problem's claim observes: every correct solution passes, every mutant fails and is named.

A mutant is named when the judge's report on it names that very mutant: its outcome on its first failing
case is told apart from every other known bug's, so a candidate with that bug is shown its hint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify.judge import judge, problem


def observe(folder: Path) -> dict[str, Any]:
    """Judge each solution and mutant of the problem in ``folder``; what a claim returns."""
    p = problem.load(folder)
    reports = judge.judge_all(p, [*p.solutions(), *p.mutant_files()])
    solutions = {f.stem: reports[f.stem] for f in p.solutions()}
    mutants = {f.stem: reports[f.stem] for f in p.mutant_files()}
    return {
        "problem": p.id, "seed": p.seed, "solutions": len(solutions), "mutants": len(mutants),
        "cases": max((r.cases for r in solutions.values()), default=0),
        "solutions_failed": sorted(f"{k}: {r.case} {r.reason}" for k, r in solutions.items() if r.verdict != "pass"),
        "mutants_passed": sorted(f"{k}: {r.verdict}" for k, r in mutants.items() if r.verdict != "fail"),
        "mutants_unnamed": sorted(f"{k}: {r.mutant or '-'}" for k, r in mutants.items() if r.mutant != k),
        "mutant_cases": {k: f"{r.case}：{r.reason}" for k, r in mutants.items()},
    }
