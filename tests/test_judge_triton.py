"""Triton problems in the judge: the kernel checks (a launch, the value a kernel wrote, only allowed operators
outside kernels), the interpreter's order and memory guard, each mutant named, and the compiled GPU section.

Each candidate runs in the judge's child, in Triton's interpreter, as ``verify judge run`` would run it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests._judge_shared import Shared
from verify import toolchain
from verify.judge import judge, problem, report

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(toolchain.missing("triton") is not None, reason=str(toolchain.missing("triton")))

REPO = Path(__file__).resolve().parent.parent
SOFTMAX = problem.find(REPO, "softmax-triton")

KERNEL = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _row(x_ptr, y_ptr, n, xs0, xs1, ys0, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * xs0 + c * xs1, mask=c < n, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + r * ys0 + c, e / tl.sum(e, axis=0), mask=c < n)
"""

HONEST = KERNEL + """

    def softmax(x):
        y = torch.empty(x.shape, dtype=x.dtype)
        _row[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
"""


def _judge(tmp_path: Path, source: str, p: problem.Problem = SOFTMAX, gpu_section: bool = False) -> judge.Report:
    path = tmp_path / "candidate.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return judge.judge(p, path, gpu=gpu_section)


#: softmax candidates judged together in one child (tests/_judge_shared.py): none of them changes the child for the
#: ones after it
SHARED = Shared(SOFTMAX)
reports = SHARED.fixture()


HONEST_NAME = SHARED.add("honest", HONEST)


def test_the_honest_kernel_passes(reports):
    r = reports[HONEST_NAME]
    assert (r.verdict, r.passed) == ("pass", r.cases), r


TORCH_BESIDE = SHARED.add("torch_beside", KERNEL + """

    def softmax(x):
        y = torch.empty(x.shape, dtype=x.dtype)
        _row[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        return e / e.sum(dim=1, keepdim=True)
    """)


def test_torch_arithmetic_returned_beside_a_kernel_fails_on_the_operator_list(reports):
    """A kernel runs, but the answer is computed by torch outside it: aten.exp is not on the allowed list."""
    r = reports[TORCH_BESIDE]
    assert r.verdict == "fail" and "核函数之外用 torch 算了" in r.reason and "aten.exp" in r.reason, r


NOT_WRITTEN = SHARED.add("not_written", KERNEL + """

    def softmax(x):
        y = torch.empty(x.shape, dtype=x.dtype)
        _row[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return torch.empty_like(y)
    """)


def test_a_value_no_kernel_wrote_fails(reports):
    """Only allocation outside the kernel, but what is returned is a fresh tensor the kernel never saw."""
    r = reports[NOT_WRITTEN]
    assert r.verdict == "fail" and "不是核函数写下的" in r.reason, r


NO_LAUNCH = SHARED.add("no_launch", """
    import torch

    def softmax(x):
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        return e / e.sum(dim=1, keepdim=True)
    """)


def test_no_kernel_launched_fails(reports):
    r = reports[NO_LAUNCH]
    assert r.verdict == "fail" and "没有启动任何核函数" in r.reason, r


TORCH_SOFTMAX = SHARED.add("torch_softmax", "import torch\n\ndef softmax(x):\n    return torch.softmax(x, dim=1)\n")


def test_torch_softmax_inside_is_a_forbidden_call(reports):
    r = reports[TORCH_SOFTMAX]
    assert r.verdict == "fail" and "禁止的函数：torch.softmax" in r.reason, r


def test_numpy_is_refused(tmp_path):
    """Judged alone: a refused import leaves no case run, so a shared child would judge it again alone anyway."""
    r = _judge(tmp_path, """
    import numpy as np
    import torch

    def softmax(x):
        a = x.numpy()
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return torch.from_numpy(e / e.sum(axis=1, keepdims=True))
    """)
    assert r.verdict == "fail" and "不允许的模块：numpy" in r.reason, r


WILD_LOAD = SHARED.add("wild_load", KERNEL.replace("e / tl.sum(e, axis=0)", "e / tl.sum(e, axis=0) + tl.load(y_ptr - 10_000_000)")
                    + """

    def softmax(x):
        y = torch.empty(x.shape, dtype=x.dtype)
        _row[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
    """)
#: judged last in the shared child: were the guard broken, the stray store could reach no candidate judged after it
WILD_STORE = SHARED.add("wild_store", KERNEL.replace("tl.store(y_ptr", "tl.store(y_ptr + 10_000_000 + c, x, mask=c < n)\n        tl.store(y_ptr") + """

    def softmax(x):
        y = torch.empty(x.shape, dtype=x.dtype)
        _row[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
    """, last=True)


def test_a_store_far_outside_every_tensor_is_dropped_not_written(reports):
    """The interpreter writes raw addresses; the judge leaves out a lane outside every tensor of the launch, so
    a wild store neither corrupts the child nor changes the answer (the honest rows are still right)."""
    r = reports[WILD_STORE]
    assert (r.verdict, r.passed) == ("pass", r.cases), r


def test_a_load_outside_every_tensor_reads_nan(reports):
    r = reports[WILD_LOAD]
    assert r.verdict == "fail" and any("NaN" in m.kind for m in r.mismatches), r


@pytest.mark.parametrize("stem", sorted(SOFTMAX.mutants)[:2])
def test_a_softmax_mutant_judged_alone_fails_and_is_named(tmp_path, stem):
    """Two known bugs through the path a candidate's file takes; that every mutant of every Triton problem fails and
    is named is each problem's claim (tests/test_claims.py)."""
    source = (SOFTMAX.path / "mutants" / f"{stem}.py").read_text(encoding="utf-8")
    r = _judge(tmp_path, source)
    assert (r.verdict, r.mutant, r.hint) == ("fail", stem, SOFTMAX.mutants[stem]), r


def test_the_report_of_a_passing_and_a_failing_solution_has_the_compiled_section(tmp_path):
    passing = _judge(tmp_path, HONEST, gpu_section=True)
    failing = _judge(tmp_path, (SOFTMAX.path / "mutants" / "other_zero_mask.py").read_text(encoding="utf-8"),
                     gpu_section=True)
    assert passing.verdict == "pass" and failing.verdict == "fail", (passing, failing)
    version = toolchain.PINS["triton"]
    for r in (passing, failing):
        assert [s.source for s in r.gpu] == [f"编译：Triton {version}，{t}（没有在 GPU 上运行）" for t in ("sm_80", "sm_90a")]
        for section in r.gpu:
            rows = {row.name: row for row in section.rows}
            assert int(rows["每线程寄存器"].candidate) > 0 and int(rows["每线程寄存器"].reference) > 0, section
            assert rows["张量核指令（HMMA/HGMMA 条数）"].candidate == "0", section  # a softmax has no tl.dot
            assert "LDG" in rows["最宽的全局读取"].candidate, section
        text = report.text(r, "candidate.py")
        assert "计时：未测" in text and "长行 4096" in text, text
    assert "核函数：你的 _row；参考解 _softmax_row" in passing.gpu[0].note


def test_the_reference_numbers_are_cached(tmp_path, monkeypatch):
    from verify.judge import gpu_triton  # noqa: PLC0415

    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    real = gpu_triton.compiled
    monkeypatch.setattr(gpu_triton, "compiled", lambda *a: calls.append(a[1]) or real(*a))
    case = (judge.prepare(SOFTMAX, SOFTMAX.seed).args[0])
    first, again = gpu_triton._reference(SOFTMAX, case), gpu_triton._reference(SOFTMAX, case)
    assert first == again and len(calls) == 1 and first["targets"]["sm_90a"][0]["registers"] > 0, (first, calls)
    assert len(list((tmp_path / "cache" / "judge-gpu").glob("softmax-triton-*.json"))) == 1


def test_a_kernel_the_gpu_compiler_refuses_is_named_in_the_section(tmp_path):
    """The interpreter runs any Python inside a kernel; the compiler does not take a call to a plain Python
    function: the section says the compile failed, and the verdict stands."""
    source = HONEST.replace("e / tl.sum(e, axis=0), mask", "_half(e) / tl.sum(_half(e), axis=0), mask") + """

    def _half(v):
        return v * 0.5
    """
    r = _judge(tmp_path, source, gpu_section=True)
    assert r.verdict == "pass", r
    assert all("编译失败" in s.note and "_row" in s.note for s in r.gpu), r.gpu


def test_the_gemm_section_counts_tensor_core_instructions(tmp_path):
    """tl.dot on float32 compiles to TF32 tensor-core instructions (HMMA on sm_80, HGMMA or HMMA on sm_90a); a
    softmax has none (above): the row tells them apart."""
    gemm = problem.find(REPO, "tiled-gemm-triton")
    r = _judge(tmp_path, (gemm.path / "solutions" / "tiled.py").read_text(encoding="utf-8"), p=gemm, gpu_section=True)
    assert r.verdict == "pass", r
    for section in r.gpu:
        mma = {row.name: row for row in section.rows}["张量核指令（HMMA/HGMMA 条数）"]
        assert int(mma.candidate) > 0 and int(mma.reference) > 0, section
