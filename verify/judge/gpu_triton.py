"""The GPU sections of a triton problem (not written yet: no section is shown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify.judge.gpu import Section
from verify.judge.problem import Problem


def sections(problem: Problem, candidate: Path, prepared: Any) -> list[Section]:
    return []
