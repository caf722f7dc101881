"""The judge of conv-bn-fold-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.conv_bn_fold_torch.cases  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.mutants.conv_b_dropped  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.mutants.eps_outside_sqrt  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.mutants.scale_in_channels  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.mutants.variance_not_std  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.reference  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.solutions.rsqrt_flat  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.solutions.scale_vector  # noqa: F401
    import snippets.judge.conv_bn_fold_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.conv-bn-fold-torch",
    question="conv-cost-and-algorithms",
    statement="手撕题 `conv-bn-fold-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（eps 加在开方之后、丢掉卷积原来的 bias、缩放乘在输入通道上、除以方差而不是标准差）"
              "全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 4}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
