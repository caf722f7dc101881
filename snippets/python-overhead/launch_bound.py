"""How to tell that a GPU job is CPU-bound (launch-bound): what a profile shows per op (events
counted, not timed, on the CPU), and on a GPU the idle gaps between kernels, the sync points and
the caching allocator's share of every tiny op."""

from __future__ import annotations

from collections import Counter

import torch

from snippets._workloads.overhead import tiny_chain
from verify.claim import claim

Q = "python-overhead"


def cpu_events(fn) -> list:
    """The events torch.profiler records on the CPU for one call of ``fn``."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return list(prof.events())


def gpu_timeline(fn) -> dict:
    """One call of ``fn`` under torch.profiler with CUDA activity: the kernels' share of the GPU's span."""
    from torch.autograd import DeviceType  # noqa: PLC0415
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    fn()  # warm-up: handles, workspaces, the allocator's blocks
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    events = list(prof.events())
    spans = sorted((e.time_range.start, e.time_range.end) for e in events if e.device_type == DeviceType.CUDA)
    busy, reach = 0.0, None
    for start, end in spans:  # the union of the GPU's intervals (us)
        if reach is None or start >= reach:
            busy += end - start
            reach = end
        elif end > reach:
            busy += end - reach
            reach = end
    span = spans[-1][1] - spans[0][0] if spans else 0.0
    return {"gpu_events": len(spans), "launches": sum(e.name.startswith("cudaLaunchKernel") for e in events),
            "span_us": span, "busy_us": busy, "busy": busy / span if span else 0.0}


@claim(
    "launch-bound.eager-vs-compiled-events",
    question=Q,
    statement="在 CPU 上用 torch.profiler 数事件（不看时间）：eager 跑 {=40} 个乘加 Python 标量的小逐点运算，Python 发出"
              " {eager_top_ops} 个顶层 ATen 算子，连同它们内部的调用共 {eager_aten_events} 个 ATen 事件（float32 张量乘 Python"
              " 标量时，标量是一个 double 的 0 维张量，算子里还要先 `aten::to` 把它转成 float32：每个算子下面挂着"
              " {children_per_op} 个事件；double 张量乘同一个标量时只有 {double_mul_events} 个事件）；`torch.compile` 之后，"
              "同样一次调用里 ATen 事件是 {compiled_aten_events} 个，只剩 {compiled_regions} 个 `Torch-Compiled Region` 和"
              " {compiled_graph_calls} 次 `Call CompiledFxGraph`。",
    # Exact for this torch: tiny_chain runs 20 steps of `x * 1.01 + 0.01`, one aten::mul and one
    # aten::add each; the compiled call runs one generated kernel and no ATen op at all (Inductor's
    # CPU code is its own C++ loop). The cast of the wrapped scalar is why each op has children
    # here; that it is the cast is checked by the double tensor, whose op has none.
    expect={"eager_top_ops": 40, "eager_top_names": {"aten::mul": 20, "aten::add": 20},
            "eager_aten_events": {">=": 40}, "double_mul_events": 1, "first_child": "aten::to",
            "compiled_aten_events": 0, "compiled_regions": 1, "compiled_graph_calls": 1},
)
def _(ctx):
    x = torch.randn(16)
    eager = cpu_events(lambda: tiny_chain(x))
    aten = [e for e in eager if e.name.startswith("aten::")]
    top = [e for e in aten if e.cpu_parent is None]
    mul = next(e for e in top if e.name == "aten::mul")
    children = [e for e in aten if e.cpu_parent is mul]
    xd = x.double()
    double_mul = [e for e in cpu_events(lambda: xd * 1.01) if e.name.startswith("aten::")]
    torch._dynamo.reset()
    compiled = torch.compile(tiny_chain)
    compiled(x)  # compiles
    after = cpu_events(lambda: compiled(x))
    return {
        "eager_top_ops": len(top),
        "eager_top_names": dict(Counter(e.name for e in top)),
        "eager_aten_events": len(aten),
        "eager_event_names": dict(Counter(e.name for e in aten)),
        "children_per_op": len([e for e in aten if e.cpu_parent is not None]) // max(len(top), 1),
        "first_child": children[0].name if children else None,
        "double_mul_events": len(double_mul),
        "compiled_aten_events": sum(e.name.startswith("aten::") for e in after),
        "compiled_regions": sum(e.name.startswith("Torch-Compiled Region") for e in after),
        "compiled_graph_calls": sum(e.name.startswith("## Call CompiledFxGraph") for e in after),
        "compiled_event_names": [e.name for e in after],
    }


@claim(
    "launch-bound.item-op",
    question=Q,
    statement="同步点在 profiler 里也有名字：`x.sum().item()` 记为 {item_ops}，`aten::item` 下面的"
              " `aten::_local_scalar_dense` 就是把值拷回主机的那一步，在 CUDA 张量上它要等 stream 把前面的 kernel 都算完。",
    # Exact: Tensor.item() is aten::item, which calls aten::_local_scalar_dense (the op with a
    # CPU and a CUDA kernel; the CUDA one copies to the host and synchronises the stream:
    # launch-bound.sync-debug-mode shows that on a GPU).
    expect={"item_ops": ["aten::item", "aten::_local_scalar_dense"], "local_scalar_parent": "aten::item"},
)
def _(ctx):
    x = torch.randn(16)
    events = [e for e in cpu_events(lambda: x.sum().item()) if e.name.startswith("aten::")]
    after_sum = [e for e in events if e.name in ("aten::item", "aten::_local_scalar_dense")]
    dense = next((e for e in events if e.name == "aten::_local_scalar_dense"), None)
    return {
        "ops": [e.name for e in events],
        "item_ops": [e.name for e in after_sum],
        "local_scalar_parent": dense.cpu_parent.name if dense is not None and dense.cpu_parent is not None else None,
    }


@claim(
    "launch-bound.gpu-idle",
    question=Q,
    statement="在 GPU 上用 torch.profiler 录时间线：连续 {=1000} 次一元素加法，GPU 上 {tiny.gpu_events} 个 kernel 加起来只占"
              " GPU 时间线的 {tiny.busy:pct}，其余是 kernel 之间的空隙，GPU 在等 CPU 提交下一个；连续 {=50} 次"
              " 4096×4096 的矩阵乘，kernel 占 {big.busy:pct}，GPU 一直有活。",
    needs=["cuda"],
    kind="perf",
    # A ratio of two times in one trace, so it holds on any GPU: a one-element add runs for about
    # as long as a kernel takes to start, while Python, the dispatcher and the launch of the next
    # one take several times that on the CPU; 4096^3 FMAs keep any GPU busy far longer than the
    # launch of the next one. Timed, so it runs alone.
    expect={"tiny_busy": {"<=": 0.5}, "big_busy": {">=": 0.9}, "tiny_kernels_at_least": True},
)
def _(ctx):
    """torch.profiler 时间线上 1000 次一元素加法与 50 次 4096×4096 矩阵乘各自的 kernel 个数和 kernel 占 GPU 时间线的比例。"""
    a = torch.ones(1, device="cuda")
    x = torch.randn(4096, 4096, device="cuda")

    def tiny():
        y = a
        for _ in range(1000):
            y = y + 1.0

    def big():
        for _ in range(50):
            x @ x  # noqa: B018

    t, b = gpu_timeline(tiny), gpu_timeline(big)
    return {"tiny": t, "big": b, "tiny_busy": t["busy"], "big_busy": b["busy"],
            "tiny_kernels_at_least": t["gpu_events"] >= 1000}


@claim(
    "launch-bound.sync-debug-mode",
    question=Q,
    statement="找同步点不必读时间线：`torch.cuda.set_sync_debug_mode(\"error\")` 之后，CUDA 张量上不需要同步的加法"
              "{add_raised:?也报错|照常执行}，而 `.item()` {item_raised:?直接报错|没有报错}（{item_error_type}：{item_error}）；"
              "设成 `\"warn\"` 则只警告，适合在训练脚本里跑一步、把所有同步点列出来。",
    needs=["cuda"],
    # Exact: with the debug mode at "error", an op that synchronises the host with the device
    # (copying a value to pageable host memory and waiting for it: _local_scalar_dense) raises
    # instead of syncing; a kernel launch does not sync. The mode is put back afterwards.
    expect={"add_raised": False, "item_raised": True, "item_error": {"contains": "synchroniz"}},
)
def _(ctx):
    """torch.cuda.set_sync_debug_mode 设为 error 时，一个 8 元素 CUDA 张量上的加法与 .item() 各自是否报错。"""
    x = torch.ones(8, device="cuda")
    torch.cuda.synchronize()
    add_raised, item_raised, item_error_type, item_error = False, False, None, ""
    torch.cuda.set_sync_debug_mode("error")
    try:
        try:
            y = x + 1.0
        except Exception:  # noqa: BLE001  (that it raised is what the claim reports)
            add_raised, y = True, x
        try:
            y.sum().item()
        except Exception as exc:  # noqa: BLE001
            item_raised, item_error_type, item_error = True, type(exc).__name__, str(exc).splitlines()[0][:200]
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return {"add_raised": add_raised, "item_raised": item_raised, "item_error_type": item_error_type,
            "item_error": item_error}


@claim(
    "launch-bound.caching-allocator",
    question=Q,
    statement="每个小算子在 CPU 上还要为输出向缓存分配器要一块显存：{=1000} 次一元素加法是 {allocations} 次分配请求，"
              "而 `cudaMalloc` 一共 {device_allocs} 次、新增显存段 {segments} 个：块在分配器自己的池里循环使用，不进驱动，"
              "但每次请求仍是一段 CPU 上的代码，和 launch 一样算在每个算子的固定开销里。",
    needs=["cuda"],
    # Exact: after a warm-up the freed output of step i is the block step i+1 gets back from the
    # small pool (torch/cuda/memory.py: "allocation" counts requests, "segment" and
    # "num_device_alloc" count cudaMalloc); each add allocates its output and nothing else on the GPU.
    expect={"allocations": {">=": 1000}, "device_allocs": 0, "segments": 0},
)
def _(ctx):
    """1000 次一元素 CUDA 加法（先预热 100 次）期间缓存分配器收到的分配请求数、cudaMalloc 次数和新增显存段数。"""
    a = torch.ones(1, device="cuda")
    for _ in range(100):
        a = a + 1.0
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()
    for _ in range(1000):
        a = a + 1.0
    torch.cuda.synchronize()
    after = torch.cuda.memory_stats()

    def delta(key):
        return after.get(key, 0) - before.get(key, 0)

    return {"allocations": delta("allocation.all.allocated"), "device_allocs": delta("num_device_alloc"),
            "segments": delta("segment.all.allocated")}
