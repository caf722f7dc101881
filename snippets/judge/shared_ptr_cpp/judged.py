"""The judge of shared-ptr-cpp tells right from wrong: every solution passes, every mutant fails, named."""

from typing import TYPE_CHECKING

from verify.claim import claim
from verify.judge import selfcheck

if TYPE_CHECKING:  # never run: importing a file makes its code part of this claim's key
    import snippets.judge.shared_ptr_cpp.cases  # noqa: F401
    import snippets.judge.shared_ptr_cpp.mutants.sources  # noqa: F401  (it names the mutants' C++ files)
    import snippets.judge.shared_ptr_cpp.reference  # noqa: F401
    import snippets.judge.shared_ptr_cpp.solutions.sources  # noqa: F401  (it names the solutions' C++ files)
    import verify.cxx  # noqa: F401
    import verify.judge.cpp  # noqa: F401

DATA = ("problem.yaml", "statement.md", "driver.cpp", "starter.h")


@claim(
    "judge.shared-ptr-cpp",
    question="smart-pointers",
    needs=["g++"],
    statement="手撕题 `shared-ptr-cpp` 的评测分得清对错：{solutions} 个正确解（拷贝并交换、控制块）在同一组 "
              "{cases} 个用例上全部通过（用 AddressSanitizer 和 UBSan 编译，每个用例后查泄漏），{mutants} 个已知错误解"
              "（自赋值先释放、拷贝赋值不放手旧对象、移动后源不置空）全部失败，且各自被认出是哪种错误。",
    expect={"solutions": {">=": 2}, "mutants": {">=": 3}, "solutions_failed": [], "mutants_passed": [],
            "mutants_unnamed": []},
    timeout=300,
)
def _(ctx):
    """范围：本站评测器，g++ 加 sanitizer 编译的 C++ 程序"""
    return selfcheck.observe(ctx.snippet_dir())
