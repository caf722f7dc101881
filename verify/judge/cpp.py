"""C++ problems: the candidate's file built with the problem's driver by the project's g++ builder, with
sanitizers, and run on the cases inside the judge's sandbox.

The candidate's file is copied under a fixed name (:data:`SOLUTION`) beside the problem's ``driver.cpp``,
which ``#include``s it, reads the cases (one line each, :func:`encode`), runs them one by one and writes a
line per case to the result file: ``V <json>`` for the value, ``E <type>\\t<message>`` for an exception the
candidate threw. The build is :func:`verify.cxx.build` with ``-std=c++17 -Wall -Wextra`` and the problem's
sanitizers (AddressSanitizer with LeakSanitizer and UBSan, or ThreadSanitizer): a correct file and every
mutant are built once and then found in the cache.

Where the compile runs: g++ reads untrusted source (``#include "/dev/zero"``, an include of any readable
file, a template or ``constexpr`` loop), so it runs as the candidate's program does, through
:func:`verify.judge.sandbox.run`: inside ``bwrap`` where it is installed (no network, read-only root, only
the build folder writable), in its own process group, with the CPU-time, open-file, output and a 2 GiB
address-space limit, killed after :data:`COMPILE_TIMEOUT_S` seconds. A compile error or a compile past that
time is the candidate's error (verdict error, exit 2) carrying g++'s messages.

The program runs under the same sandbox without the address-space cap (a sanitizer reserves terabytes of
it for its shadow; its ``hard_rss_limit_mb`` bounds what it uses instead). The result is built here, in the
shape the Python child writes (:mod:`verify.judge.child`): the lines the program completed are its cases'
outcomes; the case it was running when it stopped carries why (``stopped``: a sanitizer's report, which
fails the case and quotes the report's first line; a timeout, which fails it; a crash or an exit, an error),
and the cases after it were not run.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import signal
from pathlib import Path
from typing import Any

from verify import cxx
from verify.judge import sandbox
from verify.judge.problem import Problem

#: the name the candidate's file gets beside the driver (``#include "solution.h"``)
SOLUTION = "solution.h"
CASES = "cases.txt"
RESULT = "result.txt"
COMPILE_TIMEOUT_S = 60.0
#: bytes of address space g++ may map (``#include "/dev/zero"`` runs out of it in a second)
COMPILE_MEMORY = 2 * 2**30
#: characters of a sanitizer's report kept as a case's detail
REPORT_CAP = 3000
_COMMON = "hard_rss_limit_mb=2048:halt_on_error=1:symbolize=1"
SANITIZER_ENV = {
    "ASAN_OPTIONS": f"{_COMMON}:detect_leaks=1:abort_on_error=0:allocator_may_return_null=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "LSAN_OPTIONS": "report_objects=0",
    "TSAN_OPTIONS": f"{_COMMON}:second_deadlock_stack=1",
}
_SANITIZER = re.compile(r"(?:ERROR|WARNING): (\w+Sanitizer): (.+)$")
_UBSAN = re.compile(r"^\S+:\d+:\d+: runtime error: (.+)$")


def flags(problem: Problem) -> tuple[str, ...]:
    """The problem's sanitizer preset (:mod:`verify.cxx`), with threads, and line tables (``-g1``) for its ``-g``:
    a sanitizer's report still names the candidate's file and line in every frame, and a judged build takes
    about 1.0 s instead of 1.3 s. (``-O0`` would take 0.7 s, but UBSan's object-size check needs the optimiser:
    at ``-O0`` a read past a ``new int[1]`` is reported by ASan by address, not by UBSan at its line.)"""
    preset = cxx.TSAN if "thread" in problem.sanitizers else cxx.ASAN_UBSAN
    return (*("-g1" if f == "-g" else f for f in preset), "-pthread")


def encode(value: Any) -> list[str]:
    """A case's argument as the tokens the driver reads: an int, a word, or a list as its length then its items."""
    if isinstance(value, bool):
        return ["1" if value else "0"]
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, str):
        if not value or any(c.isspace() for c in value):
            raise ValueError(f"a word without spaces, not {value!r}")
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(len(value)), *(t for v in value for t in encode(v))]
    raise TypeError(f"a C++ case holds ints, words and lists, not {type(value).__name__}")


def _sandboxed(argv: list[str], folder: Path, timeout: float) -> cxx.Ran:
    """g++ on untrusted source: under the judge's sandbox and limits, the build folder the only writable one."""
    ran = sandbox.run(None, folder, folder, timeout, inner=argv, memory=COMPILE_MEMORY)
    (folder / "stdout.txt").unlink(missing_ok=True)
    failed = ran.timed_out or ran.returncode == -signal.SIGXCPU
    return cxx.Ran(ran.returncode, ran.stdout, failed)


def build(problem: Problem, candidate: Path) -> Path:
    """The problem's program with ``candidate`` in it (:class:`verify.cxx.BuildError` when g++ refuses it)."""
    sources: dict[str, bytes | Path] = {problem.driver: problem.path / problem.driver, SOLUTION: candidate.read_bytes()}
    return cxx.build(sources, flags(problem), name="judged", runner=_sandboxed, timeout=COMPILE_TIMEOUT_S)


def run_child(problem: Problem, candidate: Path, prepared: Any, work: Path) -> tuple[sandbox.Run, dict[str, Any]]:
    """Build and run ``candidate`` on the prepared cases: how the program ended, and the child's result shape."""
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"refused": [], "called": [], "import_error": None, "cases": []}
    try:
        prog = build(problem, candidate)
    except cxx.BuildError as exc:
        what = "编译超时" if exc.timed_out else "编译错误"
        first = next((line for line in exc.output.splitlines() if "error" in line), str(exc).splitlines()[0])
        out["import_error"] = {"type": what, "message": first[:400], "trace": exc.output}
        return sandbox.Run(0, False, False, exc.output, 0.0), out
    lines = (" ".join(t for arg in case for t in encode(arg)) for case in prepared.args)
    (work / CASES).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    inner = [str(prog), str(work / CASES), str(work / RESULT)]
    if "thread" in problem.sanitizers and shutil.which("setarch"):  # TSan's fixed layout wants no address randomisation
        inner = ["setarch", platform.machine(), "-R", *inner]
    ran = sandbox.run(None, work, prog.parent, problem.timeout_s, inner=inner, memory=None, env=SANITIZER_ENV)
    out["cases"] = _cases(prepared.args, ran, work / RESULT, problem.timeout_s)
    out["per_case"] = True  # a stop (a timeout included) is told in the case it happened in
    return ran, out


def _cases(args: list[tuple[Any, ...]], ran: sandbox.Run, result: Path, timeout_s: float) -> list[dict[str, Any]]:
    lines = _lines(result)[:len(args)]
    cases = [_line(line) | {"inputs_after": list(a), "ops": []} for line, a in zip(lines, args)]
    stop = _stop(ran, timeout_s)
    if stop is not None and cases and len(cases) == len(args) and "sanitizer" in stop:
        cases[-1] = cases[-1] | stop  # a report after the last case (a leak at exit) is the last case's
    elif len(cases) < len(args):
        stop = stop or {"stopped": {"verdict": "error", "reason": "程序没有跑完所有用例就正常退出了"},
                        "error": {"type": "提前退出", "message": f"退出码 {ran.returncode}", "where": ran.stdout[-REPORT_CAP:]}}
        cases.append(stop | {"inputs_after": list(args[len(cases)]), "ops": []})
        skipped = {"error": {"type": "未运行", "message": "前一个用例结束了程序", "where": ""}, "ops": []}
        cases += [skipped | {"inputs_after": list(a)} for a in args[len(cases):]]
    return cases


def _lines(result: Path) -> list[str]:
    try:
        with open(result, "rb") as f:
            text = f.read(sandbox.OUTPUT_CAP).decode("utf-8", "replace")
    except OSError:
        return []
    # a line cut short by the program's end is not a case's outcome
    return [line for line in text.split("\n")[:-1]]


def _line(line: str) -> dict[str, Any]:
    """One result line of the (untrusted) program."""
    kind, _, rest = line.partition(" ")
    if kind == "V":
        try:
            return {"value": json.loads(rest)}
        except ValueError:
            return {"value": f"<不是 JSON：{rest[:120]}>"}
    if kind == "E":
        what, _, message = rest.partition("\t")
        return {"error": {"type": what[:80] or "exception", "message": message[:400], "where": ""}}
    return {"value": f"<读不懂的结果行：{line[:120]}>"}


def sanitizer_line(output: str) -> tuple[str, str] | None:
    """The first line of a sanitizer's report in ``output`` (without its ``==pid==``), and the kind of error
    it names (``AddressSanitizer: heap-use-after-free``): None when there is none."""
    for raw in output.splitlines():
        line = re.sub(r"^==\d+==", "", raw).strip()
        m = _SANITIZER.search(line)
        if m:
            kind = re.split(r" on | at |\s*\(", m.group(2).strip(), maxsplit=1)[0]
            return line[:300], f"{m.group(1)}: {kind}"
        m = _UBSAN.match(line)
        if m:
            kind = re.sub(r"0x[0-9a-f]+|-?\d+", "N", m.group(1).split(":")[0])[:80]
            return line[:300], f"UndefinedBehaviorSanitizer: {kind}"
    return None


def _stop(ran: sandbox.Run, timeout_s: float) -> dict[str, Any] | None:
    """Why the program stopped before its end, as the case it stopped in carries it; None: it ended normally."""
    found = sanitizer_line(ran.stdout)
    if found:
        line, kind = found
        where = ran.stdout[:REPORT_CAP]  # the program writes its outcomes to a file: its output is the report
        return {"sanitizer": line, "stopped": {"verdict": "fail", "reason": f"sanitizer 报告了错误：{line}"},
                "error": {"type": kind, "message": line, "where": where}}
    if ran.timed_out or ran.returncode == -signal.SIGXCPU:
        return {"stopped": {"verdict": "fail", "reason": f"超时：{timeout_s:g} 秒内没有跑完（死循环、死锁，或太慢）"},
                "error": {"type": "超时", "message": "", "where": ""}}
    if ran.returncode < 0:
        name = signal.Signals(-ran.returncode).name if -ran.returncode in signal.valid_signals() else str(ran.returncode)
        return {"stopped": {"verdict": "error", "reason": f"程序被信号 {name} 结束（崩溃）"},
                "error": {"type": f"信号 {name}", "message": "", "where": ran.stdout[-REPORT_CAP:]}}
    if ran.returncode != 0:
        return {"stopped": {"verdict": "error", "reason": f"程序以退出码 {ran.returncode} 结束"},
                "error": {"type": f"退出码 {ran.returncode}", "message": "", "where": ran.stdout[-REPORT_CAP:]}}
    return None
