"""Fusion decisions of Inductor's Triton backend under the default configuration, for a GPU recording.

Every claim here needs CUDA; on a CPU build each is shown by its docstring. They compile cold
(``torch._dynamo.reset()``, no FX graph cache) and read the wrapper code Inductor generates.
"""

from __future__ import annotations

from unittest import mock

import torch
import torch._inductor.config as inductor_config

from snippets._workloads.fusion import extern_calls, gemm_bias_relu, kernel_names
from verify.claim import claim

Q = "graph-fusion"


def _compile(fn, *args):
    from torch._inductor.graph import GraphLowering  # noqa: PLC0415

    torch._dynamo.reset()
    codes: list[str] = []
    with inductor_config.patch({"fx_graph_cache": False}), \
            mock.patch.object(GraphLowering, "save_output_code", codes.append):
        out = torch.compile(fn)(*args)
    return out, codes[-1]


@claim(
    "gpu-fusion.gemm-default",
    question=Q,
    statement="CUDA 上默认配置（不开 max-autotune）编译 fp16 的 `relu(x @ w + b)`：GEMM 是库调用 {extern_shown}，"
              "ReLU 在它后面单独一个 Triton kernel（{triton_kernels} 个：{triton_shown}），C 要写出去再被读回来一次。",
    expect={"has_library_gemm": True, "triton_kernels": 1, "matches_eager": True},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上默认配置编译 1024×1024 的 fp16 relu(x @ w + b)：有没有库 GEMM 调用、另有几个 Triton kernel。"""
    g = torch.Generator(device="cuda").manual_seed(0)
    x, w = (torch.randn(1024, 1024, device="cuda", dtype=torch.float16, generator=g) for _ in range(2))
    b = torch.randn(1024, device="cuda", dtype=torch.float16, generator=g)
    out, code = _compile(gemm_bias_relu, x, w, b)
    calls, names = extern_calls(code), kernel_names(code)
    return {
        "extern_calls": calls,
        "extern_shown": "、".join(f"`{c}`" for c in calls),
        "has_library_gemm": any(c in ("mm", "addmm", "bmm", "baddbmm") for c in calls),
        "triton_kernels": len(names),
        "triton_shown": "、".join(names),
        "matches_eager": torch.allclose(out, gemm_bias_relu(x, w, b), atol=1e-1, rtol=1e-2),
    }


def _producer_read_transposed(x: torch.Tensor, y: torch.Tensor):
    p = x.sin()
    return p, p.t() + y


def _input_read_transposed(x: torch.Tensor, y: torch.Tensor):
    p = x.sin()
    return p, p + y.t()


@claim(
    "gpu-fusion.layout",
    question=Q,
    statement="同样两段代码在 CUDA 上：`p, p.t() + y` 编译成 {transposed_kernels} 个 Triton kernel，`p, p + y.t()` 是 {input_kernels} 个。",
    # How many kernels the Triton backend makes of the transposed consumer is what this records: bound, not checked.
    expect={"matches_eager": True},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 512×256 的 p = x.sin() 与 p.t() + y、p + y.t() 一起编译时各生成几个 Triton kernel。"""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(512, 256, device="cuda", generator=g)
    y = torch.randn(256, 512, device="cuda", generator=g)
    out: dict = {}
    match = True
    for label, fn in (("transposed", _producer_read_transposed), ("input", _input_read_transposed)):
        res, code = _compile(fn, x, y)
        out[f"{label}_kernels"] = len(kernel_names(code))
        out[f"{label}_kernel_names"] = kernel_names(code)
        match = match and all(torch.allclose(a, b, atol=1e-5) for a, b in zip(res, fn(x, y)))
    out["matches_eager"] = match
    return out
