"""The judge of tiled-gemm-triton tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.tiled_gemm_triton.cases  # noqa: F401
    import snippets.judge.tiled_gemm_triton.mutants.acc_not_zeroed  # noqa: F401
    import snippets.judge.tiled_gemm_triton.mutants.no_k_mask  # noqa: F401
    import snippets.judge.tiled_gemm_triton.mutants.store_without_mask  # noqa: F401
    import snippets.judge.tiled_gemm_triton.mutants.swapped_b_strides  # noqa: F401
    import snippets.judge.tiled_gemm_triton.reference  # noqa: F401
    import snippets.judge.tiled_gemm_triton.solutions.persistent  # noqa: F401
    import snippets.judge.tiled_gemm_triton.solutions.tiled  # noqa: F401
    import snippets.judge.tiled_gemm_triton.starter  # noqa: F401
    import verify.judge.launches  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.tiled-gemm-triton",
    question="tiled-gemm",
    statement="手撕题 `tiled-gemm-triton` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过（Triton 解释器里跑），"
              "{mutants} 个已知错误解（沿 K 读时没加掩码、写回 C 没带掩码、B 的步长用反、累加器没按块清零）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    needs=("triton",),
    timeout=400,
)
def _(ctx):
    """范围：本站评测器，CPU 上 Triton 解释器里跑的子进程"""
    return selfcheck.observe(ctx.snippet_dir())
