"""Judging one candidate file on one problem: cases and expected values here, the candidate in the child.

:func:`judge` draws the cases from the seed, computes every expected value in this process (the
reference in float64, or exact), runs the candidate in a child (:mod:`verify.judge.sandbox`), and reads
what it sent back as untrusted data. A case fails on a refused import, a forbidden call or operator, a
log without the required operators (an empty one included: ``torch._C._DisableTorchDispatch`` leaves it
empty), a changed input, an outcome that does not match (:mod:`verify.judge.compare`), or an exception of a
type the reference raises on some case (the problem's way to say 「无解」) raised where it should not be; any
other exception is an error of the candidate's code (exit 2). The first failing
case is compared with each known-wrong solution's outcome on the same case, to name the bug it looks like.
"""

from __future__ import annotations

import json
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from verify.judge import child, compare, loading, sandbox
from verify.judge.compare import Mismatch, Outcome
from verify.judge.gpu import Section
from verify import toolchain
from verify.judge.problem import KERNELS, TENSORS, Problem

Verdict = Literal["pass", "fail", "error"]
EXIT = {"pass": 0, "fail": 1, "error": 2}


@dataclass
class Report:
    problem: str
    candidate: str
    seed: int
    verdict: Verdict = "pass"
    cases: int = 0
    passed: int = 0
    case: str = ""  # the first failing case
    reason: str = ""
    mismatches: list[Mismatch] = field(default_factory=list)
    mutant: str = ""  # the known-wrong solution the output matches
    hint: str = ""
    detail: str = ""  # a traceback or the child's output, for an error
    isolation: str = ""
    seconds: float = 0.0
    gpu: list[Section] = field(default_factory=list)  # a kernel problem's GPU sections (verify.judge.gpu)

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]

    def fail(self, verdict: Verdict, case: str, reason: str, mismatches: list[Mismatch] | None = None,
             detail: str = "") -> None:
        if self.verdict == "pass":  # the first failing case is the one reported
            self.verdict, self.case, self.reason, self.detail = verdict, case, reason, detail
            self.mismatches = list(mismatches or [])


@dataclass(frozen=True)
class Prepared:
    names: list[str]
    args: list[tuple[Any, ...]]
    expected: list[Outcome]


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Outcome:
    try:
        return Outcome(value=fn(*args))
    except Exception as exc:  # noqa: BLE001  (a reference or a mutant raising is an outcome)
        return Outcome(error=(type(exc).__name__, str(exc)))


def _copy(value: Any, double: bool = False) -> Any:
    if hasattr(value, "detach"):
        value = value.detach().clone()
        return value.double() if double and value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v, double) for v in value)
    return value


def prepare(problem: Problem, seed: int) -> Prepared:
    """The cases drawn from ``seed`` and the reference's outcome for each (float64 for tensors)."""
    drawn = loading.module(problem.path / "cases.py", "cases").cases(seed)
    reference = loading.module(problem.path / "reference.py", "reference").reference
    names, args = [n for n, _ in drawn], [tuple(a) for _, a in drawn]
    return Prepared(names, args, [_call(reference, _copy(a, double=True)) for a in args])


def _same_inputs(before: tuple[Any, ...], after: Any) -> bool:
    if not isinstance(after, (list, tuple)) or len(after) != len(before):
        return False
    for b, a in zip(before, after):
        if hasattr(b, "detach"):
            import torch  # noqa: PLC0415

            if not isinstance(a, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                return False
            if not bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all()):
                return False
        elif b != a:
            return False
    return True


def _value_check(problem: Problem) -> Callable[[Any, Any], list[Mismatch]]:
    if problem.language not in TENSORS:
        return compare.exact
    return lambda e, g: compare.outputs(e, g, problem.outputs, problem.tolerance)


def _ops(problem: Problem, got: dict[str, Any]) -> str:
    """Why the operator log (and, for a kernel problem, its launches) fails the case, or ''."""
    if problem.language not in TENSORS:
        return ""
    ops = [str(op) for op in got.get("ops", [])]
    if problem.language in KERNELS:
        return _launched(problem, got, ops)
    if not ops:
        return "没有记录到任何 torch 算子：结果不是用 torch 算出来的（或关掉了 dispatch）"
    used = set(ops)
    forbidden = sorted(used & set(problem.ops.forbidden))
    if forbidden:
        return f"用了本题禁止的算子：{', '.join(forbidden)}"
    for group in problem.ops.required:
        if not used & set(group):
            return f"没有用到必需的算子（{' 或 '.join(group)} 之一）；记录到的：{', '.join(ops[:12])}"
    return ""


def _launched(problem: Problem, got: dict[str, Any], ops: list[str]) -> str:
    """A kernel problem: a kernel ran, the value is what it wrote, and outside it only allowed operators ran."""
    if not got.get("launches"):
        return "没有启动任何核函数：本题要求结果由核函数算出"
    outside = sorted(set(ops) & set(problem.ops.forbidden) |
                     (set(ops) - set(problem.ops.allowed) if problem.ops.allowed else set()))
    if outside:
        return f"核函数之外用 torch 算了本该在核函数里算的东西（{', '.join(outside[:8])}）"
    if not got.get("kernel_wrote"):
        return "返回的结果不是核函数写下的：它和任何一次核函数启动后留下的数组都不一样"
    return ""


def _run_child(problem: Problem, candidate: Path, prepared: Prepared, work: Path) -> tuple[sandbox.Run, Any]:
    if problem.language == "cpp":  # compiled with sanitizers and run by its driver: verify.judge.cpp
        from verify.judge import cpp  # noqa: PLC0415

        return cpp.run_child(problem, candidate, prepared, work)
    ran, results = _spawn(problem, [candidate], prepared, work)
    return ran, results[0]


def _run_children(problem: Problem, files: list[Path], prepared: Prepared, work: Path) -> list[Any]:
    """The result of each file on the cases, from one child (a C++ file: one build and run each)."""
    if problem.language == "cpp":
        from verify.judge import cpp  # noqa: PLC0415

        return [cpp.run_child(problem, f, prepared, work / f"m{k}")[1] for k, f in enumerate(files)]
    return _spawn(problem, files, prepared, work)[1]


def _spawn(problem: Problem, files: list[Path], prepared: Prepared, work: Path,
           timeout_s: float | None = None) -> tuple[sandbox.Run, list[Any]]:
    cases = work / "cases.bin"
    child.save(cases, prepared.args, problem.language)
    files = [f.resolve() for f in files]  # the sandbox binds folders by absolute path
    runs = [{"candidate": str(f), "result": str(work / f"result{k}.bin")} for k, f in enumerate(files)]
    tools = str(toolchain.folder()) if problem.language in KERNELS else ""
    spec = work / "spec.json"
    spec.write_text(json.dumps({"language": problem.language, "entry": problem.entry, "runs": runs,
                                "imports": problem.imports, "forbidden_calls": problem.refused_calls,
                                "cases": str(cases), "tools": tools}), encoding="utf-8")
    ran = sandbox.run(spec, work, files[0].parent, timeout_s or problem.timeout_s)
    return ran, [_read(problem, Path(r["result"])) if ran.returncode == 0 else None for r in runs]


def _read(problem: Problem, result: Path) -> Any:
    try:
        return child.load(result, problem.language) if result.is_file() else None
    except Exception:  # noqa: BLE001  (the child's file is untrusted: any failure to read it is an error)
        return None


def judge(problem: Problem, candidate: Path, seed: int | None = None, gpu: bool = False) -> Report:
    """Judge ``candidate`` (a file) on ``problem``; ``seed`` replays a draw of the random cases; ``gpu`` adds a
    kernel problem's GPU sections (compiled or simulated, beside the reference solution's)."""
    start = time.perf_counter()
    seed = problem.seed if seed is None else seed
    candidate = candidate.resolve()
    prepared = prepare(problem, seed)
    with tempfile.TemporaryDirectory(prefix="judge-") as tmp:
        ran, result = _run_child(problem, candidate, prepared, Path(tmp))
    report = _report(problem, candidate, prepared, seed, ran, result, None)
    if gpu and report.verdict != "error" and problem.language in KERNELS:
        report.gpu = gpu_sections(problem, candidate, prepared)
    report.seconds = time.perf_counter() - start
    return report


def gpu_sections(problem: Problem, candidate: Path, prepared: Prepared) -> list[Section]:
    """The GPU sections of ``candidate`` (:mod:`verify.judge.gpu`): compiled for a Triton problem, simulated for a
    numba one, none for a problem without kernels."""
    if problem.language == "triton":
        from verify.judge.gpu_triton import sections as triton  # noqa: PLC0415

        return triton(problem, candidate, prepared)
    if problem.language == "numba":
        from verify.judge.gpu_numba import sections as numba  # noqa: PLC0415

        return numba(problem, candidate, prepared)
    return []


def judge_all(problem: Problem, files: list[Path]) -> dict[str, Report]:
    """Each of ``files`` (the problem's own solutions and known-wrong solutions) judged on the problem's seed, all of
    them in one child (a C++ file: one build and run each), each failing file's bug named from the others' outcomes
    in that same run. A file the shared child left without a result (it timed out or crashed) is judged again alone,
    so one file never decides another's verdict."""
    start = time.perf_counter()
    files = [f.resolve() for f in files]
    prepared = prepare(problem, problem.seed)
    with tempfile.TemporaryDirectory(prefix="judge-") as tmp:
        if problem.language == "cpp":
            from verify.judge import cpp  # noqa: PLC0415

            pairs = [cpp.run_child(problem, f, prepared, Path(tmp) / f"m{k}") for k, f in enumerate(files)]
        else:
            ran, results = _spawn(problem, files, prepared, Path(tmp), problem.timeout_s * len(files))
            pairs = [(ran, r) for r in results]
    mutants = {p.resolve() for p in problem.mutant_files()}
    known = {f.stem: r for f, (_, r) in zip(files, pairs) if f in mutants and _complete(r, prepared)}
    reports = {}
    for f, (ran, result) in zip(files, pairs):
        if problem.language != "cpp" and not _complete(result, prepared):
            reports[f.stem] = judge(problem, f)
            continue
        reports[f.stem] = _report(problem, f, prepared, problem.seed, ran, result, known)
        reports[f.stem].seconds = (time.perf_counter() - start) / len(files)
    return reports


def _complete(result: Any, prepared: Prepared) -> bool:
    return isinstance(result, dict) and len(result.get("cases", [])) == len(prepared.args)


def _report(problem: Problem, candidate: Path, prepared: Prepared, seed: int, ran: sandbox.Run, result: Any,
            known: dict[str, Any] | None) -> Report:
    report = Report(problem.id, str(candidate), seed, isolation=sandbox.isolation())
    report.cases = len(prepared.args)
    _verdicts(problem, prepared, ran, result, report)
    if report.verdict == "fail" and report.case in prepared.names:
        _name_the_bug(problem, prepared, report, result, known)
    return report


def _verdicts(problem: Problem, prepared: Prepared, ran: sandbox.Run, result: Any, report: Report) -> None:
    # a C++ program's stop (a timeout, a sanitizer's report, a crash) is told in the case it stopped in
    per_case = problem.language == "cpp" and isinstance(result, dict) and result.get("per_case") is True
    if (ran.timed_out or ran.returncode == -signal.SIGXCPU) and not per_case:
        report.fail("fail", "", f"超时：{problem.timeout_s:g} 秒内没有跑完所有用例（死循环，或太慢）")
        return
    if ran.output_capped:
        report.fail("fail", "", f"输出超过上限（{sandbox.OUTPUT_CAP // 2**20} MiB），进程被结束")
        return
    if not isinstance(result, dict):
        report.fail("error", "", f"子进程异常退出（退出码 {ran.returncode}），没有留下结果", detail=ran.stdout[-3000:])
        return
    if result.get("refused"):
        report.fail("fail", "", f"导入了本题不允许的模块：{', '.join(map(str, result['refused']))}"
                    f"（允许：{', '.join(problem.imports)}）")
        return
    if result.get("import_error"):
        err = result["import_error"]
        report.fail("error", "", f"加载解答文件时出错：{err.get('type')}: {err.get('message')}",
                    detail=str(err.get("trace", "")))
        return
    if result.get("called"):
        report.fail("fail", "", f"调用了本题禁止的函数：{', '.join(sorted(set(map(str, result['called']))))}")
        return
    got_cases = result.get("cases", [])
    if len(got_cases) != len(prepared.args):
        report.fail("error", "", "子进程没有跑完所有用例", detail=ran.stdout[-3000:])
        return
    check_value = _value_check(problem)
    check = getattr(loading.module(problem.path / "reference.py", "reference"), "check", None)
    # an exception the reference itself raises on some case (topo sort's ValueError for a cycle) is part of the
    # interface: raised where it should not be, it is a wrong answer, not an error in the candidate's code
    answers = {e.error[0] for e in prepared.expected if e.error is not None}
    for name, args, expected, got in zip(prepared.names, prepared.args, prepared.expected, got_cases):
        outcome = _outcome(got)
        stopped = got.get("stopped") if per_case else None
        if isinstance(stopped, dict):  # the verdict and reason verify.judge.cpp chose; the error names the kind
            report.fail("error" if stopped.get("verdict") == "error" else "fail", name, str(stopped.get("reason")),
                        compare.outcomes(args, expected, outcome, check_value, check),
                        detail=str(got.get("error", {}).get("where", "")))
            continue
        if outcome.error is not None and expected.error is None:  # before the log: a raise cuts it short
            wrong = outcome.error[0] in answers
            report.fail("fail" if wrong else "error", name, "抛出了本题用来表示无解的异常，这里却不该抛" if wrong else "解答抛出了异常",
                        compare.outcomes(args, expected, outcome, check_value, check),
                        detail=str(got.get("error", {}).get("where", "")))
            continue
        why = _ops(problem, got)
        if why:
            report.fail("fail", name, why)
            continue
        if not _same_inputs(args, got.get("inputs_after")):
            report.fail("fail", name, "改动了输入：调用之后，输入和调用之前不一样")
            continue
        mismatches = compare.outcomes(args, expected, outcome, check_value, check)
        if mismatches:
            report.fail("fail", name, "输出不对", mismatches)
            continue
        report.passed += 1


def _outcome(got: dict[str, Any]) -> Outcome:
    if "error" in got:
        return Outcome(error=(str(got["error"].get("type")), str(got["error"].get("message"))))
    return Outcome(value=got.get("value"))


def _name_the_bug(problem: Problem, prepared: Prepared, report: Report, result: Any,
                  known: dict[str, Any] | None = None) -> None:
    """The known-wrong solution whose outcome on the failing case is the candidate's (``known``: the known-wrong
    solutions' results on every case, where a run already has them)."""
    i = prepared.names.index(report.case)
    args, expected = prepared.args[i], prepared.expected[i]
    got = _outcome(result["cases"][i])
    check_value = _value_check(problem)
    check = getattr(loading.module(problem.path / "reference.py", "reference"), "check", None)
    theirs_all = ({stem: _outcome(r["cases"][i]) for stem, r in known.items()} if known is not None
                  else _mutant_outcomes(problem, prepared, i))
    for stem, theirs in theirs_all.items():
        their_mismatches = compare.outcomes(args, expected, theirs, check_value, check)
        if not their_mismatches:
            continue
        if theirs.error is None and got.error is None and check is None:
            alike = not check_value(theirs.value, got.value)
        else:
            alike = compare.same_bug(their_mismatches, report.mismatches)
        if alike:
            report.mutant, report.hint = stem, problem.mutants[stem]
            return


def _mutant_outcomes(problem: Problem, prepared: Prepared, i: int) -> dict[str, Outcome]:
    """Each known-wrong solution's outcome on case ``i``: called here for Python and PyTorch (the checkout's
    reviewed code), run in one more child for a kernel or C++ problem (an interpreter, a simulator, a build)."""
    files = problem.mutant_files()
    if problem.language in ("python", "torch"):
        return {p.stem: _call(getattr(loading.module(p, f"mutant_{p.stem}"), problem.entry), _copy(prepared.args[i]))
                for p in files}
    one = Prepared([prepared.names[i]], [prepared.args[i]], [prepared.expected[i]])
    with tempfile.TemporaryDirectory(prefix="judge-") as tmp:
        results = _run_children(problem, files, one, Path(tmp))
    return {p.stem: _outcome(r["cases"][0]) for p, r in zip(files, results)
            if isinstance(r, dict) and len(r.get("cases", [])) == 1}
