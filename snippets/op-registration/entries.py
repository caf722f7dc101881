"""Which kernels have an unboxed entry: the KernelFunction factories in the torch wheel's headers."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from verify.claim import claim

Q = "op-registration"
HEADER = "ATen/core/boxing/KernelFunction_impl.h"
TERMINALS = {"makeFromBoxedKernel": "只有 boxed", "makeFromUnboxedFunctor": "两个都有"}


def _header() -> str:
    from torch.utils import cpp_extension  # noqa: PLC0415

    return next(Path(p) / HEADER for p in cpp_extension.include_paths() if (Path(p) / HEADER).is_file()).read_text()


def _bodies(text: str) -> dict[str, str]:
    """Factory name -> the text of all its definitions (overloads joined), from `KernelFunction::make…(` to the next
    line that is a lone `}`."""
    out: dict[str, str] = {}
    for m in re.finditer(r"KernelFunction::(make\w+)\(", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start : m.start()].strip().startswith("return"):
            continue  # a call, not a definition
        end = text.index("\n}", m.end())
        out[m.group(1)] = out.get(m.group(1), "") + text[m.end() : end]
    return out


def _ends_in(name: str, bodies: dict[str, str], seen: frozenset = frozenset()) -> set[str]:
    """The terminal factories a factory reaches through the factories it calls."""
    if name in TERMINALS:
        return {name}
    found: set[str] = set()
    for callee in set(re.findall(r"\b(make\w+)\s*<?[^;(]*?\(", bodies.get(name, ""))):
        if callee in bodies and callee != name and callee not in seen:
            found |= _ends_in(callee, bodies, seen | {name})
    return found


@claim("boxed.boxed-only-no-unboxed", question=Q,
       statement="不是每个 kernel 都有 unboxed 入口。这个 torch（{torch}）的 `KernelFunction_impl.h` 里，造 KernelFunction "
                 "的工厂函数最后都落到两处之一：{boxed_only} 经由 `makeFromBoxedKernel`，它给 unboxed 指针填的是 "
                 "`{boxed_kernel_unboxed}`，只有 boxed 入口（fallback、fallthrough 都是这样）；{both} 经由 "
                 "`makeFromUnboxedFunctor`，unboxed 指针指向按签名生成的包装，boxed 入口是 "
                 "`{unboxed_functor_boxed}`，两个都有。按 C++ 签名调用一个只有 boxed 入口的 kernel 时，"
                 "`KernelFunction::call` 发现 unboxed 指针为空，改走 `{call_fallback}`，先把参数装进栈。",
       expect={"boxed_only": ["makeAmbiguousAutogradOther", "makeFallthrough", "makeFromBoxedFunction",
                              "makeFromBoxedFunctor"],
               "both": ["makeFromUnboxedFunction", "makeFromUnboxedLambda", "makeFromUnboxedRuntimeFunction"],
               "boxed_kernel_unboxed": "nullptr",
               "unboxed_functor_boxed": "make_boxed_from_unboxed_functor",
               "call_fallback": "BoxedKernelWrapper"})
def _(ctx):
    text = _header()
    bodies = _bodies(text)
    kinds = {name: sorted(_ends_in(name, bodies)) for name in sorted(bodies) if name not in TERMINALS}
    boxed_kernel = re.search(r"return KernelFunction\(\s*std::move\(boxed_fn\),\s*(\w+)\)", bodies["makeFromBoxedKernel"])
    functor = bodies["makeFromUnboxedFunctor"]
    call_at = text.index("KernelFunction::call(")
    call_body = text[call_at : text.index("\n}", call_at)]
    tail = call_body[call_body.rindex("return ") :]
    return {"torch": torch.__version__.split("+")[0], "kinds": kinds,
            "boxed_only": [n for n, k in kinds.items() if k == ["makeFromBoxedKernel"]],
            "both": [n for n, k in kinds.items() if k == ["makeFromUnboxedFunctor"]],
            "boxed_kernel_unboxed": boxed_kernel.group(1) if boxed_kernel else "",
            "unboxed_functor_boxed": "make_boxed_from_unboxed_functor"
            if "&impl::make_boxed_from_unboxed_functor<" in functor and "void_unboxed_fn" in functor else "",
            "call_fallback": "BoxedKernelWrapper" if "impl::BoxedKernelWrapper<" in tail else tail[:80]}
