"""A problem as data: one folder under ``snippets/judge/``, its ``problem.yaml`` read through one schema.

The folder holds ``problem.yaml`` (this schema), ``statement.md`` (Chinese: the interface and its
constraints), ``reference.py`` (``reference(*args)``, float64 or exact; it raises where the candidate must
raise; an optional ``check(args, got)`` for a problem whose answer is not unique), ``cases.py``
(``cases(seed)``: named edge cases, then random ones drawn from the seed), ``starter.py``, ``solutions/``
(at least one correct file) and ``mutants/`` (at least two known-wrong files, each named after its bug and
given a one-line hint under ``mutants:``). The schema refuses unknown keys, a missing hint, a mutant file
without one and the reverse.

A C++ problem (``language: cpp``) has the same files, except that its starter, solutions and mutants are C++
(``.h``/``.cpp``), and it adds ``driver.cpp`` (``driver:``): the program that ``#include``s the candidate's file,
runs the cases and prints each outcome. Its ``sanitizers:`` say how it is built (``[address, undefined]`` or
``[thread]``: :mod:`verify.cxx`); its cases and expected values are still computed in Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import msgspec
import yaml

from verify.errors import ClaimError

PROBLEMS = Path("snippets") / "judge"
#: the languages whose cases and outputs are tensors (a numba solution is given and returns NumPy arrays)
TENSORS = ("torch", "triton", "numba")
#: the languages whose solution must launch a kernel
KERNELS = ("triton", "numba")
FILE = "problem.yaml"

_Id = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=60)]
_Name = Annotated[str, msgspec.Meta(pattern=r"^[a-z_][a-z0-9_]*$", max_length=60)]
_Entry = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=60)]  # a C++ class too
_Op = Annotated[str, msgspec.Meta(pattern=r"^aten\.[A-Za-z0-9_]+$", max_length=80)]
_Dotted = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][\w.]*$", max_length=120)]
_Text = Annotated[str, msgspec.Meta(min_length=1, max_length=400)]


class ProblemError(ClaimError):
    """A problem folder that does not fit the schema: the message names the file and what is wrong."""


class Tolerance(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    rtol: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    atol: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    reason: _Text = "结果是精确的：整数或逐位相同"


class Output(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: _Name
    dtype: Literal["float32", "float64", "int8", "int32", "int64", "bool"] = "float32"


class Ops(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    required: list[list[_Op]] = []  # each inner list: one of these must run (alternatives)
    forbidden: list[_Op] = []
    #: a kernel problem: the only operators the solution's own PyTorch code may run (allocation, views,
    #: copies); the arithmetic must happen in the kernel. Empty: no such list.
    allowed: list[_Op] = []


class Problem(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    id: _Id
    title: _Text
    #: python and torch run in the child as they are; triton in Triton's interpreter, numba in numba's CUDA
    #: simulator (both on the CPU, a kernel launch required); cpp compiled by g++ with sanitizers
    language: Literal["python", "torch", "triton", "numba", "cpp"]
    entry: _Entry
    interface: _Text
    questions: Annotated[list[_Id], msgspec.Meta(min_length=1)]
    tolerance: Tolerance
    mutants: dict[_Name, _Text]
    imports: list[_Name]
    seed: Annotated[int, msgspec.Meta(ge=0, lt=2**31)] = 38
    timeout_s: Annotated[float, msgspec.Meta(gt=0, le=120)] = 30.0
    outputs: list[Output] = []  # a PyTorch problem: one tensor, or a tuple of these in order
    ops: Ops = Ops()
    forbidden_calls: list[_Dotted] = []
    #: a C++ problem: how its program is built (ASan with UBSan, or TSan) and the file that drives the cases
    sanitizers: list[Literal["address", "undefined", "thread"]] = []
    driver: Annotated[str, msgspec.Meta(pattern=r"^[a-z_][a-z0-9_]*\.cpp$")] = "driver.cpp"
    folder: str = ""  # filled in by load(): where the problem lives

    @property
    def path(self) -> Path:
        return Path(self.folder)

    @property
    def suffixes(self) -> tuple[str, ...]:
        """What a solution's file ends with: C++ for a C++ problem, else Python."""
        return CPP_SUFFIXES if self.language == "cpp" else (".py",)

    @property
    def starter(self) -> Path:
        """The file a candidate starts from (``starter.py``, or ``starter.h``/``.cpp`` for C++)."""
        found = [self.path / f"starter{s}" for s in self.suffixes if (self.path / f"starter{s}").is_file()]
        return found[0] if found else self.path / f"starter{self.suffixes[0]}"

    @property
    def refused_calls(self) -> list[str]:
        """The calls the child replaces with a stub that fails the run: the problem's own, and for a PyTorch
        problem the two ways between a tensor and a NumPy array, so that the arithmetic cannot move to NumPy
        by them (``torch.tensor`` of an array still can: the operator log only shows that the required
        operators ran)."""
        return [*self.forbidden_calls, *(NUMPY_BRIDGE if self.language == "torch" else [])]

    def solutions(self) -> list[Path]:
        return _files(self.path / "solutions", self.suffixes)

    def mutant_files(self) -> list[Path]:
        return _files(self.path / "mutants", self.suffixes)


CPP_SUFFIXES = (".h", ".cpp")
#: refused in every PyTorch problem (no solution needs them); ``Tensor.__array__`` goes through ``Tensor.numpy``
NUMPY_BRIDGE = ["torch.Tensor.numpy", "torch.from_numpy"]


def _files(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix in suffixes and p.is_file()
                  and not p.name.startswith("_")) if folder.is_dir() else []


def load(folder: Path) -> Problem:
    """The problem in ``folder``; :class:`ProblemError` naming the file when it does not fit."""
    where = folder / FILE
    try:
        data = yaml.safe_load(where.read_text(encoding="utf-8"))
        problem = msgspec.convert(data, Problem, strict=True)
    except (OSError, yaml.YAMLError, msgspec.ValidationError) as exc:
        raise ProblemError(f"{where}: {exc}") from None
    problem = msgspec.structs.replace(problem, folder=str(folder))
    problems = []
    if folder.name != module_name(problem.id):
        problems.append(f"id {problem.id!r} lives in a folder named {module_name(problem.id)!r}, not {folder.name!r}")
    for name in ("statement.md", "reference.py", "cases.py"):
        if not (folder / name).is_file():
            problems.append(f"{name} is missing")
    starters = [f"starter{s}" for s in problem.suffixes]
    if not any((folder / name).is_file() for name in starters):
        problems.append(f"{' or '.join(starters)} is missing")
    problems += _cpp_problems(problem, folder)
    if not problem.solutions():
        problems.append("solutions/ holds no correct solution")
    files = {p.stem for p in problem.mutant_files()}
    if len(files) < 2:
        problems.append("mutants/ holds fewer than two known-wrong solutions")
    if files != set(problem.mutants):
        problems.append(f"mutants without a hint: {sorted(files - set(problem.mutants))}; hints without a file: "
                        f"{sorted(set(problem.mutants) - files)}")
    if problem.language in TENSORS and not problem.outputs:
        problems.append(f"a {problem.language} problem names its outputs (name and dtype)")
    if problems:
        raise ProblemError(f"{where}: " + "; ".join(problems))
    return problem


def _cpp_problems(problem: Problem, folder: Path) -> list[str]:
    if problem.language != "cpp":
        return ["sanitizers and driver are for a C++ problem"] if problem.sanitizers else []
    out = [] if (folder / problem.driver).is_file() else [f"{problem.driver} is missing"]
    if not problem.sanitizers or ("thread" in problem.sanitizers and len(set(problem.sanitizers)) > 1):
        out.append("a C++ problem names its sanitizers: [address, undefined] (or part of it), or [thread] alone")
    if problem.imports:
        out.append("a C++ problem imports nothing: imports: []")
    return out


def module_name(problem_id: str) -> str:
    """The folder of a problem: its id as a Python name, so that its claim can import its files (their
    code keys the claim's records: ``verify.core.registry`` follows imports, not folders)."""
    return problem_id.replace("-", "_")


def folder_of(root: Path) -> Path:
    return root / PROBLEMS


def all_problems(root: Path) -> list[Problem]:
    """Every problem under ``snippets/judge/`` of the checkout at ``root``, by id."""
    base = folder_of(root)
    return [load(p) for p in sorted(base.iterdir()) if (p / FILE).is_file()] if base.is_dir() else []


def find(root: Path, problem_id: str) -> Problem:
    folder = folder_of(root) / module_name(problem_id)
    if not (folder / FILE).is_file():
        known = ", ".join(p.id for p in all_problems(root))
        raise ProblemError(f"没有这道题：{problem_id}（已有：{known}）")
    return load(folder)
