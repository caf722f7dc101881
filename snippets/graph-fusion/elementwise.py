"""Element-wise fusion on the CPU: what Inductor generates for a chain, and what eager runs."""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch.profiler import ProfilerActivity, profile

from snippets._workloads.fusion import (
    bias_relu_dropout,
    buffers,
    full_buffers,
    call_body,
    cheap_chain,
    compiled,
    kernel_names,
    loop_nests,
)
from verify.claim import claim

SHAPE = (1024, 1024)


def _dropout_compiled(x: torch.Tensor, b: torch.Tensor):
    # Kernel profiling makes each generated C++ kernel a profiler event, so that the profiler
    # can count compiled kernels the way it counts eager ATen ops.
    with inductor_config.patch({"cpp.enable_kernel_profile": True}):
        return compiled(bias_relu_dropout, x, b)


@claim(
    "elementwise.one-kernel",
    question="graph-fusion",
    statement="bias + ReLU + dropout 编译后在 CPU 上是 {kernels} 个 C++ kernel、{loop_nests} 趟循环，整张量大小的缓冲区只有输出 {buffers} 个：dropout 的随机数在 kernel 里按元素下标生成，掩码从不落内存，被丢弃的元素占 {dropped_fraction:pct}，和 `p=0.1` 相符。",
    expect={"kernels": 1, "loop_nests": 1, "buffers": 1, "name_has_relu_and_dropout": True,
            "kept_values_match": True, "dropped_fraction": {"approx": [0.1, 0.2]}},
)
def _(ctx):
    x, b = torch.randn(SHAPE), torch.randn(SHAPE[1])
    fn, codes = _dropout_compiled(x, b)
    code = codes[0]
    names = kernel_names(code)
    y = fn(x, b)
    ref = torch.relu(x + b) / 0.9  # kept elements are scaled by 1 / (1 - p)
    positive = ref > 0  # relu's own zeros say nothing about dropout
    kept = positive & (y != 0)
    return {
        "kernels": len(names),
        "kernel_names": names,
        "loop_nests": loop_nests(code),
        "buffers": len(full_buffers(code, x.numel())),
        "all_buffers": buffers(code),
        "name_has_relu_and_dropout": all("relu" in n and "dropout" in n for n in names),
        "kept_values_match": torch.allclose(y[kept], ref[kept], rtol=1e-5, atol=1e-6),
        "dropped_fraction": round(1 - kept.sum().item() / positive.sum().item(), 4),
        "call": call_body(code).strip().splitlines(),
    }


def _full_tensor_ops(prof, shape) -> list[str]:
    """ATen ops that touch a tensor of the full shape and leave no such work to a child op.

    Each is one kernel that passes over the whole tensor. An op such as ``aten::dropout``, which
    hands the work to ``bernoulli_`` and ``mul``, is not counted itself; small children (turning
    a Python scalar into a tensor) do not hide their parent.
    """
    def full(e) -> bool:
        return (e.name.startswith("aten::") and not e.name.startswith("aten::empty")  # allocation only
                and any(list(s) == list(shape) for s in (e.input_shapes or [])))

    def deeper(e) -> bool:
        return any(full(c) or deeper(c) for c in e.cpu_children)

    return [e.name for e in prof.events() if full(e) and not deeper(e)]


@claim(
    "elementwise.launches",
    question="graph-fusion",
    statement="用 profiler 数，eager 的 bias + ReLU + dropout 在 CPU 上调了 {eager_kernels} 个整张量的 ATen kernel {eager_ops}，dropout 自己就拆成生成噪声、缩放、相乘几步；编译后只剩 {compiled_kernels} 个融合 kernel，整张量的 ATen kernel 一个也不剩，剩下的 ATen 调用只是生成一个随机种子。",
    expect={"eager_kernels": {">=": 4}, "compiled_kernels": 1, "compiled_full_tensor_aten_ops": 0},
)
def _(ctx):
    x, b = torch.randn(SHAPE), torch.randn(SHAPE[1])
    fn, _ = _dropout_compiled(x, b)
    fn(x, b)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as eager:
        bias_relu_dropout(x, b)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as comp:
        fn(x, b)
    eager_ops = _full_tensor_ops(eager, SHAPE)
    comp_kernels = [e.name for e in comp.events() if "cpp_fused" in e.name]
    comp_aten = [e.name for e in comp.events() if e.name.startswith("aten::")]
    return {
        "eager_kernels": len(eager_ops),
        "eager_ops": eager_ops,
        "compiled_kernels": len(comp_kernels),
        "compiled_kernel_names": comp_kernels,
        "compiled_aten_ops": comp_aten,
        "compiled_full_tensor_aten_ops": len(_full_tensor_ops(comp, SHAPE)),
    }


@claim(
    "fusion.vertical",
    question="graph-fusion",
    statement="纵向融合最简单的例子是 `relu(x * 2 + 1)`：三个相互依赖的算子在 eager 下是 {eager_ops} 个 kernel，编译后是 {kernels} 个 kernel、{loop_nests} 趟循环，两个中间结果连缓冲区都没有，缓冲区只有输出 {buffers} 个。",
    expect={"kernels": 1, "loop_nests": 1, "buffers": 1, "eager_ops": 3},
)
def _(ctx):
    x = torch.randn(1 << 20)
    fn, codes = compiled(cheap_chain, x, dynamic=True)
    code = codes[0]
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as eager:
        cheap_chain(x)
    return {
        "kernels": len(kernel_names(code)),
        "kernel_names": kernel_names(code),
        "loop_nests": loop_nests(code),
        "buffers": len(buffers(code)),
        "eager_ops": len(_full_tensor_ops(eager, x.shape)),
        "same_result": torch.allclose(fn(x), cheap_chain(x)),
    }


def _chain_with_escape(x: torch.Tensor, b: torch.Tensor):
    t = x + b  # also returned: it outlives the kernel
    return torch.relu(t) * 2.0, t


def _chain_private(x: torch.Tensor, b: torch.Tensor):
    t = x + b  # used only by the next op
    return torch.relu(t) * 2.0


@claim(
    "fusion.short-lived",
    question="graph-fusion",
    statement="只被下一个算子用的中间结果不占缓冲区，`relu(x + b) * 2` 编译后只有输出 {private_buffers} 个缓冲区；同一个中间结果 `x + b` 若也作为输出返回，就必须物化，缓冲区变成 {escaped_buffers} 个、多写一遍内存，但仍然只有 {escaped_kernels} 个 kernel。",
    expect={"private_buffers": 1, "escaped_buffers": 2, "private_kernels": 1, "escaped_kernels": 1},
)
def _(ctx):
    x, b = torch.randn(256, 512), torch.randn(512)
    _, private = compiled(_chain_private, x, b)
    _, escaped = compiled(_chain_with_escape, x, b)
    return {
        "private_buffers": len(buffers(private[0])),
        "escaped_buffers": len(buffers(escaped[0])),
        "private_kernels": len(kernel_names(private[0])),
        "escaped_kernels": len(kernel_names(escaped[0])),
        "escaped_call": call_body(escaped[0]).strip().splitlines(),
    }
