"""The roofline of this CPU, measured, against the H100 SXM's published one.

One process measures an fp32 ``(1024, 1024) @ (1024, 1024)`` product and a copy (the shared workloads of
``snippets._workloads.limits``, the same code the benchmarks divide by), interleaved, with all the threads
torch uses; the three claims read that one measurement. The copy is sized here from this machine's L3 as
sysfs reports it (summed over the distinct caches), five times that and at least 256 MiB (the claim checks
four times, keeping the room rule's 25%), so that it measures memory and not a large server L3; where sysfs
says nothing it is 1 GiB. The GPU side is the
spec table, never a run: these claims compare a measured CPU with a datasheet.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import torch

from snippets._gpu import specs
from snippets._workloads import limits
from verify.claim import claim
from verify.timing import compare

Q = "cpu-vs-gpu"
GPU = "H100 SXM"
LINE = 64  # bytes per CPU cache line
MIB = 1 << 20
FLOOR, FALLBACK, OVER_L3 = 256 * MIB, 1024 * MIB, 5  # copy bytes (read + write): at least, without sysfs, x L3
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _l3_bytes() -> tuple[int | None, int]:
    """This machine's L3 in bytes, summed over the distinct caches (one per ``shared_cpu_list``), and how many
    there are; ``None`` where sysfs reports no level-3 cache."""
    caches: dict[str, int] = {}
    for index in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            if (index / "level").read_text().strip() != "3":
                continue
            size = (index / "size").read_text().strip()
            caches[(index / "shared_cpu_list").read_text().strip()] = int(size.rstrip("KMG")) * _UNITS.get(size[-1], 1)
        except (OSError, ValueError):
            continue
    return (sum(caches.values()) or None), len(caches)


@functools.cache
def _measure() -> dict:
    """Matmul FLOP/s and copy bytes/s of this CPU, measured once per process, interleaved."""
    l3, caches = _l3_bytes()
    want = max(FLOOR, OVER_L3 * l3) if l3 else FALLBACK
    numel = -(-want // (2 * 4 * MIB)) * MIB  # float32 elements per buffer, whole MiB of elements: src + dst >= want
    mm, flops = limits.matmul_case(limits.MATMUL_N["cpu"], "cpu")
    cp, nbytes = limits.copy_case(numel, "cpu")
    t = compare({"matmul": mm, "copy": cp}, rounds=7, warmup=2)
    mm_s, cp_s = float(t["matmul"]["median_s"]), float(t["copy"]["median_s"])
    return {"threads": torch.get_num_threads(), "matmul_n": limits.MATMUL_N["cpu"], "copy_bytes": nbytes,
            "l3_bytes": l3, "l3_caches": caches, "over_l3": nbytes / l3 if l3 else None,
            "gflops": flops / mm_s / 1e9, "copy_GBps": nbytes / cp_s / 1e9,
            "times": {"matmul": dict(t["matmul"]), "copy": dict(t["copy"])}}


def _assumed(ctx, field: str) -> float:
    """An assumed latency of ``hw.json`` (an input, no datasheet states one); the record names it as such."""
    row = json.loads((Path(__file__).parent / "hw.json").read_text(encoding="utf-8"))["assumed"]["latency"][field]
    ctx.observed.setdefault("sources", {})[f"latency {field}"] = row["source"]
    return float(row["value"])


def _spec(ctx, field: str) -> float:
    """A published H100 SXM value; the record names its document (the claim stays a CPU measurement)."""
    s = specs.row(GPU)[field]
    ctx.observed.setdefault("sources", {})[f"{GPU} {field}"] = s.source
    return s.value


@claim(
    "cpu-gpu.cpu-roofline",
    question=Q,
    kind="perf",
    statement="这台机器上（{cpu.threads} 个线程）实测：fp32 的 {=1024}×{=1024} 矩阵乘 {cpu.gflops:.0f} GFLOP/s（用它近似"
              "这台 CPU 的峰值算力）；大拷贝读加写共 {cpu.copy_bytes:bytes}，是系统报告的 L3（共 {cpu.l3_bytes:bytes}）的 "
              "{over_l3:.0f} 倍，测的是内存而不是缓存，{cpu.copy_GBps:.1f} GB/s。两者相除，这台 CPU 的拐点约是每字节 "
              "{ridge:.1f} 次 FLOP，算术强度低于它的算子受内存带宽限制。",
    expect={"ridge": {"between": [0.5, 500]}, "over_l3": {">=": 4}},
)
def _(ctx):
    """范围：这台 CPU，fp32，torch 的全部线程"""
    cpu = _measure()
    return {"cpu": cpu, "over_l3": cpu["over_l3"], "ridge": cpu["gflops"] / cpu["copy_GBps"]}


@claim(
    "cpu-gpu.h100-over-cpu",
    question=Q,
    kind="perf",
    statement="拿同一次测量和 H100 SXM 的规格比：H100 稠密 bf16 Tensor Core 峰值是这台 CPU 实测 fp32 矩阵乘的 "
              "{flop_ratio:,.0f} 倍，只算 fp32 CUDA core 是 {fp32_ratio:,.0f} 倍；HBM 带宽是它拷贝带宽的 {bw_ratio:.0f} 倍。"
              "用 Tensor Core（bf16）时 H100 的拐点是 {gpu_ridge:.0f} FLOP/字节，是这台 CPU 的 {ridge_ratio:.0f} 倍；只用 fp32 "
              "CUDA core 时是 {gpu_ridge_fp32:.0f} FLOP/字节，是这台 CPU 的 {fp32_ridge_ratio:.1f} 倍。带宽受限的算子搬到 GPU 上，"
              "按 roofline 最多快带宽之比，不是算力之比。",
    expect={"flop_ratio": {">=": 20}, "bw_ratio": {">=": 2}, "ridge_ratio": {">=": 2}},
)
def _(ctx):
    """范围：这台 CPU 实测，对照 H100 SXM 的规格"""
    cpu = _measure()
    bf16, fp32, bw = _spec(ctx, "bf16_dense_flops"), _spec(ctx, "fp32_flops"), _spec(ctx, "hbm_bytes_per_s")
    flop_ratio, bw_ratio = bf16 / (cpu["gflops"] * 1e9), bw / (cpu["copy_GBps"] * 1e9)
    fp32_ratio, cpu_ridge = fp32 / (cpu["gflops"] * 1e9), cpu["gflops"] / cpu["copy_GBps"]
    return {"cpu": cpu, "flop_ratio": flop_ratio, "fp32_ratio": fp32_ratio, "bw_ratio": bw_ratio,
            "gpu_ridge": bf16 / bw, "ridge_ratio": flop_ratio / bw_ratio, "gpu_ridge_fp32": fp32 / bw,
            "fp32_ridge_ratio": fp32 / bw / cpu_ridge}


@claim(
    "cpu-gpu.littles-law-core-vs-sm",
    question=Q,
    kind="perf",
    statement="Little's law：在途字节 = 带宽 × 延迟，两边的延迟都是假设值。这台机器上的拷贝带宽按 {cpu_latency:time} 的假设"
              "内存延迟，摊到拷贝用的 {cpu.threads} 个线程，每个线程只要 {per_core:.0f} 字节（{lines_per_core:.0f} 条 {=64} 字节的 "
              "cache line）在路上；H100 SXM 按规格带宽和 {gpu_latency:time} 的假设延迟，每个 SM 要 {per_sm:bytes}，是 CPU "
              "每个线程的 {sm_over_core:.0f} 倍。",
    expect={"sm_over_core": {">=": 2}},
)
def _(ctx):
    """范围：这台 CPU 实测，对照 H100 SXM 的规格；两个延迟都是假设"""
    cpu = _measure()
    cpu_latency, gpu_latency = _assumed(ctx, "cpu_dram_s"), _assumed(ctx, "gpu_hbm_s")
    per_core = cpu["copy_GBps"] * 1e9 * cpu_latency / cpu["threads"]
    per_sm = _spec(ctx, "hbm_bytes_per_s") * gpu_latency / specs.row(GPU)["sms"].value
    return {"cpu": cpu, "cpu_latency": cpu_latency, "gpu_latency": gpu_latency, "per_core": per_core, "lines_per_core": per_core / LINE, "per_sm": per_sm,
            "sm_over_core": per_sm / per_core}
