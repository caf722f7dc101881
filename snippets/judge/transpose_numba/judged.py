"""The judge of transpose-numba tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

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

DATA = ("problem.yaml", "statement.md")


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
