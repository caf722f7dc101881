"""Fusion on a GPU: Triton kernels, launches, registers, bandwidth, attention memory.

Every claim here needs CUDA; on a CPU build they are shown as not run.
"""

from __future__ import annotations

import gc
import re

import torch
import torch._inductor.config as inductor_config
from torch.profiler import ProfilerActivity, profile

from snippets._workloads.fusion import (
    bias_relu_dropout,
    cheap_chain,
    cheap_chain_into,
    cheap_chain_out,
    compiled,
    extern_calls,
    kernel_names,
    naive_attention,
    sdpa_attention,
)
from verify.claim import claim
from verify.timing import compare, ratio


def _gpu_kernels(fn) -> list[str]:
    """Names of the GPU kernels one call of ``fn`` launches (copies and memsets left out)."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events()
            if e.device_type == torch.autograd.DeviceType.CUDA
            and not e.name.lower().startswith(("memcpy", "memset"))]


@claim(
    "gpu-fusion.launches",
    question="graph-fusion",
    statement="CUDA 上同样数 launch：eager 的 bias + ReLU + dropout 发了 {eager_kernels} 个 kernel，编译后是 {compiled_kernels} 个，其中 Triton 融合 kernel 只有 {compiled_triton_kernels} 个，其余是生成随机种子之类的小 kernel。",
    expect={"eager_kernels": {">=": 3}, "compiled_triton_kernels": 1,
            "compiled_fewer_launches": True},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 4096×4096 的 bias + ReLU + dropout：eager 与编译后各发几个 kernel（profiler 计数），其中几个是 Triton 融合 kernel。"""
    x, b = torch.randn(4096, 4096, device="cuda"), torch.randn(4096, device="cuda")
    fn, codes = compiled(bias_relu_dropout, x, b)
    fn(x, b)
    eager = _gpu_kernels(lambda: bias_relu_dropout(x, b))
    comp = _gpu_kernels(lambda: fn(x, b))
    return {
        "eager_kernels": len(eager),
        "eager_kernel_names": eager,
        "compiled_kernels": len(comp),
        "compiled_kernel_names": comp,
        "compiled_triton_kernels": len([n for n in kernel_names(codes[0]) if n.startswith("triton")]),
        "generated_kernels": kernel_names(codes[0]),
        "compiled_fewer_launches": len(comp) < len(eager),
    }


def _triton_stats() -> dict[str, dict]:
    """Register and spill counts of every Triton kernel Inductor has loaded in this process."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner  # noqa: PLC0415

    stats = {}
    for obj in gc.get_objects():
        if issubclass(type(obj), CachingAutotuner):  # type(): no __class__ lookups on lazy proxies
            name = (getattr(obj, "inductor_meta", None) or {}).get("kernel_name") \
                or getattr(obj.fn, "__name__", None) or str(id(obj))
            for launcher in getattr(obj, "launchers", None) or []:
                stats[name] = {"n_regs": getattr(launcher, "n_regs", None),
                               "n_spills": getattr(launcher, "n_spills", None)}
    return stats


def _softmax_rows(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x * 0.5, dim=-1) + 1.0


@claim(
    "gpu-fusion.registers",
    question="graph-fusion",
    statement="寄存器压力可以直接从编译后的 Triton kernel 上读出来，它带有每线程寄存器数 `n_regs` 和溢出数 `n_spills`：简单的逐元素融合 kernel 用 {simple_n_regs} 个寄存器、溢出 {simple_n_spills} 次，融合了 reduce 的长行 softmax kernel 用 {reduction_n_regs} 个，不比前者少。",
    expect={"simple_n_spills": 0, "max_n_regs": {"<=": 255},
            "reduction_regs_over_simple": {">=": 1.0}},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 2²⁴ 个元素的逐元素融合 kernel 与 256×16384 的行 softmax kernel：每线程寄存器数 n_regs 与溢出数 n_spills。"""
    x = torch.randn(1 << 24, device="cuda")
    rows = torch.randn(256, 16384, device="cuda")
    before = set(_triton_stats())
    fn, _ = compiled(cheap_chain, x)
    fn(x)
    simple = {k: v for k, v in _triton_stats().items() if k not in before}
    before = set(_triton_stats())
    fs, _ = compiled(_softmax_rows, rows)
    fs(rows)
    heavy = {k: v for k, v in _triton_stats().items() if k not in before}
    torch.cuda.synchronize()
    simple_regs = max(v["n_regs"] or 0 for v in simple.values())
    heavy_regs = max(v["n_regs"] or 0 for v in heavy.values())
    return {
        "simple_kernels": simple,
        "reduction_kernels": heavy,
        "simple_n_spills": max(v["n_spills"] or 0 for v in simple.values()),
        "simple_n_regs": simple_regs,
        "reduction_n_regs": heavy_regs,
        "max_n_regs": max(simple_regs, heavy_regs),
        "reduction_regs_over_simple": round(heavy_regs / simple_regs, 3) if simple_regs else None,
    }


@claim(
    "gpu-fusion.bandwidth",
    question="graph-fusion",
    statement="GPU 上实测（{=1 << 26} 个 fp32 元素、写进预分配输出）：融合 kernel 的有效带宽是 {GBps_fused} GB/s，是同样大小纯拷贝（{GBps_copy} GB/s）的 {fused_fraction_of_copy:pct}，比三步 eager 快 {speedup:x}。",
    kind="perf",
    expect={"fused_fraction_of_copy": {">=": 0.7}, "speedup": {">=": 2.0}},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 2²⁶ 个 fp32 元素、输出预分配：三步链的融合 kernel、三步 eager 与纯拷贝的耗时和有效带宽。"""
    n = 1 << 26
    x, tmp, out, out2, dst = (torch.randn(n, device="cuda") for _ in range(5))
    fused, _ = compiled(cheap_chain_into, x, out2)
    t = compare({
        "eager_preallocated": lambda: cheap_chain_out(x, tmp, out),
        "compiled_preallocated": lambda: fused(x, out2),
        "copy": lambda: dst.copy_(x),
    }, rounds=15, warmup=3, inner=10, device="cuda")
    moved = 2 * n * 4  # one read and one write per element, for both the fused kernel and the copy
    gbps = {k: round(moved / float(v["median_s"]) / 1e9, 1) for k, v in t.items()}
    return {
        "GBps_fused": gbps["compiled_preallocated"],
        "GBps_copy": gbps["copy"],
        "GBps_eager_effective": round(3 * moved / float(t["eager_preallocated"]["median_s"]) / 1e9, 1),
        "fused_fraction_of_copy": round(ratio(t, "compiled_preallocated", "copy") ** -1, 3),
        "speedup": round(ratio(t, "eager_preallocated", "compiled_preallocated"), 3),
        "us": {k: round(float(v["median_s"]) * 1e6, 1) for k, v in t.items()},
    }


@claim(
    "gpu-fusion.sdpa-memory",
    question="graph-fusion",
    statement="GPU 上序列更长时差距到 GiB 级：N=8192、16 个头（fp16）时，一份 N×N 分数矩阵就是 {scores_GiB:.0f} GiB，手写 attention 的峰值显存是 {naive_peak_GiB:.2f} GiB，SDPA（FlashAttention 类 kernel）只有 {sdpa_peak_MiB:.0f} MiB，小了 {peak_ratio:x}。",
    expect={"peak_ratio": {">=": 20}, "same_result": True},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 fp16、N=8192、16 个头、head dim 64：手写 attention 与 SDPA 的峰值显存。"""
    q, k, v = (torch.randn(1, 16, 8192, 64, device="cuda", dtype=torch.float16) for _ in range(3))

    def peak(fn) -> int:
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = fn(q, k, v)
        torch.cuda.synchronize()
        used = torch.cuda.max_memory_allocated() - base
        del out
        return used

    naive, sdpa = peak(naive_attention), peak(sdpa_attention)
    same = torch.allclose(naive_attention(q, k, v), sdpa_attention(q, k, v), atol=2e-2, rtol=2e-2)
    return {
        "scores_GiB": 16 * 8192 * 8192 * 2 / 2**30,
        "naive_peak_GiB": round(naive / 2**30, 3),
        "sdpa_peak_MiB": round(sdpa / 2**20, 1),
        "peak_ratio": round(naive / sdpa, 1),
        "same_result": same,
    }


def _gemm_for_template(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w + b)


@claim(
    "gpu-fusion.gemm-epilogue-template",
    question="graph-fusion",
    statement="CUDA 上打开 GEMM 的 max-autotune 并只用 Triton 模板时，bias + ReLU 作为 epilogue 融进 GEMM 模板 kernel，整个 `relu(x @ w + b)` 只剩 {kernels} 个 kernel，不再调用库里的 GEMM。",
    expect={"kernels": 1, "template_kernel": True, "extern_calls": [], "matches_eager": True},
    needs=["cuda"],
    timeout=400,
)
def _(ctx):
    """CUDA 上 1024×1024 的 fp16 relu(x @ w + b)，max-autotune 只用 Triton 模板：生成几个 kernel、还有没有库 GEMM 调用。"""
    x, w = (torch.randn(1024, 1024, device="cuda", dtype=torch.float16) for _ in range(2))
    b = torch.randn(1024, device="cuda", dtype=torch.float16)
    # Fuse without first benchmarking whether fusing pays: this claim is about what can fuse.
    with inductor_config.patch({"max_autotune_gemm": True, "max_autotune_gemm_backends": "TRITON",
                                "benchmark_epilogue_fusion": False}):
        fn, codes = compiled(_gemm_for_template, x, w, b)
    code = codes[0]
    names = kernel_names(code)
    return {
        "kernels": len(names),
        "kernel_names": names,
        "template_kernel": any("tem" in n for n in names),
        "extern_calls": extern_calls(code),
        "matches_eager": torch.allclose(fn(x, w, b), _gemm_for_template(x, w, b), atol=1e-1, rtol=1e-2),
    }


def _sum_all(x: torch.Tensor) -> torch.Tensor:
    return x.sum()


def _softmax_512(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


@claim(
    "gpu-fusion.split-reduction",
    question="graph-fusion",
    statement="GPU 上 Inductor 生成的归约有两种形状。把 16M 个元素整个求和只有一个输出，交给一个线程块就只能用上一个 SM：Inductor 拆成 {sum_kernels} 个 kernel {sum_kernel_names}，第一个把各段的部分和写进一个中间缓冲区，第二个再把部分和加起来（split reduction）；每行 {=512} 个元素的 softmax 行不长（torch 2.13 的 Inductor 默认对不超过 {=1024} 个元素的最内维归约这样做），生成的是持久化归约（persistent reduction）：一行读进来一次，最大值、求和、归一化都在寄存器里完成，{softmax_kernels} 个 kernel。",
    expect={"sum_kernels": 2, "sum_has_partials_buffer": True, "softmax_kernels": 1, "softmax_persistent": True},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 2²⁴ 个元素的整体求和与 4096×512 的逐行 softmax：各生成几个 Triton kernel，是 split reduction 还是 persistent reduction。"""
    x = torch.randn(1 << 24, device="cuda")
    rows = torch.randn(4096, 512, device="cuda")
    _, sum_codes = compiled(_sum_all, x)
    _, sm_codes = compiled(_softmax_512, rows)
    sum_names, sm_names = kernel_names(sum_codes[0]), kernel_names(sm_codes[0])
    shapes = re.findall(r"^\s*buf\d+ = empty_strided_cuda\(\(([^)]*)\)", sum_codes[0], re.M)
    return {
        "sum_kernels": len(sum_names),
        "sum_kernel_names": sum_names,
        "sum_buffer_shapes": shapes,
        "sum_has_partials_buffer": any(s.strip() not in ("", ",") for s in shapes),
        "row_len": rows.shape[-1],
        "softmax_kernels": len(sm_names),
        "softmax_kernel_names": sm_names,
        "softmax_persistent": "@triton_heuristics.persistent_reduction" in sm_codes[0]
        or any(n.startswith("triton_per_") for n in sm_names),
    }


def _foreach_add(xs, ys):
    return torch._foreach_add(xs, ys, alpha=0.5)


@claim(
    "gpu-fusion.foreach",
    question="graph-fusion",
    statement="GPU 上横向融合最常见的是 foreach：编译后的 `torch._foreach_add` 把 {=4} 个大小不同的张量放进 {compiled_kernels} 个 Triton kernel {compiled_kernel_names}，一次 launch 处理整组张量；eager 的 `_foreach_add` 在 CUDA 上也是按组发 kernel（multi-tensor apply），发了 {eager_kernels} 个。",
    expect={"tensors": 4, "compiled_kernels": 1, "matches_eager": True},
    needs=["cuda"],
)
def _(ctx):
    """CUDA 上 4 个大小不同的张量做 torch._foreach_add：编译后几个 Triton kernel，eager 发几个 kernel。"""
    xs = [torch.randn(1000 * (i + 1), device="cuda") for i in range(4)]
    ys = [torch.randn(1000 * (i + 1), device="cuda") for i in range(4)]
    fn, codes = compiled(_foreach_add, xs, ys)
    names = kernel_names(codes[0])
    eager = _gpu_kernels(lambda: _foreach_add(xs, ys))
    return {
        "tensors": len(xs),
        "compiled_kernels": len(names),
        "compiled_kernel_names": names,
        "eager_kernels": len(eager),
        "eager_kernel_names": eager,
        "matches_eager": all(torch.allclose(a, b) for a, b in zip(fn(xs, ys), _foreach_add(xs, ys))),
    }
