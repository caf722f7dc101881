"""The judge of row-sum-numba tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

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

DATA = ("problem.yaml", "statement.md")


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
