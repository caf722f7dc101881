"""The judge of topo-sort-python tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.topo_sort_python.cases  # noqa: F401
    import snippets.judge.topo_sort_python.mutants.kahn_skips_self_loop  # noqa: F401
    import snippets.judge.topo_sort_python.mutants.misses_cycle  # noqa: F401
    import snippets.judge.topo_sort_python.mutants.no_gray_state  # noqa: F401
    import snippets.judge.topo_sort_python.mutants.reversed_order  # noqa: F401
    import snippets.judge.topo_sort_python.reference  # noqa: F401
    import snippets.judge.topo_sort_python.solutions.dfs_iterative  # noqa: F401
    import snippets.judge.topo_sort_python.solutions.kahn  # noqa: F401
    import snippets.judge.topo_sort_python.starter  # noqa: F401

DATA = ("problem.yaml", "statement.md")


@claim(
    "judge.topo-sort-python",
    question="autograd-engine",
    statement="手撕题 `topo-sort-python` 的评测分得清对错：{solutions} 个正确解在同一组 {cases} 个用例上全部通过，"
              "{mutants} 个已知错误解（漏掉环、DFS 不分“正在访问”、顺序反了、跳过了自环）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 1}, "mutants": {">=": 2}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=240,
)
def _(ctx):
    """范围：本站评测器，Python 子进程"""
    return selfcheck.observe(ctx.snippet_dir())
