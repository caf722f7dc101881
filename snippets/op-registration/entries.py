"""Which kernels have an unboxed entry: KernelFunctions built by each factory, asked at run time, and the
dispatcher's own dump of registered kernels."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import torch

from verify.claim import claim

Q = "op-registration"
HEADER = "ATen/core/boxing/KernelFunction_impl.h"
SOURCE = "entries_probe.cpp"
LIB_NAME = "opreg_entries_ext"
# The order of the list opreg_entries::probe() returns.
FACTORIES = ("unboxed_plain", "unboxed_sym", "boxed_function", "boxed_functor", "fallthrough")
SLOTS = {0: "都为空", 1: "unboxed_kernel_func_", 2: "sym_unboxed_kernel_func_", 3: "两个都有"}


@functools.cache
def _load() -> None:
    """Compile entries_probe.cpp once per source and torch version, then load it (registration is a side effect)."""
    from torch.utils import cpp_extension  # noqa: PLC0415

    src = Path(__file__).resolve().parent / SOURCE
    digest = hashlib.sha256(src.read_bytes() + torch.__version__.encode()).hexdigest()[:12]
    build_dir = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or tempfile.gettempdir()) / f"opreg_entries-{digest}"
    build_dir.mkdir(parents=True, exist_ok=True)
    cpp_extension.load(name=LIB_NAME, sources=[str(src)], build_directory=str(build_dir),
                       is_python_module=False, extra_cflags=["-O1"])


def _header() -> str:
    from torch.utils import cpp_extension  # noqa: PLC0415

    return next(Path(p) / HEADER for p in cpp_extension.include_paths() if (Path(p) / HEADER).is_file()).read_text()


def _row(op: str, key: str) -> str:
    """What the dispatcher's dump says about the kernel registered for `key`: the words inside `[ ... ]`."""
    for line in torch._C._dispatch_dump(op).splitlines():
        if line.startswith(f"{key}: registered at"):
            return line[line.rfind("[") + 1 : line.rfind("]")].strip()
    return ""


@claim("boxed.boxed-only-no-unboxed", question=Q, needs=["g++"],
       statement="不是每个 kernel 都有 unboxed 入口，unboxed 入口也分两格。这个 torch（{torch}）上编一个扩展，用 "
                 "`KernelFunction` 的工厂函数造 kernel，问 `isValidUnboxed()`（`unboxed_kernel_func_`）和 "
                 "`isValidSymUnboxed()`（`sym_unboxed_kernel_func_`）：`makeFromUnboxedFunction` 包一个签名里没有 SymInt "
                 "的函数，填的是 {slots.unboxed_plain}，签名里有 SymInt 的，填的是 {slots.unboxed_sym}；"
                 "`makeFromBoxedFunction`（按源码 C++ 的 fallback 用它）、`makeFromBoxedFunctor`、"
                 "`makeFallthrough` 造出的 unboxed 指针{slots.boxed_function}。dispatcher 的 `_dispatch_dump` 里，"
                 "同一个扩展用 `m.impl` 注册的 C++ kernel 标着 [{rows.cpp_plain}]；从 Python 用 `Library.impl` 注册的 "
                 "kernel 是 [{rows.python}]，fallthrough 是 [{rows.fallthrough}]。签名里有 SymInt 的 C++ kernel 也只标 "
                 "[{rows.cpp_sym}]：按源码 dump 只看 `unboxed_kernel_func_`。按 C++ 签名调用时 `KernelFunction::call` "
                 "用不上 unboxed 指针，就改走 `{call_fallback}`，先把参数装进栈。",
       expect={"slots": {"unboxed_plain": "unboxed_kernel_func_", "unboxed_sym": "sym_unboxed_kernel_func_",
                         "boxed_function": "都为空", "boxed_functor": "都为空", "fallthrough": "都为空"},
               "rows": {"cpp_plain": "boxed unboxed", "cpp_sym": "boxed", "python": "boxed",
                        "fallthrough": "fallthrough boxed"},
               "call_fallback": "BoxedKernelWrapper"})
def _(ctx):
    _load()
    slots = dict(zip(FACTORIES, (SLOTS[int(b)] for b in torch.ops.opreg_entries.probe()), strict=True))
    lib = torch.library.Library("opreg_entries_py", "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CPU")
        lib.impl("f", torch.library.fallthrough_kernel, "AutocastCPU")
        rows = {"cpp_plain": _row("opreg_entries::plain", "CPU"), "cpp_sym": _row("opreg_entries::sym", "CPU"),
                "python": _row("opreg_entries_py::f", "CPU"), "fallthrough": _row("opreg_entries_py::f", "AutocastCPU")}
    finally:
        lib._destroy()
    text = _header()
    call_at = text.index("KernelFunction::call(")
    call_body = text[call_at : text.index("\n}", call_at)]
    tail = call_body[call_body.rindex("return ") :]
    return {"torch": torch.__version__.split("+")[0], "slots": slots, "rows": rows,
            "call_fallback": "BoxedKernelWrapper" if "impl::BoxedKernelWrapper<" in tail else tail[:80]}
