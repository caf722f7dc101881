"""Inductor's CPU output: the C++ it generates for a small element-wise chain compiled with dynamic shapes (one g++ compile)."""

from __future__ import annotations

import re

import torch

from verify.claim import claim

Q = "torch-compile-internals"


def _chain(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() * 2 + 1).relu()


@claim(
    "inductor.cpp-kernel",
    question=Q,
    statement="Inductor 在 CPU 上把 `(x.sin() * 2 + 1).relu()` 降成 {kernels} 个 C++ 函数 `{kernel_name}`、{loop_nests} 趟循环，只分配 {buffers} 个输出缓冲区；"
              "`dynamic=True` 时循环上界是函数参数 `{loop_bound}` 而不是常数，长度 1000 和 37 共用这一份代码（新编译 {recompiles} 次），"
              "尾部不足一个向量的元素{tail_masked:?由同一循环里带长度的 loadu 处理|另有处理}；"
              "循环体用 `at::vec::Vectorized<float>`，这台 CPU 上 Inductor 选的指令集是 {vec_isa}，一次处理 {vector_width} 个 float。",
    expect={"kernels": 1, "kernel_name": {"contains": "fused"}, "buffers": 1, "loop_nests": 1, "loop_bound": "ks0",
            "recompiles": 0, "tail_masked": True, "vectorized_as_isa": True, "results_match_eager": True},
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    """范围：Inductor 的 C++ 后端，torch 2.13"""
    from torch._dynamo.utils import counters  # noqa: PLC0415
    from torch._inductor import cpu_vec_isa  # noqa: PLC0415
    from torch._inductor.utils import run_and_get_code  # noqa: PLC0415

    torch._dynamo.reset()
    counters.clear()
    fn = torch.compile(_chain, dynamic=True)
    x, y = torch.randn(1000), torch.randn(37)
    out, codes = run_and_get_code(fn, x)
    ok = torch.allclose(out, _chain(x), rtol=1e-5, atol=1e-6) and torch.allclose(fn(y), _chain(y), rtol=1e-5, atol=1e-6)
    code = codes[0]
    names = re.findall(r"^(\w+) = async_compile\.cpp\w*\(", code, re.M)
    call = code.split("def call(self, args):", 1)[-1]
    bound = re.search(r"for\(int64_t x0=static_cast<int64_t>\(0L\); x0<static_cast<int64_t>\((\w+)\)", code)
    width = re.search(r"Vectorized<float>::loadu\([^;]*?static_cast<int64_t>\((\d+)\)\)", code)
    isa = cpu_vec_isa.pick_vec_isa()
    isa_width = isa.nelements(torch.float) if isa else 0
    return {
        "kernels": len(names), "kernel_name": names[0] if names else "", "buffers": len(re.findall(r"= empty_strided_cpu\(", call)),
        "loop_nests": len(re.findall(r"^\s*for\(int64_t x0=", code, re.M)),
        "loop_bound": bound.group(1) if bound else None, "recompiles": counters["stats"]["unique_graphs"] - 1,
        "vec_isa": str(isa) if isa else "none", "vector_width": int(width.group(1)) if width else 0,
        "vectorized_as_isa": (int(width.group(1)) if width else 0) == isa_width,
        "tail_masked": bool(re.search(r"loadu\(in_ptr0 \+ static_cast<int64_t>\(x0\), static_cast<int64_t>\(ks0 \+", code)) or not isa,
        "results_match_eager": ok,
        "kernel_lines": [ln.strip() for ln in code.splitlines() if "Vectorized<float>::loadu" in ln or ".store(" in ln][:4],
    }
