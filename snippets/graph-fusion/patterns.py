"""Fusion patterns beyond a plain chain, read from the C++ code Inductor generates on the CPU."""

from __future__ import annotations

import torch

from snippets._workloads.fusion import (
    buffers,
    call_body,
    compiled,
    extern_calls,
    gemm_bias_relu,
    kernel_names,
    loop_nests,
    rms_norm,
    sum_scale,
)
from verify.claim import claim


@claim(
    "reduce.one-kernel",
    question="graph-fusion",
    statement="reduce 前后的逐元素操作和 reduce 融在同一个 kernel 里：sum + scale 是 {sum_scale_kernels} 个 kernel；RMSNorm（平方 → 求均值 → rsqrt → 乘回 x 和权重）也是 {rms_kernels} 个 kernel、{rms_loop_nests} 趟外层循环，平方的结果从不落内存，分配的缓冲区 {rms_buffer_shapes} 只有每行一个数的统计量和输出。",
    expect={"sum_scale_kernels": 1, "rms_kernels": 1, "rms_loop_nests": 1,
            "rms_buffer_shapes": [[256, 1], [256, 512]], "rms_matches_eager": True},
)
def _(ctx):
    x, w = torch.randn(256, 512), torch.randn(512)
    fs, cs = compiled(sum_scale, x)
    fr, cr = compiled(rms_norm, x, w)
    return {
        "sum_scale_kernels": len(kernel_names(cs[0])),
        "sum_scale_kernel_names": kernel_names(cs[0]),
        "rms_kernels": len(kernel_names(cr[0])),
        "rms_kernel_names": kernel_names(cr[0]),
        "rms_loop_nests": loop_nests(cr[0]),
        "rms_buffer_shapes": buffers(cr[0]),
        "rms_matches_eager": torch.allclose(fr(x, w), rms_norm(x, w), rtol=1e-4, atol=1e-5),
        "sum_scale_matches_eager": torch.allclose(fs(x), sum_scale(x), rtol=1e-4, atol=1e-4),
    }


@claim(
    "gemm.extern-epilogue",
    question="graph-fusion",
    statement="CPU 上默认配置下 GEMM 不是 Inductor 自己生成的：`relu(x @ w + b)` 编译成一次库调用 `addmm`，bias 直接并进了 `addmm`；relu 没有融进 GEMM（库调用不能带 epilogue），Inductor 在它后面单独生成 {kernels} 个小 kernel，原地写在 GEMM 的输出上，整个函数只分配 {buffers} 个缓冲区。",
    expect={"extern_calls": ["addmm"], "kernels": 1, "buffers": 1, "matches_eager": True},
)
def _(ctx):
    x, w, b = torch.randn(256, 512), torch.randn(512, 512), torch.randn(512)
    fn, codes = compiled(gemm_bias_relu, x, w, b)
    code = codes[0]
    return {
        "extern_calls": extern_calls(code),
        "kernels": len(kernel_names(code)),
        "kernel_names": kernel_names(code),
        "buffers": len(buffers(code)),
        "call": [line.strip() for line in call_body(code).splitlines()
                 if "extern_kernels" in line or "cpp_fused" in line or "buf" in line],
        "matches_eager": torch.allclose(fn(x, w, b), gemm_bias_relu(x, w, b), rtol=1e-4, atol=1e-4),
    }


def _shared_input(x: torch.Tensor):
    return x.sin(), x.cos()


def _independent(a: torch.Tensor, b: torch.Tensor):
    return a.sin(), b.cos()


@claim(
    "fusion.horizontal",
    question="graph-fusion",
    statement="Inductor 把读同一个输入的独立算子合进同一趟循环：`x.sin(), x.cos()` 编译后是 {shared_kernels} 个 kernel、{shared_loop_nests} 趟循环，写出 {shared_outputs} 个输出，x 只读一遍；读不同输入、互不相干的 `a.sin(), b.cos()` 不会并进一趟循环，CPU 上只是放进同一个 C++ 函数（{independent_kernels} 个 kernel），里面仍是 {independent_loop_nests} 趟循环，各跑各的。",
    expect={"shared_kernels": 1, "shared_loop_nests": 1, "shared_outputs": 2,
            "independent_kernels": 1, "independent_loop_nests": 2},
)
def _(ctx):
    x, a, b = torch.randn(4096), torch.randn(4096), torch.randn(4096)
    _, shared = compiled(_shared_input, x)
    _, indep = compiled(_independent, a, b)
    return {
        "shared_kernels": len(kernel_names(shared[0])),
        "shared_loop_nests": loop_nests(shared[0]),
        "shared_outputs": len(buffers(shared[0])),
        "independent_kernels": len(kernel_names(indep[0])),
        "independent_kernel_names": kernel_names(indep[0]),
        "independent_loop_nests": loop_nests(indep[0]),
    }


def _transposed_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.t() + y  # x is (512, 256) row-major: read against its layout


@claim(
    "fusion.layout",
    question="graph-fusion",
    statement="读一个转置的输入不需要先物化它：`x.t() + y` 编译后仍是 {kernels} 个 kernel、{buffers} 个输出缓冲区，转置读在 kernel 内部用小块转置（`transpose_mxn`）完成，不先物化一份连续的 `x.t()`；代价是多了分块转置的指令，访存也不再完全连续。",
    expect={"kernels": 1, "buffers": 1, "tiled_transpose": True, "matches_eager": True},
)
def _(ctx):
    x, y = torch.randn(512, 256), torch.randn(256, 512)
    fn, codes = compiled(_transposed_add, x, y)
    code = codes[0]
    out = fn(x, y)
    return {
        "kernels": len(kernel_names(code)),
        "kernel_names": kernel_names(code),
        "buffers": len(buffers(code)),
        "tiled_transpose": "transpose_mxn" in code,
        "output_stride": list(out.stride()),
        "eager_output_stride": list(_transposed_add(x, y).stride()),
        "matches_eager": torch.allclose(out, _transposed_add(x, y)),
    }
