"""The judge of scan-numba tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.scan_numba.cases  # noqa: F401
    import snippets.judge.scan_numba.mutants.block_offset_off_by_one  # noqa: F401
    import snippets.judge.scan_numba.mutants.exclusive_instead_of_inclusive  # noqa: F401
    import snippets.judge.scan_numba.mutants.in_place_without_double_buffer  # noqa: F401
    import snippets.judge.scan_numba.reference  # noqa: F401
    import snippets.judge.scan_numba.solutions.double_buffer  # noqa: F401
    import snippets.judge.scan_numba.starter  # noqa: F401
    import verify.judge.launches  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.scan-numba",
    question="cuda-kernels-by-hand",
    statement="手撕题 `scan-numba` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过（numba 的 CUDA 模拟器里跑），"
              "{mutants} 个已知错误解（做成了 exclusive、Hillis–Steele 没有双缓冲、块间偏移差一块）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    needs=("numba",),
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上 numba CUDA 模拟器里跑的子进程"""
    return selfcheck.observe(ctx.snippet_dir())
