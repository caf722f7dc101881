"""The judge of autograd-function-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.autograd_function_torch.cases  # noqa: F401
    import snippets.judge.autograd_function_torch.mutants.backward_returns_none  # noqa: F401
    import snippets.judge.autograd_function_torch.mutants.ignores_grad_output  # noqa: F401
    import snippets.judge.autograd_function_torch.mutants.missing_x_term  # noqa: F401
    import snippets.judge.autograd_function_torch.mutants.saves_output  # noqa: F401
    import snippets.judge.autograd_function_torch.mutants.sigmoid_grad_overflows  # noqa: F401
    import snippets.judge.autograd_function_torch.reference  # noqa: F401
    import snippets.judge.autograd_function_torch.solutions.save_input  # noqa: F401
    import snippets.judge.autograd_function_torch.solutions.save_sigmoid  # noqa: F401
    import snippets.judge.autograd_function_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.autograd-function-torch",
    question="autograd-engine",
    statement="手撕题 `autograd-function-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（backward 漏了 x·σ'(x) 项、存错了张量、没有返回梯度、没乘上游梯度、"
              "σ' 的写法在 exp 溢出时得到 NaN）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
