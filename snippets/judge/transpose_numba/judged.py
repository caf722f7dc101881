"""The judge of transpose-numba tells right from wrong: every solution passes, every mutant fails, named. And the
reference's CUDA C++ version (reference.cu) compiles for sm_80 and sm_90a with the starter's kernel signature."""

import re
from typing import TYPE_CHECKING

from snippets._gpu import compiled
from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.transpose_numba.cases  # noqa: F401
    import snippets.judge.transpose_numba.mutants.missing_syncthreads  # noqa: F401
    import snippets.judge.transpose_numba.mutants.no_write_check  # noqa: F401
    import snippets.judge.transpose_numba.mutants.swapped_tile_index  # noqa: F401
    import snippets.judge.transpose_numba.reference  # noqa: F401
    import snippets.judge.transpose_numba.solutions.tiled  # noqa: F401
    import snippets.judge.transpose_numba.starter  # noqa: F401
    import verify.judge.launches  # noqa: F401

DATA = ("problem.yaml", "statement.md", "reference.cu", "starter.cu")


@claim(
    "judge.transpose-numba",
    question="gpu-memory-hierarchy",
    statement="手撕题 `transpose-numba` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上逐位相同（numba 的 CUDA 模拟器里跑），"
              "{mutants} 个已知错误解（读写之间没有栅栏、写回不查边界、读共享内存时没交换下标）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    needs=("numba",),
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上 numba CUDA 模拟器里跑的子进程"""
    return selfcheck.observe(ctx.snippet_dir())


def _kernel_name(c):
    """The kernel's mangled name in the PTX (its name and parameter types)."""
    found = re.findall(r"\.entry\s+(\w+)", c.ptx)
    return found[0] if len(found) == 1 else None


@claim(
    "judge.transpose-numba.cuda-compiled",
    question="gpu-memory-hierarchy",
    statement="参考解的 CUDA C++ 版 `reference.cu`（32×8 线程的块搬一个 32×32 的块，经 `tile[32][33]` 中转）由 nvcc 编译："
              "sm_80 上每线程 {sm_80_registers} 个寄存器、共享内存 {sm_80_shared} 字节（32×33 个 float）、溢出 {sm_80_spills} 字节，"
              "全局读是 {sm_80_ldg} 条 32 位的 `{sm_80_ldg_op}`（每线程搬 {=4 个元素}，各在一行），128 位的 `LDG.E.128` {sm_80_ldg128} 条，"
              "读写之间 {sm_80_bar} 条 `BAR.SYNC`；sm_90a 上依次是 {sm_90a_registers} 个、{sm_90a_shared} 字节、{sm_90a_spills} 字节、"
              "{sm_90a_ldg} 条 `{sm_90a_ldg_op}`、{sm_90a_ldg128} 条、{sm_90a_bar} 条。起始代码 `starter.cu` 的核函数签名与它"
              "{same_signature:?相同|不同}。",
    expect={"sm_80_registers": {"<=": 64}, "sm_80_shared": 4224, "sm_80_spills": 0, "sm_80_ldg": 4, "sm_80_ldg128": 0,
            "sm_80_bar": 1, "sm_90a_registers": {"<=": 64}, "sm_90a_shared": 4224, "sm_90a_spills": 0, "sm_90a_ldg": 4,
            "sm_90a_ldg128": 0, "sm_90a_bar": 1, "same_signature": True},
    needs=["nvcc"],
)
def _(ctx):
    """范围：参考解的 CUDA C++ 版，sm_80 与 sm_90a"""
    folder, out = ctx.snippet_dir(), {}
    for target in compiled.TARGETS:
        ref = compiled.cuda_source(ctx, (folder / "reference.cu").read_text(), target=target, name="transpose_reference")
        loads = [line.split()[0] for line in ref.sass_lines("LDG")]
        out.update({f"{target}_registers": ref.registers, f"{target}_shared": ref.shared, f"{target}_ldg": len(loads),
                    f"{target}_ldg_op": " + ".join(sorted(set(loads))),
                    f"{target}_ldg128": sum(op.startswith("LDG.E.128") for op in loads),
                    f"{target}_bar": ref.sass_count("BAR"),
                    f"{target}_spills": ref.info.get("spill_stores", 0) + ref.info.get("spill_loads", 0)})
    starter = compiled.cuda_source(ctx, (folder / "starter.cu").read_text(), name="transpose_starter")
    out["kernel"] = _kernel_name(ref)
    out["same_signature"] = out["kernel"] is not None and _kernel_name(starter) == out["kernel"]
    return out
