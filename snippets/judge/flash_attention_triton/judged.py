"""The judge of flash-attention-triton tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.flash_attention_triton.cases  # noqa: F401
    import snippets.judge.flash_attention_triton.mutants.no_acc_rescale  # noqa: F401
    import snippets.judge.flash_attention_triton.mutants.no_max_subtraction  # noqa: F401
    import snippets.judge.flash_attention_triton.mutants.no_sum_rescale  # noqa: F401
    import snippets.judge.flash_attention_triton.reference  # noqa: F401
    import snippets.judge.flash_attention_triton.solutions.online  # noqa: F401
    import snippets.judge.flash_attention_triton.starter  # noqa: F401
    import verify.judge.launches  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.flash-attention-triton",
    question="flash-attention",
    statement="手撕题 `flash-attention-triton` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过（Triton 解释器里跑），"
              "{mutants} 个已知错误解（最大值变大时没重新缩放累加器、没重新缩放运行和、没减最大值）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    needs=("triton",),
    timeout=400,
)
def _(ctx):
    """范围：本站评测器，CPU 上 Triton 解释器里跑的子进程"""
    return selfcheck.observe(ctx.snippet_dir())
