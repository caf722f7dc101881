"""The judge of bn-backward-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.bn_backward_torch.cases  # noqa: F401
    import snippets.judge.bn_backward_torch.mutants.dgamma_uses_x  # noqa: F401
    import snippets.judge.bn_backward_torch.mutants.missing_eps  # noqa: F401
    import snippets.judge.bn_backward_torch.mutants.no_mean_terms  # noqa: F401
    import snippets.judge.bn_backward_torch.mutants.unbiased_variance  # noqa: F401
    import snippets.judge.bn_backward_torch.reference  # noqa: F401
    import snippets.judge.bn_backward_torch.solutions.closed_form  # noqa: F401
    import snippets.judge.bn_backward_torch.solutions.staged  # noqa: F401
    import snippets.judge.bn_backward_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.bn-backward-torch",
    question="norm-layers",
    statement="手撕题 `bn-backward-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（把均值和方差当常数、方差除以 N-1、dgamma 用 x 而非 x̂、开方前漏加 eps）"
              "全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
