"""The judge of softmax-backward-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.softmax_backward_torch.cases  # noqa: F401
    import snippets.judge.softmax_backward_torch.mutants.diagonal_only  # noqa: F401
    import snippets.judge.softmax_backward_torch.mutants.no_sum_term  # noqa: F401
    import snippets.judge.softmax_backward_torch.mutants.wrong_dim  # noqa: F401
    import snippets.judge.softmax_backward_torch.reference  # noqa: F401
    import snippets.judge.softmax_backward_torch.solutions.jacobian  # noqa: F401
    import snippets.judge.softmax_backward_torch.solutions.row_sum  # noqa: F401
    import snippets.judge.softmax_backward_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.softmax-backward-torch",
    question="softmax-online",
    statement="手撕题 `softmax-backward-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（漏了减 Σ dy·y、在列上求和、只用雅可比的对角线）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
