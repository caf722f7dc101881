"""The roofline of this CPU, measured, against the H100 SXM's published one.

One process measures an fp32 ``(1024, 1024) @ (1024, 1024)`` product and a copy far larger than any cache
(the shared workloads in ``snippets._workloads.limits``, the same code the benchmarks divide by),
interleaved, with all the threads torch uses; the three claims read that one measurement. The GPU side is
the spec table, never a run: these claims compare a measured CPU with a datasheet.
"""

from __future__ import annotations

import functools

import torch

from snippets._gpu import specs
from snippets._workloads import limits
from verify.claim import claim
from verify.timing import compare

Q = "cpu-vs-gpu"
GPU = "H100 SXM"
CPU_LATENCY_S = 100e-9  # an assumed loaded DRAM latency of a CPU: an input, no datasheet states one
GPU_LATENCY_S = 600e-9  # the loaded HBM latency gpu-execution-model assumes: an input as well
LINE = 64  # bytes per CPU cache line


@functools.cache
def _measure() -> dict:
    """Matmul FLOP/s and copy bytes/s of this CPU, measured once per process, interleaved."""
    mm, flops = limits.matmul_case(limits.MATMUL_N["cpu"], "cpu")
    cp, nbytes = limits.copy_case(limits.COPY_NUMEL["cpu"], "cpu")
    t = compare({"matmul": mm, "copy": cp}, rounds=7, warmup=2)
    mm_s, cp_s = float(t["matmul"]["median_s"]), float(t["copy"]["median_s"])
    return {"threads": torch.get_num_threads(), "matmul_n": limits.MATMUL_N["cpu"], "copy_bytes": nbytes,
            "gflops": flops / mm_s / 1e9, "copy_GBps": nbytes / cp_s / 1e9,
            "times": {"matmul": dict(t["matmul"]), "copy": dict(t["copy"])}}


def _spec(ctx, field: str) -> float:
    """A published H100 SXM value; the record names its document (the claim stays a CPU measurement)."""
    s = specs.row(GPU)[field]
    ctx.observed.setdefault("sources", {})[f"{GPU} {field}"] = s.source
    return s.value


@claim(
    "cpu-gpu.cpu-roofline",
    question=Q,
    kind="perf",
    statement="这台机器上（{cpu.threads} 个线程）实测：fp32 的 {=1024}×{=1024} 矩阵乘 {cpu.gflops:.0f} GFLOP/s，"
              "大拷贝（读加写共 {cpu.copy_bytes:bytes}）{cpu.copy_GBps:.1f} GB/s；两者相除，这台 CPU 的拐点是每字节 "
              "{ridge:.1f} 次 FLOP，算术强度低于它的算子受内存带宽限制。",
    expect={"ridge": {"between": [0.5, 500]}},
)
def _(ctx):
    """范围：这台 CPU，fp32，torch 的全部线程"""
    cpu = _measure()
    return {"cpu": cpu, "ridge": cpu["gflops"] / cpu["copy_GBps"]}


@claim(
    "cpu-gpu.h100-over-cpu",
    question=Q,
    kind="perf",
    statement="拿同一次测量和 H100 SXM 的规格比：稠密 bf16 Tensor Core 峰值是这台 CPU fp32 矩阵乘的 {flop_ratio:,.0f} 倍"
              "（H100 的 fp32 CUDA core 峰值是 {fp32_ratio:,.0f} 倍），HBM 带宽是它拷贝带宽的 {bw_ratio:.0f} 倍，小得多。"
              "H100 的拐点（bf16，{gpu_ridge:.0f} FLOP/字节）是这台 CPU 的 {ridge_ratio:.0f} 倍：带宽受限的算子搬到 GPU 上，"
              "按 roofline 最多快带宽之比，不是算力之比。",
    expect={"flop_ratio": {">=": 20}, "bw_ratio": {">=": 2}, "ridge_ratio": {">=": 2}},
)
def _(ctx):
    """范围：这台 CPU 实测，对照 H100 SXM 的规格"""
    cpu = _measure()
    bf16, fp32, bw = _spec(ctx, "bf16_dense_flops"), _spec(ctx, "fp32_flops"), _spec(ctx, "hbm_bytes_per_s")
    flop_ratio, bw_ratio = bf16 / (cpu["gflops"] * 1e9), bw / (cpu["copy_GBps"] * 1e9)
    return {"cpu": cpu, "flop_ratio": flop_ratio, "fp32_ratio": fp32 / (cpu["gflops"] * 1e9), "bw_ratio": bw_ratio,
            "gpu_ridge": bf16 / bw, "ridge_ratio": flop_ratio / bw_ratio}


@claim(
    "cpu-gpu.littles-law-core-vs-sm",
    question=Q,
    kind="perf",
    statement="Little's law：在途字节 = 带宽 × 延迟。这台机器上的拷贝带宽按 {=100 ns} 的假设内存延迟，摊到 torch 的 {cpu.threads} 个线程，"
              "每个线程只要 {per_core:.0f} 字节（{lines_per_core:.0f} 条 {=64} 字节的 cache line）在路上；H100 SXM 按规格带宽和 "
              "{=600 ns} 的假设延迟，每个 SM 要 {per_sm:bytes}，是 CPU 每个线程的 {sm_over_core:.0f} 倍。",
    expect={"sm_over_core": {">=": 2}},
)
def _(ctx):
    """范围：这台 CPU 实测，对照 H100 SXM 的规格；两个延迟都是假设"""
    cpu = _measure()
    per_core = cpu["copy_GBps"] * 1e9 * CPU_LATENCY_S / cpu["threads"]
    per_sm = _spec(ctx, "hbm_bytes_per_s") * GPU_LATENCY_S / specs.row(GPU)["sms"].value
    return {"cpu": cpu, "per_core": per_core, "lines_per_core": per_core / LINE, "per_sm": per_sm,
            "sm_over_core": per_sm / per_core}
