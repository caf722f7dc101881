"""The judge of bounded-queue-cpp tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.bounded_queue_cpp.cases  # noqa: F401
    import snippets.judge.bounded_queue_cpp.mutants.sources  # noqa: F401  (it names the mutants' C++ files)
    import snippets.judge.bounded_queue_cpp.reference  # noqa: F401
    import snippets.judge.bounded_queue_cpp.solutions.sources  # noqa: F401  (it names the solutions' C++ files)
    import verify.cxx  # noqa: F401
    import verify.judge.cpp  # noqa: F401

DATA = ("problem.yaml", "statement.md", "driver.cpp", "starter.h")


@claim(
    "judge.bounded-queue-cpp",
    question="lru-cache",
    needs=["g++"],
    statement="手撕题 `bounded-queue-cpp` 的评测分得清对错：{solutions} 个正确解（一把锁加两个条件变量、环形缓冲加一个条件变量）"
              "在同一组 {cases} 个用例上全部通过（用 ThreadSanitizer 编译，多个生产者和消费者同时跑），{mutants} 个已知错误解"
              "（解锁之后才改队列、pop 不唤醒生产者、push 不等空位）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 3}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=300,
)
def _(ctx):
    """范围：本站评测器，g++ 与 ThreadSanitizer"""
    return selfcheck.observe(ctx.snippet_dir())
