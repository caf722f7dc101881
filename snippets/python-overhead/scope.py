"""Why the page gives two per-call costs for "one tiny add": `a + b` of two tensors (section 一)
and `x + 1.0` behind a Python function (the compile section's single op). Same run, same thread,
varying the operand (tensor or Python number), the element count and the Python call around it."""

from __future__ import annotations

import torch

from snippets._workloads.overhead import one_op, single_thread
from verify.claim import claim
from verify.timing import compare

Q = "python-overhead"
INNER = 200  # calls per sample


def aten_ops(fn) -> list[str]:
    """The ATen ops the profiler records for one call of ``fn``."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return [e.name for e in prof.events() if e.name.startswith("aten::")]


@claim(
    "eager.scalar-operand",
    question=Q,
    statement="CPU 上单线程、同一次运行里交错计时（每个变体取最快的一次采样），每次调用：两个一元素张量的 `a + b` 是 {best.ab:time}，两个 {=16} 元素张量的"
              " `x + y` 是 {best.xy:time}（是 `a + b` 的 {xy_over_ab:x}）；加的是 Python 数的 `x + 1.0` 却要 {best.x1:time}，是"
              " `x + y` 的 {x1_over_xy:x}。profiler 里 `x + y` 只有 {xy_ops}，`x + 1.0` 是 {x1_ops}：1.0 先被包成一个 0 维的"
              " double 张量，TensorIterator 在 CPU 上再分配一个 float32 的临时张量把它转过去。再包一层 Python 函数，"
              "即第五节那条里的 eager 单算子 `one_op(x)`，是 {best.one_op:time}。",
    kind="perf",
    # Exact on CPU with this torch: a Python float operand is wrapped as a 0-dim double tensor and
    # TensorIterator casts CPU inputs to the common dtype (aten::to and its children). Everywhere:
    # four more dispatched ops and two more tensors cost more than the add itself, so x + 1.0 is
    # well above x + y (2.5x here); 16 elements against 1 add a few ns to a microsecond call
    # (0.98-1.00x under every stress variant, so < 1.35 keeps 26% room).
    expect={"xy_ops": ["aten::add"],
            "x1_ops": ["aten::add", "aten::to", "aten::_to_copy", "aten::empty_strided", "aten::copy_"],
            "x1_over_xy": {">=": 1.3}, "xy_over_ab": {"<": 1.35}},
)
def _(ctx):
    """范围：CPU、float32、1 与 16 个元素"""
    a, b = torch.randn(1), torch.randn(1)
    x, y = torch.randn(16), torch.randn(16)
    variants = {"ab": lambda: a + b, "xy": lambda: x + y, "x1": lambda: x + 1.0, "one_op": lambda: one_op(x)}
    with single_thread():
        t = compare(variants, rounds=31, warmup=2, inner=INNER)
    # The fastest sample of each variant: on a shared machine other processes only ever add time,
    # and a burst that lands on one variant's samples moves its median (seen under stress).
    best = {name: s["min_s"] for name, s in t.items()}
    return {
        "t": t,
        "best": best,
        "ns": {name: round(v * 1e9, 1) for name, v in best.items()},
        "xy_ops": aten_ops(lambda: x + y),
        "x1_ops": aten_ops(lambda: x + 1.0),
        "xy_over_ab": best["xy"] / best["ab"],
        "x1_over_xy": best["x1"] / best["xy"],
        "one_op_over_x1": best["one_op"] / best["x1"],
        "spread": {name: round(s["spread"], 3) for name, s in t.items()},
    }
