"""Problem folders against their schema, and each problem's claim keyed by every file of its folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verify.core import registry
from verify.judge import problem

REPO = Path(__file__).resolve().parent.parent
PROBLEMS = problem.all_problems(REPO)


def test_the_first_problems_are_there_with_their_fixed_interfaces():
    by_id = {p.id: p for p in PROBLEMS}
    assert by_id["rmsnorm-torch"].interface == ("def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) "
                                                "-> torch.Tensor")
    assert by_id["topo-sort-python"].interface == "def topo_sort(n: int, edges: list[tuple[int, int]]) -> list[int]"
    assert by_id["softmax-torch"].interface == "def softmax(x: torch.Tensor) -> torch.Tensor"
    # fixed for tests outside this suite too (issue 38): the Triton softmax and the C++ LRU cache
    assert by_id["softmax-triton"].interface == "def softmax(x: torch.Tensor) -> torch.Tensor"
    assert (by_id["softmax-triton"].language, by_id["softmax-triton"].entry) == ("triton", "softmax")
    lru = by_id["lru-cache-cpp"]
    assert lru.language == "cpp" and lru.entry == "LRUCache"
    starter = lru.starter.read_text(encoding="utf-8")
    for part in ("class LRUCache", "explicit LRUCache(int capacity)", "int get(int key)", "void put(int key, int value)"):
        assert part in starter, part
    assert len(PROBLEMS) >= 20


def _closure(path: Path) -> set[str]:
    """Every file the claim in ``path`` is keyed by: its imports and named files, followed transitively (the
    registry keys a claim by the code it imports, and by what that code imports and names in turn)."""
    seen: set[str] = set()
    todo = [path.relative_to(REPO).as_posix()]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        if rel.endswith(".py"):
            facts = registry.analyse(REPO / rel, REPO)
            todo += [*facts.imports, *facts.named]
    return seen


@pytest.mark.parametrize("p", PROBLEMS, ids=lambda p: p.id)
def test_every_file_of_a_problem_keys_its_claim(p):
    """A changed solution, mutant, case or data file re-runs the problem's claim: the claim imports or names it,
    or imports a module of the folder that names it (a C++ problem's ``solutions/sources.py``)."""
    claim_file = p.path / "judged.py"
    facts = registry.analyse(claim_file, REPO)
    assert any(c.id == f"judge.{p.id}" for c in facts.claims)
    keyed = _closure(claim_file)
    files = {f.relative_to(REPO).as_posix() for f in p.path.rglob("*") if f.is_file() and "__pycache__" not in f.parts}
    assert not files - keyed, f"{claim_file} neither imports nor names: {sorted(files - keyed)}"
    assert "verify/judge/selfcheck.py" in keyed  # the judge's own code keys it too
    if p.language == "cpp":  # and, for C++, the builder and the way the judge runs a program
        assert {"verify/cxx.py", "verify/judge/cpp.py"} <= keyed


@pytest.mark.parametrize("p", PROBLEMS, ids=lambda p: p.id)
def test_a_problem_names_pages_that_exist(p):
    for q in p.questions:
        assert (REPO / "docs" / "questions" / f"{q}.md").is_file(), q
    assert f"judge.{p.id}" in (REPO / "docs" / "judge.md").read_text(encoding="utf-8")


def _copy(tmp_path: Path, p: problem.Problem) -> Path:
    folder = tmp_path / p.path.name
    shutil.copytree(p.path, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_the_schema_refuses_an_unknown_key_and_a_wrong_type(tmp_path):
    folder = _copy(tmp_path, PROBLEMS[0])
    text = (folder / problem.FILE).read_text(encoding="utf-8")
    (folder / problem.FILE).write_text(text + "colour: red\n", encoding="utf-8")
    with pytest.raises(problem.ProblemError, match="colour"):
        problem.load(folder)
    (folder / problem.FILE).write_text(text.replace("seed: 38", "seed: '38'"), encoding="utf-8")
    with pytest.raises(problem.ProblemError, match="seed"):
        problem.load(folder)


def test_a_mutant_without_a_hint_and_a_lone_mutant_are_refused(tmp_path):
    folder = _copy(tmp_path, PROBLEMS[0])
    first = sorted((folder / "mutants").glob("*.py"))[0]
    shutil.copy(first, folder / "mutants" / "unexplained.py")
    with pytest.raises(problem.ProblemError, match="unexplained"):
        problem.load(folder)
    for extra in sorted((folder / "mutants").glob("*.py"))[1:]:
        extra.unlink()
    with pytest.raises(problem.ProblemError, match="fewer than two"):
        problem.load(folder)


def test_a_folder_not_named_after_its_id_is_refused(tmp_path):
    folder = _copy(tmp_path, PROBLEMS[0])
    moved = folder.rename(tmp_path / "elsewhere")
    with pytest.raises(problem.ProblemError, match="lives in a folder named"):
        problem.load(moved)
