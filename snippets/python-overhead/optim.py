"""foreach and fused optimizers: the other cure for launch count. One `Adam.step()` over many
small parameters issues a few ops per parameter from Python; foreach issues one op per step of
the update for all parameters at once, fused one op for the whole update."""

from __future__ import annotations

from collections import Counter

import torch

from snippets._workloads.overhead import single_thread
from verify.claim import claim
from verify.timing import compare, ratio

Q = "python-overhead"
MODES = {"for_loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def adam(n_params: int, numel: int = 64, **mode) -> torch.optim.Adam:
    """Adam over ``n_params`` small parameters with gradients set, after two warm-up steps."""
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(numel)) for _ in range(n_params)]
    for p in params:
        p.grad = torch.randn(numel)
    opt = torch.optim.Adam(params, lr=1e-3, **mode)
    opt.step()
    opt.step()
    return opt


def step_ops(opt: torch.optim.Optimizer) -> dict:
    """The ATen ops of one step: those called from Python (their parent is not an ATen op) and
    those an ATen op calls in turn."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        opt.step()
    aten = [e for e in prof.events() if e.name.startswith("aten::")]
    top = [e for e in aten if e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::")]
    mul_children = [e for e in aten if e.cpu_parent is not None and e.cpu_parent.name == "aten::_foreach_mul_"]
    return {"top": Counter(e.name for e in top), "all": len(aten),
            "foreach_mul_children": Counter(e.name for e in mul_children)}


@claim(
    "optim.foreach-op-count",
    question=Q,
    statement="CPU 上 {=20} 个小参数的一次 `Adam.step()`：默认的逐参数实现从 Python 发出 {top.for_loop} 个 ATen 算子，"
              "每个参数 {per_param.for_loop:.0f} 个；`foreach=True` 把同一步的所有参数交给一个 `_foreach_*` 算子，这样的算子共"
              " {foreach_ops.foreach} 个，参数数翻倍也不变（{foreach_ops_doubled} 个），但为了算偏差校正，每个参数还有"
              " {items_per_param:.0f} 次 `item()`；`fused=True` 只发出 {top.fused} 个算子。CPU 上没有真正的多张量 kernel："
              "一次 `_foreach_mul_` 在 C++ 里仍对每个张量各调一次 `aten::mul_`（{foreach_mul_children} 次），foreach 省的是"
              " Python 和分发的次数，不是 kernel 的个数。",
    # Exact for Adam: the for-loop path runs the same ops for each parameter (a count that grows
    # with n), the foreach path one op per update step whatever n is, plus `_get_value(step)` for
    # both bias corrections of each parameter (capturable=False keeps `step` on the CPU), and the
    # fused path `_foreach_add_` on the steps and one `_fused_adam_`. On the CPU foreach falls back
    # to a per-tensor loop in C++ (no multi-tensor-apply kernel there). The default on CPU
    # parameters is the for-loop: foreach is the default only on devices with foreach kernels.
    expect={"per_param_same_for_n_and_2n": True, "foreach_ops_doubled_same": True, "items_per_param": 2,
            "fused_top_ops": {"aten::_foreach_add_": 1, "aten::_fused_adam_": 1},
            "foreach_mul_children": 20, "default_on_cpu": [False, False]},
)
def _(ctx):
    from torch.optim.optimizer import _default_to_fused_or_foreach

    n = 20
    counts = {name: step_ops(adam(n, **mode)) for name, mode in MODES.items()}
    doubled = {name: step_ops(adam(2 * n, **MODES[name])) for name in ("for_loop", "foreach")}
    top = {name: sum(c["top"].values()) for name, c in counts.items()}

    def foreach_ops(c):
        return sum(v for k, v in c["top"].items() if k.startswith("aten::_foreach_"))

    per_param = {"for_loop": top["for_loop"] / n, "for_loop_2n": sum(doubled["for_loop"]["top"].values()) / (2 * n)}
    params = [torch.nn.Parameter(torch.randn(4))]
    return {
        "n": n,
        "top": top,
        "all_aten_ops": {name: c["all"] for name, c in counts.items()},
        "top_by_name": {name: dict(c["top"]) for name, c in counts.items()},
        "per_param": per_param,
        "per_param_same_for_n_and_2n": per_param["for_loop"] == per_param["for_loop_2n"],
        "foreach_ops": {"foreach": foreach_ops(counts["foreach"])},
        "foreach_ops_doubled": foreach_ops(doubled["foreach"]),
        "foreach_ops_doubled_same": foreach_ops(doubled["foreach"]) == foreach_ops(counts["foreach"]),
        "items_per_param": counts["foreach"]["top"]["aten::item"] / n,
        "fused_top_ops": dict(counts["fused"]["top"]),
        "foreach_mul_children": counts["foreach"]["foreach_mul_children"]["aten::mul_"],
        "default_on_cpu": list(_default_to_fused_or_foreach(params, differentiable=False, use_fused=False)),
    }


@claim(
    "optim.foreach-time",
    question=Q,
    statement="单线程下同样 {=20} 个、每个 {=64} 个元素的参数，一次 `step()`：逐参数实现 {t.for_loop:time}，foreach"
              " {t.foreach:time}（速度是逐参数的 {foreach_speedup:x}），fused {t.fused:time}（快 {fused_speedup:x}）。",
    kind="perf",
    # For parameters this small the step is all per-op overhead: foreach removes the Python side of
    # most calls (a per-tensor C++ loop remains), fused also runs one kernel per tensor for the
    # whole update. Fused is faster everywhere; foreach gained only 1.08x with one thread under
    # verify stress, so its ratio is this machine's, not checked.
    expect={"fused_speedup": {">=": 1.5}, "fused_over_foreach": {">": 1.0}},
)
def _(ctx):
    n, numel = 20, 64
    opts = {name: adam(n, numel, **mode) for name, mode in MODES.items()}
    with single_thread():
        t = compare({name: opt.step for name, opt in opts.items()}, rounds=15, warmup=2, inner=5)
    return {
        "n": n,
        "numel": numel,
        "t": t,
        "us": {name: s["median_s"] * 1e6 for name, s in t.items()},
        "foreach_speedup": ratio(t, "for_loop", "foreach"),
        "fused_speedup": ratio(t, "for_loop", "fused"),
        "fused_over_foreach": ratio(t, "foreach", "fused"),
        "spread": {name: s["spread"] for name, s in t.items()},
    }
