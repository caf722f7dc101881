"""The judge of row-sum-numba tells right from wrong: every solution passes, every mutant fails, named. And the
reference's CUDA C++ version (reference.cu) compiles for sm_80 and sm_90a with the starter's kernel signature."""

import re
from typing import TYPE_CHECKING

from snippets._gpu import compiled
from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.row_sum_numba.cases  # noqa: F401
    import snippets.judge.row_sum_numba.mutants.drops_odd_element  # noqa: F401
    import snippets.judge.row_sum_numba.mutants.missing_syncthreads  # noqa: F401
    import snippets.judge.row_sum_numba.mutants.no_boundary_check  # noqa: F401
    import snippets.judge.row_sum_numba.mutants.only_thread0_partial  # noqa: F401
    import snippets.judge.row_sum_numba.reference  # noqa: F401
    import snippets.judge.row_sum_numba.solutions.odd_count  # noqa: F401
    import snippets.judge.row_sum_numba.solutions.tree  # noqa: F401
    import snippets.judge.row_sum_numba.starter  # noqa: F401
    import verify.judge.launches  # noqa: F401

DATA = ("problem.yaml", "statement.md", "reference.cu", "starter.cu")


@claim(
    "judge.row-sum-numba",
    question="cuda-kernels-by-hand",
    statement="手撕题 `row-sum-numba` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过（numba 的 CUDA 模拟器里跑），"
              "{mutants} 个已知错误解（树形归约丢掉落单元素、两步之间没有栅栏、读越过行尾、只写回线程 0 的部分和）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    needs=("numba",),
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上 numba CUDA 模拟器里跑的子进程"""
    return selfcheck.observe(ctx.snippet_dir())


def _entry(c):
    """The kernel's mangled name in the PTX: the same name means the same name and parameter types."""
    m = re.search(r"\.entry\s+(\w+)", c.ptx)
    return m.group(1) if m else None


@claim(
    "judge.row-sum-numba.cuda-compiled",
    question="cuda-kernels-by-hand",
    statement="参考解的 CUDA C++ 版 `reference.cu`（每行一个 64 线程的块，行内从 {=16 字节} 边界开始的部分用 float4 读，部分和在共享内存里树形归约）"
              "由 nvcc 编译：sm_80 上每线程 {sm_80_registers} 个寄存器、共享内存 {sm_80_shared} 字节（64 个 float 的部分和）、"
              "溢出 {sm_80_spills} 字节，{sm_80_ldg128} 条 128 位的全局读 `LDG.E.128`，{sm_80_bar} 条 `BAR.SYNC`"
              "（部分和写完一条，树的 6 步各一条）；sm_90a 上依次是 {sm_90a_registers} 个、{sm_90a_shared} 字节、{sm_90a_spills} 字节、"
              "{sm_90a_ldg128} 条、{sm_90a_bar} 条。起始代码 `starter.cu` 的核函数签名与它{same_signature:?相同|不同}。",
    expect={"sm_80_registers": {"<=": 64}, "sm_80_shared": 256, "sm_80_spills": 0, "sm_80_ldg128": {">": 0}, "sm_80_bar": 7,
            "sm_90a_registers": {"<=": 64}, "sm_90a_shared": 256, "sm_90a_spills": 0, "sm_90a_ldg128": {">": 0},
            "sm_90a_bar": 7, "same_signature": True},
    needs=["nvcc"],
)
def _(ctx):
    """范围：参考解的 CUDA C++ 版，sm_80 与 sm_90a"""
    here, out = ctx.snippet_dir(), {}
    for target in compiled.TARGETS:
        c = compiled.cuda_source(ctx, (here / "reference.cu").read_text(), target=target, name="row_sum_reference")
        ops = c.sass_ops
        row = {"registers": c.registers, "shared": c.shared,
               "spills": c.info.get("spill_stores", 0) + c.info.get("spill_loads", 0),
               "ldg128": sum(n for op, n in ops.items() if op.startswith("LDG.E.128")),
               "ldg": {op: n for op, n in sorted(ops.items()) if op.startswith("LDG")}, "bar": c.sass_count("BAR")}
        out.update({f"{target}_{key}": value for key, value in row.items()})
    starter = compiled.cuda_source(ctx, (here / "starter.cu").read_text(), name="row_sum_starter")
    out["kernel"] = _entry(c)
    out["same_signature"] = out["kernel"] is not None and _entry(starter) == out["kernel"]
    return out
