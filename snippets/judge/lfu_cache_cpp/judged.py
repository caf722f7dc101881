"""The judge of lfu-cache-cpp tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.lfu_cache_cpp.cases  # noqa: F401
    import snippets.judge.lfu_cache_cpp.mutants.sources  # noqa: F401  (it names the mutants' C++ files)
    import snippets.judge.lfu_cache_cpp.reference  # noqa: F401
    import snippets.judge.lfu_cache_cpp.solutions.sources  # noqa: F401  (it names the solutions' C++ files)
    import verify.cxx  # noqa: F401
    import verify.judge.cpp  # noqa: F401

DATA = ("problem.yaml", "statement.md", "driver.cpp", "starter.h")


@claim(
    "judge.lfu-cache-cpp",
    question="lru-cache",
    needs=["g++"],
    statement="手撕题 `lfu-cache-cpp` 的评测分得清对错：{solutions} 个正确解（按次数分组的哈希表加最少次数、次数桶的链表）在同一组 "
              "{cases} 个用例上全部通过（用 AddressSanitizer 和 UBSan 编译），{mutants} 个已知错误解（次数相同时淘汰了最近使用的、"
              "新 key 进来不把最少次数重置为 1、put 已有的 key 不加次数、满了时 put 已有的 key 先淘汰了别人）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 3}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=300,
)
def _(ctx):
    """范围：本站评测器，g++ 加 sanitizer 编译的 C++ 程序"""
    return selfcheck.observe(ctx.snippet_dir())
