"""broadcast_to and the implicit broadcasting of binary ops: stride-0 views, and what `a + b` allocates."""

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


def _allocated_bytes(fn):
    """Bytes the CPU allocator handed out while ``fn`` ran (the profiler's memory events), and its result."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
    # Each op's own allocations (self_*) are positive, frees are negative; count only what was handed out.
    return sum(max(e.self_cpu_memory_usage, 0) for e in prof.events()), out


@claim("broadcast.to-is-expand", question=Q,
       statement="`torch.broadcast_to(x, (4, 3))` 就是 `x.expand(4, 3)`：stride 同为 {stride}，数据指针和 `x` 相同，"
                 "`_base` 就是 `x`。`torch.broadcast_tensors(a, c)` 把形状 {a_shape} 和 {c_shape} 的两个张量对齐成 "
                 "{broadcast_shape}，返回的也是 view：stride 分别是 {a_stride} 和 {c_stride}，和 `a`、`c` {views_share:?共用内存|不共用内存}。",
       expect={"stride": [0, 1], "same_as_expand_stride": True, "same_data_ptr": True, "base_is_x": True,
               "a_shape": [4, 1], "c_shape": [1, 3], "broadcast_shape": [4, 3], "a_stride": [1, 0],
               "c_stride": [0, 1], "views_share": True})
def _(ctx):
    x = torch.tensor([[1, 2, 3]], device=ctx.device)
    b = torch.broadcast_to(x, (4, 3))
    a = torch.arange(4.0, device=ctx.device).reshape(4, 1)
    c = torch.arange(3.0, device=ctx.device).reshape(1, 3)
    ba, bc = torch.broadcast_tensors(a, c)
    return {"stride": b.stride(), "same_as_expand_stride": b.stride() == x.expand(4, 3).stride(),
            "same_data_ptr": b.data_ptr() == x.data_ptr(), "base_is_x": b._base is x,
            "a_shape": list(a.shape), "c_shape": list(c.shape), "broadcast_shape": list(ba.shape),
            "a_stride": ba.stride(), "c_stride": bc.stride(),
            "views_share": ba.data_ptr() == a.data_ptr() and bc.data_ptr() == c.data_ptr()}


@claim("broadcast.add-allocates-output-only", question=Q,
       statement="隐式广播也不物化输入：在 CPU 上，形状 {a_shape} 的 `a` 加形状 {c_shape} 的 `c`，结果是形状 {out_shape}、"
                 "stride {out_stride} 的连续张量，profiler 记下 `a + c` 期间只分配了 {add_bytes:bytes}，正好是这个输出"
                 "（{out_bytes:bytes}）；先把 `a`、`c` 都 `repeat` 成 {out_shape} 再相加，分配的是 {repeat_bytes:bytes}。",
       expect={"a_shape": [1024, 1], "c_shape": [1, 1024], "out_shape": [1024, 1024], "out_stride": [1024, 1],
               "add_bytes": 4194304, "out_bytes": 4194304, "repeat_bytes": {">=": 3 * 4194304}, "same_values": True})
def _(ctx):
    # CPU on purpose: the profiler's memory events here are the CPU allocator's.
    a = torch.randn(1024, 1)
    c = torch.randn(1, 1024)
    add_bytes, out = _allocated_bytes(lambda: a + c)
    repeat_bytes, out_repeat = _allocated_bytes(lambda: a.repeat(1, 1024) + c.repeat(1024, 1))
    return {"a_shape": list(a.shape), "c_shape": list(c.shape), "out_shape": list(out.shape),
            "out_stride": out.stride(), "add_bytes": add_bytes, "out_bytes": out.numel() * out.element_size(),
            "repeat_bytes": repeat_bytes, "same_values": torch.equal(out, out_repeat)}


@claim("broadcast.inplace-cannot-grow", question=Q,
       statement="原地运算的 `self` 不会被广播：`a.add_(c)`（`a` 形状 (4, 1)，`c` 形状 (1, 3)）要把结果写回 `a`，"
                 "而广播后的形状是 (4, 3)，放不下，抛出 RuntimeError。反过来只广播输入就可以：`torch.zeros(4, 3).add_(c)` "
                 "得到形状 {other_way_shape}，每行都是 {other_way_values}。",
       raises=("RuntimeError", "doesn't match the broadcast shape"),
       expect={"other_way_shape": [4, 3], "other_way_values": [1.0, 1.0, 1.0], "other_way_rows": [[1.0, 1.0, 1.0]] * 4})
def _(ctx):
    a = torch.zeros(4, 1, device=ctx.device)
    c = torch.ones(1, 3, device=ctx.device)
    ok = torch.zeros(4, 3, device=ctx.device).add_(c)  # the other way round works: c broadcasts onto (4, 3)
    ctx.observe(other_way_shape=list(ok.shape), other_way_values=ok[0].tolist(), other_way_rows=ok.tolist())
    a.add_(c)
