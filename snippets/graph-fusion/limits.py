"""What limits fusion on the CPU, read from the C++ code Inductor generates.

A CPU "kernel" of Inductor is one C++ function; it may hold several loop nests, and each
outermost loop is one pass over its data. So the number that says how often memory is read is
the count of loop nests, not of kernels. Each claim compiles cold from Dynamo's point of view
(``torch._dynamo.reset()``), so that a config patch really reaches the compile; this file holds
no other claims that could share a compiled function.
"""

from __future__ import annotations

import re
from unittest import mock

import torch
import torch._inductor.config as inductor_config
from torch.profiler import ProfilerActivity, profile

from snippets._workloads.fusion import buffers, call_body, kernel_names, loop_nests
from verify.claim import claim


def _compile(fn, *args, patch: dict | None = None, why: list[str] | None = None):
    """Compile ``fn`` afresh under ``patch`` and return it with the wrapper code Inductor generated.

    ``why`` collects the scheduler's reasons for each pair of nodes it declined to fuse (the
    messages ``TORCH_LOGS=fusion`` prints).
    """
    from torch._inductor import scheduler  # noqa: PLC0415
    from torch._inductor.graph import GraphLowering  # noqa: PLC0415

    original = scheduler.WhyNoFuse.__call__

    def record(self, reason, *a):
        if why is not None:
            why.append(reason % a if a else reason)
        return original(self, reason, *a)

    torch._dynamo.reset()
    codes: list[str] = []
    # no FX graph cache: a cache hit skips scheduling, and with it the reasons
    with inductor_config.patch({"fx_graph_cache": False, **(patch or {})}), mock.patch.object(GraphLowering, "save_output_code", codes.append), \
            mock.patch.object(scheduler.WhyNoFuse, "__call__", record):
        cfn = torch.compile(fn)
        out = cfn(*args)
    return cfn, codes[-1], out


def _steps_all_returned(x: torch.Tensor):
    """Eight multiply-adds; every step is also returned, so every step is a buffer of its own."""
    outs = []
    for _ in range(8):
        x = x * 1.1 + 0.1
        outs.append(x)
    return outs


@claim(
    "fusion.max-fusion-size",
    question="graph-fusion",
    statement="融合有上限：`torch._inductor.config.max_fusion_size` 默认是 {default_max_fusion_size}，限制一次融合最多合并多少个调度节点。八步乘加、每步结果都作为输出返回（每步各是一个缓冲区、一个节点）时，默认配置编译成 {default_loop_nests} 趟循环；把它设为 {small_max_fusion_size} 后变成 {small_loop_nests} 趟，调度器拒绝融合的理由是“{small_refusals}”，后一趟要把前一趟写出的结果从内存读回来。只被下一步用的中间值在生成 IR 时就内联了，根本不算节点，所以同样八步、只返回最后一步时，上限设成 {small_max_fusion_size} 也还是 {inlined_loop_nests} 趟。",
    expect={"default_max_fusion_size": 64, "default_loop_nests": 1, "small_max_fusion_size": 3,
            "small_loop_nests": 3, "refused_for_size": True, "inlined_loop_nests": 1, "outputs": 8},
)
def _(ctx):
    x = torch.randn(64, 1024)
    default = inductor_config.max_fusion_size
    _, code_default, outs = _compile(_steps_all_returned, x)
    reasons: list[str] = []
    _, code_small, _ = _compile(_steps_all_returned, x, patch={"max_fusion_size": 3}, why=reasons)
    _, code_inlined, _ = _compile(lambda t: _steps_all_returned(t)[-1], x, patch={"max_fusion_size": 3})
    return {
        "default_max_fusion_size": default,
        "outputs": len(outs),
        "default_kernels": kernel_names(code_default),
        "default_loop_nests": loop_nests(code_default),
        "small_max_fusion_size": 3,
        "small_kernels": kernel_names(code_small),
        "small_loop_nests": loop_nests(code_small),
        "small_refusals": "、".join(sorted(set(reasons))),
        "refused_for_size": "exceeds max fusion" in reasons,
        "inlined_loop_nests": loop_nests(code_inlined),
        "inlined_buffers": buffers(code_inlined),
    }


def _row_center(x: torch.Tensor) -> torch.Tensor:
    return x - x.mean(1, keepdim=True)


def _col_center(x: torch.Tensor) -> torch.Tensor:
    return x - x.mean(0)


def _global_normalize(x: torch.Tensor) -> torch.Tensor:
    return x / x.sum()


@claim(
    "reduce.broadcast-back",
    question="graph-fusion",
    statement="reduce 之后再广播回去，能不能一趟完成取决于归约的方向：按行的 `x - x.mean(1, keepdim=True)` 编译后 {row_loop_nests} 趟循环，每行先求均值、接着就减；按列的 `x - x.mean(0)` 和全局的 `x / x.sum()` 各只有 {col_kernels} 个和 {global_kernels} 个 C++ kernel，里面却各是 {col_loop_nests} 趟和 {global_loop_nests} 趟循环，缓冲区 {col_buffers} 和 {global_buffers} 里先放下归约结果：一列或全局的和要读完整个张量才有，广播回去的那一趟必须等它，x 因此被读两遍。",
    expect={"row_loop_nests": 1, "col_kernels": 1, "col_loop_nests": 2, "global_kernels": 1,
            "global_loop_nests": 2, "col_buffers": [[512], [256, 512]], "global_buffers": [[], [256, 512]],
            "all_match_eager": True},
)
def _(ctx):
    x = torch.randn(256, 512)
    out: dict = {}
    match = True
    for label, fn in (("row", _row_center), ("col", _col_center), ("global", _global_normalize)):
        _, code, y = _compile(fn, x)
        out[f"{label}_kernels"] = len(kernel_names(code))
        out[f"{label}_loop_nests"] = loop_nests(code)
        out[f"{label}_buffers"] = buffers(code)
        match = match and torch.allclose(y, fn(x), rtol=1e-4, atol=1e-5)
    out["all_match_eager"] = match
    return out


def _sum_all(x: torch.Tensor) -> torch.Tensor:
    return x.sum()


@claim(
    "reduce.split-cpu",
    question="graph-fusion",
    statement="把一个 16M 元素的张量整个求和（按 {threads_at_compile} 个线程编译）：CPU 上 Inductor 不拆成两个 kernel，而是 {kernels} 个 kernel、{loop_nests} 趟循环，除输出外不分配缓冲区（缓冲区 {buffers}）；`#pragma omp parallel` 里每个线程把自己那一段累加进局部变量，存进长度为 {per_thread_slots} 的数组，并行区结束后再串行相加，累加用的是分块求和 `cascade_sum_combine`，减少 float 误差的累积。",
    expect={"threads_at_compile": 2, "kernels": 1, "loop_nests": 1, "buffers": [[]], "per_thread_slots": 2,
            "omp_parallel": True, "cascade_sum": True, "matches_eager": True},
)
def _(ctx):
    x = torch.randn(1 << 24, generator=torch.Generator().manual_seed(0))
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # the generated code is specialised to the thread count it is compiled for
    try:
        _, code, y = _compile(_sum_all, x)
    finally:
        torch.set_num_threads(before)
    slots = re.findall(r"tmp_acc0_vec_arr\[(\d+)\];", code)
    return {
        "threads_at_compile": 2,
        "kernels": len(kernel_names(code)),
        "loop_nests": loop_nests(code),
        "buffers": buffers(code),
        "per_thread_slots": int(slots[0]) if slots else None,
        "omp_parallel": "#pragma omp parallel" in code,
        "cascade_sum": "cascade_sum_combine" in code,
        "matches_eager": torch.allclose(y, x.sum(), rtol=1e-4),
    }


def _foreach(xs, ys):
    return torch._foreach_add(xs, ys, alpha=0.5)


@claim(
    "fusion.foreach",
    question="graph-fusion",
    statement="`torch._foreach_add` 对一组张量做同一个操作（优化器更新参数就是这样）。CPU 上 eager 并没有一个合起来的 kernel：profiler 里 `aten::_foreach_add` 底下是 {eager_adds} 次 `aten::add`，一个张量一次；编译后 {tensors} 个张量进了 {compiled_kernels} 个 C++ kernel、一次调用，里面仍是 {compiled_loop_nests} 趟循环，每个张量一趟。省下的是逐个调度的开销，每个元素照样只读写一遍。",
    expect={"eager_adds": 4, "tensors": 4, "compiled_kernels": 1, "compiled_calls": 1,
            "compiled_loop_nests": 4, "matches_eager": True},
)
def _(ctx):
    xs = [torch.randn(1000 * (i + 1)) for i in range(4)]
    ys = [torch.randn(1000 * (i + 1)) for i in range(4)]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        ref = _foreach(xs, ys)
    names = [e.name for e in prof.events()]
    _, code, outs = _compile(_foreach, xs, ys)
    kernels = kernel_names(code)
    return {
        "tensors": len(xs),
        "eager_ops": names,
        "eager_adds": names.count("aten::add"),
        "compiled_kernels": len(kernels),
        "compiled_kernel_names": kernels,
        "compiled_calls": sum(call_body(code).count(f"{k}(") for k in kernels),
        "compiled_loop_nests": loop_nests(code),
        "matches_eager": all(torch.allclose(a, b) for a, b in zip(outs, ref)),
    }
