"""The judge of layernorm-triton tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.layernorm_triton.cases  # noqa: F401
    import snippets.judge.layernorm_triton.mutants.eps_outside_sqrt  # noqa: F401
    import snippets.judge.layernorm_triton.mutants.mean_over_block  # noqa: F401
    import snippets.judge.layernorm_triton.mutants.one_pass_variance  # noqa: F401
    import snippets.judge.layernorm_triton.mutants.unbiased_variance  # noqa: F401
    import snippets.judge.layernorm_triton.reference  # noqa: F401
    import snippets.judge.layernorm_triton.solutions.blocked  # noqa: F401
    import snippets.judge.layernorm_triton.solutions.one_block  # noqa: F401
    import snippets.judge.layernorm_triton.starter  # noqa: F401
    import verify.judge.launches  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.layernorm-triton",
    question="norm-layers",
    statement="手撕题 `layernorm-triton` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过（Triton 解释器里跑），"
              "{mutants} 个已知错误解（方差除以 n-1、eps 加在根号外、均值和方差除以块大小、方差用 E[x²] − E[x]² 一遍算）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    needs=("triton",),
    timeout=400,
)
def _(ctx):
    """范围：本站评测器，CPU 上 Triton 解释器里跑的子进程"""
    return selfcheck.observe(ctx.snippet_dir())
