"""Where the microsecond of a tiny `a + b` goes: variants that each leave out one part, from
Python, and the same add called in a C++ loop with its layers peeled off one at a time."""

from __future__ import annotations

import torch

from snippets._workloads.overhead import build_extension, single_thread
from verify.claim import claim
from verify.timing import compare

Q = "python-overhead"
SOURCE = "add_loop.cpp"
K = 500  # calls per sample: each variant loops inside itself, so a sample is K calls of it


def per_call(stats: dict, k: int = K) -> dict:
    """A sample's timing statistics as seconds per call (counts and spread unchanged)."""
    return {key: (v / k if key.endswith("_s") else v) for key, v in stats.items()}


def aten_ops(fn) -> list[str]:
    """The ATen ops the profiler records for one call of ``fn``."""
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return [e.name for e in prof.events() if e.name.startswith("aten::")]


def python_variants(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> dict:
    """One function per variant, each running it K times (the loop costs a few ns per turn)."""
    turns = range(K)
    overload = torch.ops.aten.add.Tensor

    def loop():
        for _ in turns:
            pass

    def add():
        for _ in turns:
            a + b  # noqa: B018

    def view():
        for _ in turns:
            a.view(1)

    def add_out():
        for _ in turns:
            torch.add(a, b, out=c)

    def add_inference():
        with torch.inference_mode():
            for _ in turns:
                a + b  # noqa: B018

    def aten_overload():
        for _ in turns:
            overload(a, b)

    def dim():
        for _ in turns:
            a.dim()

    return {"loop": loop, "add": add, "view": view, "add_out": add_out, "add_inference": add_inference,
            "overload": aten_overload, "dim": dim}


@claim(
    "eager.add-variants",
    question=Q,
    statement="单线程下交错计时，这台机器上一元素张量每次调用的耗时：`a + b` 是 {t.add:time}；不计算、也不分配存储的 `a.view(1)`"
              " 仍要 {t.view:time}，是 `a + b` 的 {view_over_add:pct}；省掉输出分配的 `torch.add(a, b, out=c)` 是"
              " {t.add_out:time}；在 `torch.inference_mode()` 里（跳过 Autograd 和 ADInplaceOrView 两层）`a + b` 是"
              " {t.add_inference:time}；经 OpOverload 调用的 `torch.ops.aten.add.Tensor(a, b)` 反而要 {t.overload:time}，"
              "是 `a + b` 的 {overload_over_add:x}；不进 dispatcher 的 `a.dim()` 只要 {t.dim:time}。",
    kind="perf",
    # The profiler facts are exact everywhere. The timings depend on the CPU. Checked are the
    # relations with room on every machine: the OpOverload path adds a Python frame and boxes the
    # arguments on top of the same kernel; `dim()` reads a field without parsing arguments,
    # dispatching or making a tensor. A view (no kernel, no storage) and inference mode (one
    # dispatcher layer and the version counter less) save work too, but little next to the Python
    # side both still pay: 0.80x and 1.16-1.26x `a + b` on two Xeons, too close to 1 to check on
    # every machine, so the sentence gives this machine's values and checks nothing about them.
    expect={"dim_aten_ops": [], "view_aten_ops": ["aten::view"], "add_aten_ops": ["aten::add"],
            "overload_aten_ops": ["aten::add"], "overload_over_add": {">": 1.0}, "dim_over_add": {"<=": 0.25}},
)
def _(ctx):
    a, b, c = torch.randn(1), torch.randn(1), torch.empty(1)
    variants = python_variants(a, b, c)
    with single_thread():
        raw = compare(variants, rounds=15, warmup=2)
    t = {name: per_call(stats) for name, stats in raw.items()}
    med = {name: s["median_s"] for name, s in t.items()}
    return {
        "t": t,
        "ns": {name: round(v * 1e9, 1) for name, v in med.items()},
        "calls_per_sample": K,
        "dim_aten_ops": aten_ops(lambda: a.dim()),
        "view_aten_ops": aten_ops(lambda: a.view(1)),
        "add_aten_ops": aten_ops(lambda: a + b),
        "overload_aten_ops": aten_ops(lambda: torch.ops.aten.add.Tensor(a, b)),
        "view_over_add": med["view"] / med["add"],
        "add_over_inference": med["add"] / med["add_inference"],
        "overload_over_add": med["overload"] / med["add"],
        "dim_over_add": med["dim"] / med["add"],
        "view_minus_dim": med["view"] - med["dim"],
        "add_minus_view": med["add"] - med["view"],
        "saved_by_out": med["add"] - med["add_out"],
        "saved_by_inference": med["add"] - med["add_inference"],
        "extra_for_overload": med["overload"] - med["add"],
    }


CPP_VARIANTS = {"add": 0, "add_inference": 1, "cpu_add": 2, "cpu_add_out": 3, "add_out": 4, "view": 5}


@claim(
    "eager.add-layers",
    question=Q,
    statement="把同一个加法放进 C++ 循环里调用（不经过 Python），一层层剥掉，这台机器上：`at::add` 每次 {cpp.add:time}，在"
              " `c10::InferenceMode` 里 {cpp.add_inference:time}，绕过 dispatcher、直接调 CPU kernel 的入口"
              " `at::cpu::add` 是 {cpp.cpu_add:time}，再不分配输出（`at::cpu::add_out`）只剩 {cpp.cpu_add_out:time}。"
              "和同一次运行里从 Python 调的 `a + b` 相比，Python 一侧（解释器、参数解析、Python 张量对象的创建和释放）占"
              " {python_share:pct}，最里面的 `at::cpu::add_out`（TensorIterator 和计算本身）占 {kernel_share:pct}，"
              "dispatcher 的两跳和分配输出都在剩下的那一部分里。",
    kind="perf",
    needs=["g++"],
    timeout=240,
    # Exact: only the InferenceMode variant runs with the Autograd key excluded (the loop op is a
    # CompositeImplicitAutograd kernel, so the ops inside see the dispatch state Python sees).
    # Everywhere: the output allocation is work the next variant does not do (> 1); the
    # dispatcher's two hops are a small part of the call and the Python side a large one (the
    # binding parses arguments and creates and frees a Python object per call, where the
    # dispatcher reads a few thread-local words and follows two function pointers). The Autograd
    # layer is work too, but it measured only 1.14x and 1.30x on two Xeons: too close to 1 to
    # check everywhere, so its ratio is this machine's value in the sentence, not an expectation.
    # The Python share measured 0.48-0.57 on four machines and every stress variant: >= 0.35 keeps
    # over 35% room; an upper bound near one half would not (0.65 leaves 12%), so the page's 约占一半 is
    # scoped to the machines recorded and bound to this run's value.
    expect={"autograd_excluded": {"add": False, "add_inference": True, "cpu_add": False, "cpu_add_out": False,
                                  "add_out": False, "view": False},
            "alloc_ratio": {">": 1.0}, "dispatch_share": {"<=": 0.3}, "python_share": {">=": 0.35}},
)
def _(ctx):
    build_extension(ctx.snippet_dir() / SOURCE)
    loop = torch.ops.po_bench.add_loop
    a, b, c = torch.randn(1), torch.randn(1), torch.empty(1)
    py = python_variants(a, b, c)
    variants = {"py_add": py["add"]}
    variants.update({f"cpp_{name}": (lambda v=v: loop(a, b, c, v, K)) for name, v in CPP_VARIANTS.items()})
    with single_thread():
        raw = compare(variants, rounds=15, warmup=2)
    t = {name: per_call(stats) for name, stats in raw.items()}
    cpp = {name: t[f"cpp_{name}"] for name in CPP_VARIANTS}
    med = {name: s["median_s"] for name, s in cpp.items()}
    py_add = t["py_add"]["median_s"]
    return {
        "cpp": cpp,
        "py_add": t["py_add"],
        "ns": {**{name: round(v * 1e9, 1) for name, v in med.items()}, "py_add": round(py_add * 1e9, 1)},
        "calls_per_sample": K,
        "autograd_excluded": {name: bool(loop(a, b, c, v, 1)) for name, v in CPP_VARIANTS.items()},
        "python_share": (py_add - med["add"]) / py_add,
        "dispatch_share": (med["add"] - med["cpu_add"]) / py_add,
        "alloc_share": (med["cpu_add"] - med["cpu_add_out"]) / py_add,
        "kernel_share": med["cpu_add_out"] / py_add,
        "autograd_layer_ratio": med["add"] / med["add_inference"],
        "alloc_ratio": med["cpu_add"] / med["cpu_add_out"],
        "autograd_layer": med["add"] - med["add_inference"],
        "hop_to_kernel": med["add_inference"] - med["cpu_add"],
        "alloc": med["cpu_add"] - med["cpu_add_out"],
        "python_side": py_add - med["add"],
    }
