"""The judge of attention-causal-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.attention_causal_torch.cases  # noqa: F401
    import snippets.judge.attention_causal_torch.mutants.mask_excludes_diagonal  # noqa: F401
    import snippets.judge.attention_causal_torch.mutants.no_causal_mask  # noqa: F401
    import snippets.judge.attention_causal_torch.mutants.no_scale  # noqa: F401
    import snippets.judge.attention_causal_torch.mutants.scale_by_dim  # noqa: F401
    import snippets.judge.attention_causal_torch.mutants.softmax_wrong_dim  # noqa: F401
    import snippets.judge.attention_causal_torch.reference  # noqa: F401
    import snippets.judge.attention_causal_torch.solutions.masked_softmax  # noqa: F401
    import snippets.judge.attention_causal_torch.solutions.online_blocks  # noqa: F401
    import snippets.judge.attention_causal_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.attention-causal-torch",
    question="flash-attention",
    statement="手撕题 `attention-causal-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（没加因果遮罩、遮罩差一位连对角线也遮住、得分没有缩放、除以 dim 而不是 sqrt(dim)、"
              "softmax 做在查询那一维）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 5}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
