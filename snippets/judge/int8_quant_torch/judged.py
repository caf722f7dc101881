"""The judge of int8-quant-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.int8_quant_torch.cases  # noqa: F401
    import snippets.judge.int8_quant_torch.mutants.per_tensor_scale  # noqa: F401
    import snippets.judge.int8_quant_torch.mutants.range_128  # noqa: F401
    import snippets.judge.int8_quant_torch.mutants.truncate  # noqa: F401
    import snippets.judge.int8_quant_torch.mutants.zero_row_nan  # noqa: F401
    import snippets.judge.int8_quant_torch.reference  # noqa: F401
    import snippets.judge.int8_quant_torch.solutions.divide  # noqa: F401
    import snippets.judge.int8_quant_torch.solutions.max_keepdim  # noqa: F401
    import snippets.judge.int8_quant_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.int8-quant-torch",
    question="quant-granularity",
    statement="手撕题 `int8-quant-torch` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（整个张量共用一个 scale、截断而不是四舍五入、用 -128..127 的非对称范围、"
              "全零行的 scale 成了 0）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 4}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
