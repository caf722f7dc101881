"""The judge of moe-router-torch tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.moe_router_torch.cases  # noqa: F401
    import snippets.judge.moe_router_torch.mutants.ascending_order  # noqa: F401
    import snippets.judge.moe_router_torch.mutants.lowest_experts  # noqa: F401
    import snippets.judge.moe_router_torch.mutants.no_renormalise  # noqa: F401
    import snippets.judge.moe_router_torch.mutants.softmax_over_tokens  # noqa: F401
    import snippets.judge.moe_router_torch.reference  # noqa: F401
    import snippets.judge.moe_router_torch.solutions.softmax_topk  # noqa: F401
    import snippets.judge.moe_router_torch.solutions.topk_then_softmax  # noqa: F401
    import snippets.judge.moe_router_torch.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.moe-router-torch",
    question="moe-expert-parallel",
    statement="手撕题 `moe-router-torch` 的评测分得清对错：{solutions} 个正确解（先全 softmax 再取 top-k 重归一化，"
              "先在 logits 上取 top-k 再对这 k 个做 softmax，两者数学上相等）在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（没有重归一化、按权重从小到大排、选了得分最低的专家、softmax 做在 token 那一维）"
              "全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 4}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，CPU 上的 PyTorch 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
