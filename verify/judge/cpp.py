"""C++ problems: built by the project's g++ builder with sanitizers, run by the problem's driver (not built yet)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify.judge.problem import Problem, ProblemError


def run_child(problem: Problem, candidate: Path, prepared: Any, work: Path) -> tuple[Any, Any]:
    raise ProblemError(f"{problem.path}: C++ problems cannot be judged yet")
