"""A numba problem's CUDA C++ starter: ``verify judge show`` names it as compiled only, and its reference's CUDA C++
version has a claim that compiles it (issue 38: nothing runs CUDA C++ here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from verify.cli.main import app
from verify.core import registry
from verify.judge import problem

REPO = Path(__file__).resolve().parent.parent
PROBLEMS = problem.all_problems(REPO)
WITH_CU = [p for p in PROBLEMS if (p.path / "starter.cu").is_file()]


def _show(problem_id: str):
    return CliRunner().invoke(app, ["judge", "show", problem_id, "--root", str(REPO)], prog_name="verify",
                              env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_the_two_numba_problems_have_a_cuda_starter():
    assert {p.id for p in WITH_CU} >= {"row-sum-numba", "transpose-numba"}
    assert all(p.language == "numba" for p in WITH_CU)


@pytest.mark.parametrize("p", WITH_CU, ids=lambda p: p.id)
def test_show_names_the_cuda_starter_as_compiled_and_never_run(p):
    out = _show(p.id)
    assert out.exit_code == 0, out.output
    assert str(p.path / "starter.cu") in out.output
    assert "从不运行" in out.output and "sm_80 / sm_90a" in out.output
    assert p.starter.read_text(encoding="utf-8").splitlines()[0] in out.output  # the Python starter is still shown


def test_show_says_nothing_of_cuda_where_there_is_no_starter_cu_and_shows_a_cpp_starter():
    plain = next(p for p in PROBLEMS if p.language == "numba" and p not in WITH_CU)
    out = _show(plain.id)
    assert out.exit_code == 0, out.output
    assert "starter.cu" not in out.output
    cpp = next(p for p in PROBLEMS if p.language == "cpp")
    out = _show(cpp.id)
    assert out.exit_code == 0, out.output
    assert cpp.starter.suffix != ".py" and str(cpp.starter) in out.output  # show printed starter.py before


@pytest.mark.parametrize("p", WITH_CU, ids=lambda p: p.id)
def test_a_cuda_starter_comes_with_a_compiled_reference_and_its_claim(p):
    """The reference's CUDA C++ version sits beside the starter, is no Python solution, and a claim of the problem's
    judged.py compiles both (it names the files, so a change to either re-runs it); docs/judge.md shows it."""
    assert (p.path / "reference.cu").is_file()
    assert all(f.suffix == ".py" for f in p.solutions())
    facts = registry.analyse(p.path / "judged.py", REPO)
    spec = next(c for c in facts.claims if c.id == f"judge.{p.id}.cuda-compiled")
    assert list(spec.needs) == ["nvcc"]  # the page's scope tag says 编译: compiled, not run
    named = {Path(n).name for n in facts.named}
    assert {"reference.cu", "starter.cu"} <= named
    kernel = re.search(r"__global__ void (\w+)\(", (p.path / "starter.cu").read_text(encoding="utf-8"))
    assert kernel and f"__global__ void {kernel.group(1)}(" in (p.path / "reference.cu").read_text(encoding="utf-8")
    assert f"judge.{p.id}.cuda-compiled" in (REPO / "docs" / "judge.md").read_text(encoding="utf-8")
