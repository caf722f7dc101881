"""Adversarial solutions to the judge's problems: each shortcut or attack is rejected, the honest one passes.

Each candidate runs in the judge's child process, as ``verify judge run`` would run it; the expected
values are computed in this process. A hack must end as a failure (exit 1) with the reason that names it,
never as a pass; an error in the candidate's own code is exit 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from tests._judge_shared import Shared
from verify.judge import judge, problem, sandbox

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parent.parent
SOFTMAX = problem.find(REPO, "softmax-torch")
RMSNORM = problem.find(REPO, "rmsnorm-torch")
TOPO = problem.find(REPO, "topo-sort-python")

HONEST = """
    import torch

    def softmax(x):
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        return e / e.sum(dim=1, keepdim=True)
"""


def _judge(tmp_path: Path, source: str, p: problem.Problem = SOFTMAX, name: str = "candidate.py") -> judge.Report:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return judge.judge(p, path)


#: softmax candidates judged together, one child per group (tests/_judge_shared.py). None of them changes the child
#: for the ones after it; those that could (patching torch, turning the dispatch off, an endless loop, a flood of
#: output, every file handle taken) and those that stop before any case runs (a shared child judges them again alone)
#: keep their own child. The group "fresh" returns memory nobody wrote: it is kept apart from the candidates that
#: compute the right answer, whose freed memory it could otherwise find.
SHARED = Shared(SOFTMAX)
reports = SHARED.fixture()


HONEST_NAME = SHARED.add("honest", HONEST)


def test_the_honest_solution_passes(reports):
    report = reports[HONEST_NAME]
    assert (report.verdict, report.passed, report.exit_code) == ("pass", report.cases, 0), report


@pytest.mark.parametrize("name, reason", [
    (SHARED.add("torch_softmax", "import torch\ndef softmax(x):\n    return torch.softmax(x, dim=1)\n"),
     "禁止的函数：torch.softmax"),
    (SHARED.add("tensor_softmax", "import torch\ndef softmax(x):\n    return x.softmax(1)\n"),
     "禁止的函数：torch.Tensor.softmax"),
    (SHARED.add("aten_softmax", "import torch\ndef softmax(x):\n    return torch._softmax(x, 1, False)\n"),
     "禁止的算子：aten._softmax"),
    (SHARED.add("log_softmax", "import torch\ndef softmax(x):\n    return torch.exp(torch.log_softmax(x, 1))\n"),
     "禁止的函数：torch.log_softmax"),
], ids=["torch.softmax", "Tensor.softmax", "aten._softmax", "log_softmax"])
def test_a_library_softmax_is_refused(reports, name, reason):
    report = reports[name]
    assert report.verdict == "fail" and reason in report.reason, report


def test_numpy_is_a_refused_import(tmp_path):
    """Judged alone: a refused import leaves no case run, so a shared child would judge it again alone anyway."""
    report = _judge(tmp_path, """
        import numpy as np
        import torch

        def softmax(x):
            a = x.numpy()
            e = np.exp(a - a.max(axis=1, keepdims=True))
            return torch.from_numpy(e / e.sum(axis=1, keepdims=True))
    """)
    assert report.verdict == "fail" and "不允许的模块：numpy" in report.reason, report


@pytest.mark.parametrize("name", [SHARED.add(f"numpy_{k}", source) for k, source in enumerate([
    """
        import torch

        def softmax(x):
            a = x.numpy()
            e = (a - a.max(axis=1, keepdims=True))
            e = 2.718281828459045 ** e
            return torch.from_numpy(e / e.sum(axis=1, keepdims=True))
    """,
    """
        import torch

        def softmax(x):
            torch.exp(x[:1, :1])  # the required operator, logged once
            a = x.numpy().astype("float64")
            e = 2.718281828459045 ** (a - a.max(axis=1, keepdims=True))
            return torch.from_numpy((e / e.sum(axis=1, keepdims=True)).astype("float32"))
    """,
    """
        import torch

        def softmax(x):
            torch.exp(x[:1, :1])
            np = __builtins__["__import__"]("numpy") if isinstance(__builtins__, dict) else __builtins__.__import__("numpy")
            a = np.asarray(x, dtype="float64")  # Tensor.__array__ goes through Tensor.numpy
            e = np.exp(a - a.max(axis=1, keepdims=True))
            return torch.tensor(e / e.sum(axis=1, keepdims=True), dtype=torch.float32)
    """,
])], ids=["numpy-no-exp", "numpy-after-one-exp", "numpy-by-__import__"])
def test_numpy_without_an_import_statement_is_a_refused_call(reports, name):
    """Tensor.numpy() needs no import, and numpy is already loaded (torch loads it): the arithmetic could run in
    NumPy, with one torch.exp on a corner to fill the operator log. The way between a tensor and an array is refused."""
    report = reports[name]
    assert report.verdict == "fail" and "禁止的函数：torch.Tensor.numpy" in report.reason, report


ALL_ZERO = SHARED.add("all_zero", "import torch\ndef softmax(x):\n    return torch.zeros_like(x) * torch.exp(x)\n")


def test_an_all_zero_output_fails_on_its_norm(reports):
    report = reports[ALL_ZERO]
    assert report.verdict == "fail" and any("全是零" in m.kind for m in report.mismatches), report


NEVER_WRITTEN = SHARED.add("never_written", """
    import torch

    def softmax(x):
        y = torch.empty_like(x)
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        y[:, :-1] = (e / e.sum(dim=1, keepdim=True))[:, :-1]
        return y
""")


def test_an_element_never_written_stays_nan_and_fails(reports):
    report = reports[NEVER_WRITTEN]
    assert report.verdict == "fail" and any("NaN" in m.kind for m in report.mismatches), report


MUTATES = SHARED.add("mutates_input", """
    import torch

    def softmax(x):
        x.sub_(x.max(dim=1, keepdim=True).values).exp_()
        return x / x.sum(dim=1, keepdim=True)
""")


def test_mutating_the_input_fails(reports):
    report = reports[MUTATES]
    assert report.verdict == "fail" and "改动了输入" in report.reason, report


def test_disabling_torch_dispatch_leaves_an_empty_log(tmp_path):
    report = _judge(tmp_path, """
        import torch

        def softmax(x):
            with torch._C._DisableTorchDispatch():
                e = torch.exp(x - x.max(dim=1, keepdim=True).values)
                return e / e.sum(dim=1, keepdim=True)
    """)
    assert report.verdict == "fail" and "没有记录到任何 torch 算子" in report.reason, report


def test_monkeypatching_torch_in_the_child_changes_no_verdict(tmp_path):
    """The comparison runs in the judge's process: a candidate that makes every comparison true in its own
    process still fails on its wrong values."""
    report = _judge(tmp_path, """
        import torch

        torch.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.testing.assert_close = lambda *a, **k: None
        torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)

        def softmax(x):
            return torch.exp(x)
    """)
    assert report.verdict == "fail" and report.mismatches, report


def test_an_infinite_loop_times_out(tmp_path):
    fast = msgspec.structs.replace(SOFTMAX, timeout_s=8.0)
    report = _judge(tmp_path, "import torch\ndef softmax(x):\n    while True:\n        pass\n", p=fast)
    assert report.verdict == "fail" and "超时" in report.reason and report.seconds < 30, report


def test_printing_a_hundred_megabytes_hits_the_output_cap(tmp_path):
    report = _judge(tmp_path, """
        import torch

        def softmax(x):
            chunk = "x" * (1 << 20)
            for _ in range(100):
                print(chunk)
            return torch.exp(x)
    """)
    assert report.verdict == "fail" and "输出超过上限" in report.reason, report


def test_a_syntax_error_is_an_error_of_the_candidate(tmp_path):
    """Judged alone: a file that does not load leaves no case run, so a shared child would judge it again alone."""
    report = _judge(tmp_path, "def softmax(x):\n    return (\n")
    assert (report.verdict, report.exit_code) == ("error", 2) and "SyntaxError" in report.reason, report


RAISES = SHARED.add("raises", "import torch\ndef softmax(x):\n    return torch.exp(x)[99999]\n")


def test_an_exception_in_the_candidate_is_exit_two(reports):
    report = reports[RAISES]
    assert report.exit_code == 2 and "抛出" in report.reason, report


def test_the_open_file_limit_holds_in_the_child(tmp_path):
    """The child's limits are in force: it cannot raise its own open-file limit past the hard one."""
    report = _judge(tmp_path, """
        import torch

        def softmax(x):
            files = [open(__file__) for _ in range(1000)]
            return torch.exp(x)
    """)
    assert report.exit_code == 2 and "OSError" in " ".join(m.line() for m in report.mismatches), report


@pytest.mark.parametrize("p", [SOFTMAX, RMSNORM, TOPO], ids=lambda p: p.id)
def test_each_mutant_fails_with_its_own_hint(tmp_path, p):
    for path in p.mutant_files():
        candidate = tmp_path / f"copy_of_{path.name}"
        candidate.write_bytes(path.read_bytes())  # a candidate's file elsewhere, not the mutant's own path
        report = judge.judge(p, candidate)
        assert (report.verdict, report.mutant, report.hint) == ("fail", path.stem, p.mutants[path.stem]), report


def test_the_topo_sort_that_misses_a_cycle_is_told_apart(tmp_path):
    report = _judge(tmp_path, """
        def topo_sort(n, edges):
            indeg = [0] * n
            for _, v in edges:
                indeg[v] += 1
            order = [i for i in range(n) if indeg[i] == 0]
            for u in order:
                for a, b in edges:
                    if a == u:
                        indeg[b] -= 1
                        if indeg[b] == 0:
                            order.append(b)
            return order
    """, p=TOPO)
    assert report.verdict == "fail" and report.mutant == "misses_cycle" and "出队" in report.hint, report


def test_the_cli_exit_codes_and_report(tmp_path):
    passing, failing = tmp_path / "ok.py", tmp_path / "bad.py"
    passing.write_text(textwrap.dedent(HONEST), encoding="utf-8")
    failing.write_bytes((SOFTMAX.path / "mutants" / "no_max_subtraction.py").read_bytes())
    cli = [sys.executable, "-m", "verify.cli", "judge", "run", "softmax-torch"]
    ok = subprocess.run([*cli, str(passing)], cwd=REPO, capture_output=True, text=True, timeout=240)
    bad = subprocess.run([*cli, str(failing)], cwd=REPO, capture_output=True, text=True, timeout=240)
    assert ok.returncode == 0 and "结果：通过" in ok.stdout, ok.stdout + ok.stderr
    assert bad.returncode == 1 and "看起来没有先减最大值" in bad.stdout and "--seed 38" in bad.stdout, bad.stdout
    assert sandbox.isolation() in ok.stdout.replace("\n", "")


def test_a_checkout_or_environment_under_tmp_stays_visible_inside_bwrap(monkeypatch, tmp_path):
    """bwrap gives the child an empty /tmp; the checkout (the child's own module, the problem) and the Python
    environment are bound again after it, so a clone made under /tmp (as CI's is) still judges."""
    from verify.judge import sandbox  # noqa: PLC0415

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/usr/bin/bwrap")
    cmd = sandbox.command(tmp_path / "spec.json", tmp_path / "work", tmp_path / "cand")
    tmpfs = cmd.index("--tmpfs")
    bound = [cmd[i + 1] for i, arg in enumerate(cmd) if arg in ("--ro-bind", "--bind") and i > tmpfs]
    for path in (*sandbox._needed(), tmp_path / "cand", tmp_path / "work"):
        assert str(path) in bound, (path, cmd)


def test_a_toolchain_reached_through_a_symlink_is_bound_where_it_lives(monkeypatch, tmp_path):
    """A checkout whose .venv is a symlink (a clone sharing another's environment): bwrap cannot make a mount point
    through the link, so the toolchain is bound at its real path (the whole judge once failed on it)."""
    from verify import toolchain  # noqa: PLC0415
    from verify.judge import sandbox  # noqa: PLC0415

    real = tmp_path / "real" / "gputools"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.setattr(toolchain, "folder", lambda: tmp_path / "link" / "gputools")
    needed = sandbox._needed()
    assert real in needed and tmp_path / "link" / "gputools" not in needed


FRESH = ["torch.empty_like(x)", "x.new_empty(x.shape)", "torch.empty_strided(x.shape, x.stride())", "torch.Tensor(*x.shape)",
         "torch.empty(0).resize_(x.shape)", "torch.empty(x.numel()).view(x.shape)"]


@pytest.mark.parametrize("name", [SHARED.add(f"fresh_{k}", f"""
    import torch

    def softmax(x):
        warm = torch.exp(x - x.max(dim=1, keepdim=True).values)  # the required operator runs, then is freed
        del warm
        return {fresh}
""", group="fresh") for k, fresh in enumerate(FRESH)], ids=FRESH)
def test_returning_memory_a_freed_reference_left_fails(reports, name):
    """The shortcut of judges that compute the expected output in the solution's process: free it, then return fresh
    memory that still holds it. Here the expected values are never in the child, and a new tensor is NaN where
    nothing wrote it: the reference's output, computed just before in a real judge, is not there to find (in its
    shared child, no candidate computes the right answer either)."""
    report = reports[name]
    assert report.verdict == "fail" and report.reason == "输出不对", report


def test_a_known_wrong_value_that_is_not_a_tensor_is_compared_without_crashing():
    """Naming a failing candidate's bug compares its value with each mutant's: a mutant that returns None must not
    end the report in an AttributeError."""
    import torch  # noqa: PLC0415

    from verify.judge import compare  # noqa: PLC0415

    out = compare.tensors(None, torch.zeros(2), SOFTMAX.outputs[0], SOFTMAX.tolerance)
    assert out and "无从比较" in out[0].kind


def test_inside_the_sandbox_the_problems_answers_cannot_be_read(tmp_path):
    """A candidate that reads a problem's own solution (or its reference, or the git history holding both) and runs
    it would pass: inside bwrap those are hidden, and only the files the run judges are shown again."""
    if not shutil.which("bwrap"):
        pytest.skip("no bwrap: the report says 「只是护栏，不是沙箱」")
    solution, reference = SOFTMAX.solutions()[0], SOFTMAX.path / "reference.py"
    judged = SOFTMAX.mutant_files()[0]  # a run that judges a problem's own file still reads it
    work = tmp_path / "work"
    work.mkdir()
    spec = work / "spec.json"
    spec.write_text(json.dumps({"runs": [{"candidate": str(judged)}]}), encoding="utf-8")
    git = REPO / ".git" / "HEAD"
    paths = [solution, reference, judged, *([git] if git.is_file() else [])]
    ran = sandbox.run(spec, work, tmp_path, 30, inner=["cat", *map(str, paths)])
    assert judged.read_text(encoding="utf-8") in ran.stdout, ran.stdout
    for hidden in (solution, reference, *([git] if git.is_file() else [])):
        text = hidden.read_text(encoding="utf-8")
        assert text and text not in ran.stdout, (hidden, ran.stdout)


def test_a_false_cycle_is_a_wrong_answer_not_an_error(tmp_path):
    """ValueError is topo sort's answer for a cycle: raised on a graph without one (duplicate edges counted once in
    the successors but twice in the in-degrees), it fails the case (exit 1), where another exception is exit 2."""
    report = _judge(tmp_path, """
        from collections import deque

        def topo_sort(n, edges):
            indeg, succ = [0] * n, [set() for _ in range(n)]
            for u, v in edges:
                succ[u].add(v)
                indeg[v] += 1
            ready, order = deque(i for i in range(n) if indeg[i] == 0), []
            while ready:
                u = ready.popleft()
                order.append(u)
                for v in succ[u]:
                    indeg[v] -= 1
                    if indeg[v] == 0:
                        ready.append(v)
            if len(order) != n:
                raise ValueError("cycle")
            return order
    """, p=TOPO)
    assert (report.verdict, report.exit_code, report.case) == ("fail", 1, "重复边") and "不该抛" in report.reason, report
