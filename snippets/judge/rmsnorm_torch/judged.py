"""The judge of rmsnorm-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.rmsnorm_torch.cases  # noqa: F401
    import snippets.judge.rmsnorm_torch.mutants.eps_outside_sqrt  # noqa: F401
    import snippets.judge.rmsnorm_torch.mutants.mean_not_square  # noqa: F401
    import snippets.judge.rmsnorm_torch.mutants.no_weight  # noqa: F401
    import snippets.judge.rmsnorm_torch.reference  # noqa: F401
    import snippets.judge.rmsnorm_torch.solutions.rsqrt  # noqa: F401
    import snippets.judge.rmsnorm_torch.solutions.sum_sqrt  # noqa: F401
    import snippets.judge.rmsnorm_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.rmsnorm-torch",
    question="norm-layers",
    statement="手撕题 `rmsnorm-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（求 x 的均值而非 x² 的、eps 加在开方之后、漏乘 weight）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
