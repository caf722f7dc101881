"""What a core, a lane and a thread are on each side, counted: this CPU's SIMD width from torch's CPU
capability, instruction-set and GPU figures from published documents (``hw.json`` beside this file, each
value with its source, and the project's spec table), Amdahl's law and a small launch computed exactly.

Nothing here is timed. The ISA rows are the architectural vector registers of x86-64 in 64-bit mode; the
GPU rows are the figures of the NVIDIA whitepapers that the shared spec table does not carry.
"""

from __future__ import annotations

import json
import os
import platform
from fractions import Fraction
from pathlib import Path

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "cpu-vs-gpu"
GPUS = {"h100": "H100 SXM", "a100": "A100 SXM 80GB"}
FP32 = 4


def _hw(ctx, group: str, name: str, field: str):
    """One figure of ``hw.json`` (a published document's value); the record names the document."""
    row = json.loads((Path(__file__).parent / "hw.json").read_text(encoding="utf-8"))[group][name][field]
    ctx.observed.setdefault("sources", {})[f"{name} {field}"] = row["source"]
    return row["value"]


def _isa(ctx, capability: str) -> dict:
    regs, width = int(_hw(ctx, "isa", capability, "vector_registers")), int(_hw(ctx, "isa", capability, "vector_bytes"))
    return {"name": _hw(ctx, "isa", capability, "name"), "registers": regs, "vector_bytes": width,
            "lanes": width // FP32, "register_bytes": regs * width}


@claim(
    "cpu-gpu.this-cpu-simd",
    question=Q,
    statement="这台 {arch} 机器上 torch 报告的 CPU capability 是 `{capability}`：ATen 在运行时选用为 {isa.name} 编译的那一份"
              "逐元素 kernel（矩阵乘走 MKL/oneDNN，它们自己检测指令集），一个向量寄存器 {isa.vector_bytes} 字节，每条指令算 "
              "{isa.lanes} 个 fp32，{isa.registers} 个这样的寄存器共 {isa.register_bytes:bytes}；机器有 {cores} 个逻辑核。"
              "GPU 的一条 warp 指令是 {warp} 个 lane，相当于 {vectors_per_warp} 条这样的向量指令。",
    expect={"arch": {"in": ["x86_64", "AMD64"]}, "lanes": {"in": [4, 8, 16]}, "vectors_per_warp": {"in": [2, 4, 8]},
            "warp": 32},    needs=["x86-64"],
)
def _(ctx):
    """范围：这台 CPU 上 torch 报告的 capability（x86-64）"""
    arch = platform.machine()
    ctx.observe(arch=arch)  # the ISA rows are x86-64's: another architecture fails here, before naming them
    if arch not in ("x86_64", "AMD64"):
        return {"arch": arch}
    capability = torch.backends.cpu.get_cpu_capability()
    isa = _isa(ctx, capability)
    warp = specs.row("9.0")["warp_size"]
    ctx.observed.setdefault("sources", {})["9.0 warp_size"] = warp.source
    return {"arch": arch, "capability": capability, "isa": isa, "cores": os.cpu_count(), "lanes": isa["lanes"],
            "warp": int(warp.value), "vectors_per_warp": int(warp.value) // isa["lanes"]}


def _cores(ctx, gpu: str) -> dict:
    cap = specs.capability_of(gpu)
    sms = int(specs.get(ctx, gpu, "sms"))
    lanes = int(_hw(ctx, "gpus", gpu, "fp32_lanes_per_sm"))
    schedulers = int(_hw(ctx, "gpus", gpu, "schedulers_per_sm"))
    threads = sms * int(specs.get(ctx, cap, "max_threads_per_sm"))
    return {"sms": sms, "lanes_per_sm": lanes, "cuda_cores": sms * lanes,
            "published_cores": int(_hw(ctx, "gpus", gpu, "fp32_cores")), "schedulers": sms * schedulers,
            "lanes_per_scheduler": lanes // schedulers, "warp": int(specs.get(ctx, cap, "warp_size")),
            "resident_threads": threads, "threads_per_lane": threads // (sms * lanes)}


@claim(
    "cpu-gpu.cuda-cores-are-lanes",
    question=Q,
    statement="“CUDA core”数的是 fp32 lane：H100 SXM 是 {h100.sms} 个 SM × 每 SM {h100.lanes_per_sm} 个 = {h100.cuda_cores}"
              "（白皮书写的也是 {h100.published_cores}），A100 SXM 是 {a100.sms} × {a100.lanes_per_sm} = {a100.cuda_cores}。每个 SM "
              "分成几块、各有一个 warp 调度器：H100 每个调度器管 {h100.lanes_per_scheduler} 个 fp32 lane，正好一个 warp（{h100.warp} 个线程）"
              "的宽度，A100 是 {a100.lanes_per_scheduler} 个，一条 warp 的 fp32 指令分两拍。能各自取指、发射的单元 H100 共 "
              "{h100.schedulers} 个，A100 共 {a100.schedulers} 个。同时驻留的线程 H100 有 "
              "{h100.resident_threads} 个、A100 有 {a100.resident_threads} 个，是 lane 数的 {h100.threads_per_lane} 倍和 "
              "{a100.threads_per_lane} 倍：线程是轮流占用 lane 的执行上下文，不是核。",
    expect={"cores": [16896, 6912], "published_cores": [16896, 6912], "schedulers": [528, 432],
            "lanes_per_scheduler": [32, 16], "threads_per_lane": [16, 32]},
)
def _(ctx):
    """范围：H100 SXM 与 A100 SXM 的规格"""
    out = {key: _cores(ctx, gpu) for key, gpu in GPUS.items()}
    for field, key in (("cuda_cores", "cores"), ("published_cores", "published_cores"), ("schedulers", "schedulers"),
                       ("lanes_per_scheduler", "lanes_per_scheduler"), ("threads_per_lane", "threads_per_lane")):
        out[key] = [out[gpu][field] for gpu in GPUS]  # H100, A100
    return out


@claim(
    "cpu-gpu.implied-clock",
    question=Q,
    statement="再用规格里的 fp32 峰值反推：H100 SXM 的 {h100.tflops:.1f} TFLOP/s ÷（{=2 FLOP} × {h100.cuda_cores} 个 CUDA core）"
              "= {h100.lane_ghz:.2f} GHz，正是 NVIDIA 公布的最高 boost 频率 {h100.boost_ghz:.2f} GHz；A100 SXM 的 "
              "{a100.tflops:.1f} TFLOP/s 对应 {a100.lane_ghz:.2f} GHz，它的 boost 频率是 {a100.boost_ghz:.2f} GHz：每个 CUDA core "
              "每拍一次 FMA，是一个 lane。若把驻留线程当成核，反推出的频率只有 {h100.thread_mhz:.0f} MHz 和 {a100.thread_mhz:.0f} MHz，"
              "是 boost 频率的 {h100.thread_over_boost:pct} 和 {a100.thread_over_boost:pct}。",
    expect={"h100_lane_over_boost": {"approx": [1.0, 0.01]}, "a100_lane_over_boost": {"approx": [1.0, 0.01]},
            "h100_thread_mhz": {"approx": [124, 0.01]}, "a100_thread_mhz": {"approx": [44, 0.01]}},
)
def _(ctx):
    """范围：H100 SXM 与 A100 SXM 的规格"""
    out = {}
    for key, gpu in GPUS.items():
        c = _cores(ctx, gpu)
        flops = specs.get(ctx, gpu, "fp32_flops")
        boost = _hw(ctx, "gpus", gpu, "boost_clock_hz")
        lane_hz, thread_hz = flops / (2 * c["cuda_cores"]), flops / (2 * c["resident_threads"])
        out[key] = {"tflops": flops / 1e12, "cuda_cores": c["cuda_cores"], "lane_ghz": lane_hz / 1e9,
                    "boost_ghz": boost / 1e9, "lane_over_boost": lane_hz / boost, "thread_mhz": thread_hz / 1e6,
                    "thread_over_boost": thread_hz / boost}
        out[f"{key}_lane_over_boost"], out[f"{key}_thread_mhz"] = out[key]["lane_over_boost"], out[key]["thread_mhz"]
    return out


def _register_tile(isa: dict) -> dict:
    """The largest mr × nr fp32 accumulator block with nr two vectors wide: mr·2 accumulators, two vectors of B and
    one broadcast of A must fit in the architectural vector registers."""
    nr = 2 * isa["lanes"]
    mr = (isa["registers"] - 2 - 1) // 2
    return {"mr": mr, "nr": nr, "tile": [mr, nr], "registers_used": 2 * mr + 3, "flop_per_float": 2 * mr * nr / (mr + nr)}


@claim(
    "cpu-gpu.register-tile",
    question=Q,
    statement="CPU 的 GEMM 内核把一块 C 的累加器放在向量寄存器里：B 取两个向量宽时，AVX2（{avx2.registers} 个 "
              "{avx2.vector_bytes} 字节寄存器）最多放得下 {avx2_tile.mr}×{avx2_tile.nr} 的块、用 {avx2_tile.registers_used} 个寄存器，"
              "AVX-512（{avx512.registers} 个 {avx512.vector_bytes} 字节）最多 {avx512_tile.mr}×{avx512_tile.nr}、用 "
              "{avx512_tile.registers_used} 个，每从缓存读一个 fp32 分别做 {avx2_tile.flop_per_float:.1f} 和 "
              "{avx512_tile.flop_per_float:.1f} 次 FLOP。一个核里程序能点名的（架构）向量寄存器只有 {avx512.register_bytes:bytes}"
              "（AVX-512；乱序执行用的物理寄存器堆比这大，但编译器只能点名这 {avx512.registers} 个）；H100 一个 SM 的寄存器文件是 "
              "{sm_register_bytes:bytes}，是它的 {sm_over_core:.0f} 倍，SM 最多驻留 {max_warps} 个 warp，它们的寄存器同时留在里面，"
              "满驻留时每个 warp 也有 {per_warp_bytes:bytes}。",
    expect={"tiles": [[6, 16], [14, 32]], "registers_used": [15, 31], "sm_over_core": 128.0, "per_warp_bytes": 4096},
)
def _(ctx):
    """范围：x86-64 AVX2/AVX-512 寄存器，H100 规格"""
    avx2, avx512 = _isa(ctx, "AVX2"), _isa(ctx, "AVX512")
    sm_bytes = int(specs.get(ctx, "9.0", "registers_per_sm")) * 4
    warps = int(specs.get(ctx, "9.0", "max_warps_per_sm"))
    t2, t512 = _register_tile(avx2), _register_tile(avx512)
    return {"avx2": avx2, "avx512": avx512, "avx2_tile": t2, "avx512_tile": t512, "tiles": [t2["tile"], t512["tile"]],
            "registers_used": [t2["registers_used"], t512["registers_used"]],
            "sm_register_bytes": sm_bytes, "sm_over_core": sm_bytes / avx512["register_bytes"], "max_warps": warps,
            "per_warp_bytes": sm_bytes // warps}


def _amdahl(serial: Fraction, k: Fraction | None) -> Fraction:
    """Overall speedup when the parallel share runs ``k`` times faster (``None``: infinitely faster)."""
    return 1 / (serial + ((1 - serial) / k if k is not None else 0))


@claim(
    "cpu-gpu.amdahl",
    question=Q,
    statement="Amdahl 定律，精确计算：只有 {=10%} 的时间留在不能并行（或留在 CPU 上）的部分时，其余部分快 {=10} 倍、{=100} 倍、"
              "无穷多倍，整体只快 {s10.k10:.2f}、{s10.k100:.2f}、{s10.inf:.0f} 倍；留下的是 {=1%} 时，分别是 {s1.k10:.2f}、"
              "{s1.k100:.2f}、{s1.inf:.0f} 倍。整体加速的上限是 1 ÷ 串行比例，与并行部分快多少无关。",
    expect={"limits": [10.0, 100.0], "s10_k100": {"approx": [9.174, 0.001]}, "s1_k100": {"approx": [50.25, 0.001]}},
)
def _(ctx):
    out = {}
    for key, serial in (("s10", Fraction(1, 10)), ("s1", Fraction(1, 100))):
        out[key] = {name: float(_amdahl(serial, k)) for name, k in
                    (("k10", Fraction(10)), ("k100", Fraction(100)), ("inf", None))}
        out[f"{key}_k100"] = out[key]["k100"]
    out["limits"] = [out["s10"]["inf"], out["s1"]["inf"]]
    return out


@claim(
    "cpu-gpu.small-launch",
    question=Q,
    statement="小任务填不满 GPU（按 H100 SXM 的规格算）：{n} 个 fp32 相加，每 block {block} 个线程，只有 {blocks} 个 block，"
              "{sms} 个 SM 里最多 {sm_share:pct} 有活干，占全芯片 warp 槽的 {warp_share:pct}；它总共只搬 {bytes:bytes}，而按 "
              "{latency:time} 的假设延迟，HBM 跑满时路上要有 {in_flight:bytes}，它只够 {bytes_share:pct}。填满 warp 槽要 "
              "{fill_n} 个元素（每线程一个）。",
    expect={"blocks": 16, "sms": 132, "warp_share": {"<": 0.02}, "bytes_share": {"<": 0.05}, "fill_n": 270336},
)
def _(ctx):
    """范围：H100 SXM 的规格，4096 个元素的逐元素加法"""
    gpu = GPUS["h100"]
    n, block = 4096, 256
    sms = int(specs.get(ctx, gpu, "sms"))
    cap = specs.capability_of(gpu)
    warp = int(specs.get(ctx, cap, "warp_size"))
    slots = sms * int(specs.get(ctx, cap, "max_warps_per_sm"))
    blocks = -(-n // block)
    nbytes = 3 * n * FP32  # read a and b, write c
    latency = _hw(ctx, "assumed", "latency", "gpu_hbm_s")
    in_flight = specs.get(ctx, gpu, "hbm_bytes_per_s") * latency
    return {"n": n, "latency": latency, "block": block, "blocks": blocks, "sms": sms, "sm_share": min(blocks, sms) / sms,
            "warp_share": blocks * block // warp / slots, "bytes": nbytes, "in_flight": in_flight,
            "bytes_share": nbytes / in_flight, "fill_n": sms * int(specs.get(ctx, cap, "max_threads_per_sm"))}
