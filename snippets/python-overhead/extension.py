"""A C++ op callable from Python, and where it beats a Python loop: a sequential scan."""

from __future__ import annotations

import torch

from snippets._workloads.overhead import build_extension, decay_scan_python, decay_scan_tensor_loop
from verify.claim import claim
from verify.timing import compare, ratio

Q = "python-overhead"
SOURCE = "scan_op.cpp"


def _ops(ctx):
    ops, seconds = build_extension(ctx.snippet_dir() / SOURCE)
    ctx.observe(build_or_load_s=seconds)
    return ops


@claim(
    "cpp-ext.callable",
    question=Q,
    statement="一个几十行的 C++ 文件，用 `torch.utils.cpp_extension` 编译成共享库并加载后，就能在 Python 里像普通算子一样调用"
              "（这里注册成 dispatcher 算子 `torch.ops.po_ext.decay_scan`，而不是用 pybind11 导出函数），结果与 Python 实现一致。",
    needs=["g++"],
    timeout=240,
    expect={"matches_python": True, "dispatch_has_cpu": True},
)
def _(ctx):
    ops = _ops(ctx)
    x = torch.randn(1000, dtype=torch.float64)
    y = ops.decay_scan(x, 0.9)
    ref = torch.tensor(decay_scan_python(x.tolist(), 0.9), dtype=torch.float64)
    return {
        "matches_python": bool(torch.allclose(y, ref)),
        "dispatch_has_cpu": torch._C._dispatch_has_kernel_for_dispatch_key("po_ext::decay_scan", "CPU"),
        "schema": str(ops.decay_scan.default._schema),
    }


@claim(
    "cpp-ext.beats-python-loop",
    question=Q,
    statement="最值得写成 C++ 的，是每一步依赖上一步、无法向量化的循环（这里是一个衰减扫描）：{=100,000} 个元素时，"
              "C++ 版每步 {cpp_per_step:time}，比纯 Python 列表循环（每步 {python_list_per_step:time}）快 {over_python_list:x}，"
              "比在张量上逐元素索引的 Python 循环（每步 {tensor_loop_per_step:time}）快 {over_tensor_loop:x}。",
    kind="perf",
    needs=["g++"],
    timeout=240,
    # The ratios depend on the CPU and on load (a preempted Python loop inflates the first).
    # What the mechanism guarantees everywhere: a CPython step runs about a dozen bytecodes and
    # boxes a float where the C++ step is two floating-point ops (>= 2), and a tensor-indexing
    # step pays several dispatches of about a microsecond each (>= 300).
    expect={"over_python_list": {">=": 2}, "over_tensor_loop": {">=": 300}},
)
def _(ctx):
    ops = _ops(ctx)
    n = 100_000
    x = torch.randn(n, dtype=torch.float64)
    values = x.tolist()
    small = x[:2000].clone()
    t = compare({"cpp": lambda: ops.decay_scan(x, 0.9), "python_list": lambda: decay_scan_python(values, 0.9)},
                rounds=7, warmup=1)
    # A Python loop over tensor elements is so slow that 2000 elements stand in for 100 000.
    t_tensor = compare({"tensor_loop": lambda: decay_scan_tensor_loop(small, 0.9)}, rounds=3, warmup=1)
    tensor_loop_s = t_tensor["tensor_loop"]["median_s"] * n / small.numel()
    cpp_s = t["cpp"]["median_s"]
    return {
        "n": n,
        "cpp": t["cpp"],
        "python_list": t["python_list"],
        "cpp_per_step": cpp_s / n,
        "python_list_per_step": t["python_list"]["median_s"] / n,
        "tensor_loop_per_step": t_tensor["tensor_loop"]["median_s"] / small.numel(),
        "cpp_us": cpp_s * 1e6,
        "python_list_ms": t["python_list"]["median_s"] * 1e3,
        "tensor_loop_s_extrapolated": tensor_loop_s,
        "tensor_loop_us_per_element": t_tensor["tensor_loop"]["median_s"] / small.numel() * 1e6,
        "over_python_list": ratio(t, "python_list", "cpp"),
        "over_tensor_loop": tensor_loop_s / cpp_s,
    }
