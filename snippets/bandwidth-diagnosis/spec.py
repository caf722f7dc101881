"""Little's law on published numbers: the bytes a kernel must keep in flight, and what fewer bytes cap it at.

Arithmetic on the spec table (``snippets/_gpu/specs.json``, each value with its NVIDIA document) and on
the occupancy calculator's rules (``snippets/_gpu/occupancy.py``); no kernel runs, no GPU is asked.
The DRAM latency is an input: no datasheet states one. Every cap below is Little's law, achieved
bandwidth <= bytes in flight / latency, under that assumed latency; the break-even latency (the
latency at which a kernel's bytes in flight would just suffice) needs no assumption at all.
"""

from __future__ import annotations

from snippets._gpu import occupancy, specs
from verify.claim import claim

Q = "bandwidth-diagnosis"
LATENCY_S = 600e-9  # an assumed loaded DRAM latency (the same input as the page on the execution model)
A100, H100 = "A100 SXM 80GB", "H100 SXM"
THREADS = 256  # threads per block of the streaming kernel below


def _need(ctx, gpu):
    """Bytes each SM must keep in flight for HBM to stay busy (bandwidth x latency / SMs)."""
    bw = specs.get(ctx, gpu, "hbm_bytes_per_s")
    sms = int(specs.get(ctx, gpu, "sms"))
    return bw, sms, bw * LATENCY_S / sms


def _cap(ctx, gpu, in_flight):
    """Little's law: the fraction of HBM bandwidth ``in_flight`` bytes per SM can reach, and the latency
    below which they would already be enough."""
    bw, sms, need = _need(ctx, gpu)
    return {"cap": min(1.0, in_flight / need), "break_even_ns": in_flight * sms / bw * 1e9}


@claim(
    "bw.inflight-per-sm",
    question=Q,
    statement="Little's law：带宽 = 在途字节 ÷ 延迟。假设访存延迟 {=600 ns}，要跑满 HBM，A100 SXM（{=80GB}，{a100_tb_per_s:.3f} TB/s、"
              "{a100_sms} 个 SM）每个 SM 要有 {a100_per_sm:bytes} 在路上，H100 SXM（{h100_tb_per_s:.2f} TB/s、{h100_sms} 个 SM）"
              "要 {h100_per_sm:bytes}，是 A100 的 {ratio:x}：带宽涨得比 SM 数快，每个 SM 要扛的在途字节就多。",
    expect={"a100_per_sm": {"approx": [11327.8, 1e-3]}, "h100_per_sm": {"approx": [15227.3, 1e-3]},
            "a100_sms": 108, "h100_sms": 132, "ratio": {"approx": [1.344, 1e-3]}},
)
def _(ctx):
    """Bytes in flight per SM for HBM to stay busy, from two GPUs' published bandwidth and SM count.

    范围：A100 SXM、H100 SXM 的规格，假设的延迟
    """
    out = {}
    for key, gpu in (("a100", A100), ("h100", H100)):
        bw, sms, need = _need(ctx, gpu)
        out |= {f"{key}_tb_per_s": bw / 1e12, f"{key}_sms": sms, f"{key}_per_sm": need}
    return {**out, "ratio": out["h100_per_sm"] / out["a100_per_sm"]}


@claim(
    "bw.more-warps-two-gpus",
    question=Q,
    statement="一个每线程同时只有一个 {=4 字节} load 在路上的流式 kernel，每 SM 驻留 {=32} 个 warp 时在途 {low_bytes:bytes}："
              "在假设的 {=600 ns} 延迟下，A100 SXM（{=80GB}）最多跑到带宽的 {low_a100_cap:pct}，H100 SXM 最多 {low_h100_cap:pct}；"
              "warp 加到 {=64} 个，上限随之翻倍成 {high_a100_cap:pct} 和 {high_h100_cap:pct}。不依赖假设的说法：只有延迟低于 "
              "{low_a100_break_even_ns:.0f} ns（A100）或 {low_h100_break_even_ns:.0f} ns（H100）时，{=32} 个 warp 的在途字节才够跑满。",
    expect={"low_bytes": 4096, "low_a100_cap": {"approx": [0.3616, 1e-3]}, "low_h100_cap": {"approx": [0.2690, 1e-3]},
            "low_a100_break_even_ns": {"approx": [216.95, 1e-3]}, "low_h100_break_even_ns": {"approx": [161.39, 1e-3]},
            "high_a100_cap": {"approx": [0.7232, 1e-3]}, "high_h100_cap": {"approx": [0.5380, 1e-3]}},
)
def _(ctx):
    """The cap Little's law puts on a kernel with too few bytes in flight, for two warp counts on two GPUs.

    范围：A100 SXM、H100 SXM 的规格，假设的延迟
    """
    warp = int(specs.get(ctx, "9.0", "warp_size"))
    out = {}
    for key, warps in (("low", 32), ("high", 64)):
        in_flight = warps * warp * 4
        out[f"{key}_bytes"] = in_flight
        for g, gpu in (("a100", A100), ("h100", H100)):
            out |= {f"{key}_{g}_{k}": v for k, v in _cap(ctx, gpu, in_flight).items()}
    return out


@claim(
    "bw.occupancy-times-width",
    question=Q,
    statement="同一个流式 kernel（{=256} 线程的 block，每线程一个 load 在途）放在 H100 SXM 上，驻留的 warp 数改从寄存器按 occupancy "
              "calculator 的规则得到（上限仍是同一个 Little's law）：每线程 "
              "{r64_registers} 个寄存器时每 SM 驻留 {r64_warps} 个 warp（occupancy {r64_occupancy:pct}），{r128_registers} 个时 "
              "{r128_warps} 个（{r128_occupancy:pct}）。在途字节 = 驻留的 warp × {=32} 线程 × 每次 load 的字节：{=4 字节} 的 load 分别是 "
              "{r64_w4_bytes:bytes} 和 {r128_w4_bytes:bytes}，在假设的 {=600 ns} 延迟下上限 {r64_w4_cap:pct} 和 {r128_w4_cap:pct}；"
              "换成 {=16 字节} 的 load，{r64_w16_bytes:bytes} 够跑满（上限 {r64_w16_cap:pct}），{r128_w16_bytes:bytes} 到 "
              "{r128_w16_cap:pct}，比寄存器少一半、用 {=4 字节} load 的那一版还高。",
    expect={"r64_warps": 32, "r64_occupancy": 0.5, "r64_w4_bytes": 4096, "r64_w4_cap": {"approx": [0.2690, 1e-3]},
            "r64_w16_bytes": 16384, "r64_w16_cap": 1.0,
            "r128_warps": 16, "r128_occupancy": 0.25, "r128_w4_bytes": 2048, "r128_w4_cap": {"approx": [0.1345, 1e-3]},
            "r128_w16_bytes": 8192, "r128_w16_cap": {"approx": [0.5380, 1e-3]}},
)
def _(ctx):
    """Occupancy from registers (the calculator's rules, compute capability 9.0), times the width of one load.

    范围：H100 SXM 的规格，假设的延迟
    """
    warp = int(specs.get(ctx, "9.0", "warp_size"))
    out = {}
    for regs in (64, 128):
        occ = occupancy.blocks_per_sm(ctx, "9.0", THREADS, regs, 0)
        r = f"r{regs}"
        out |= {f"{r}_registers": regs, f"{r}_warps": occ["warps"], f"{r}_occupancy": occ["occupancy"],
                f"{r}_limiter": occ["limiter"]}
        for width in (4, 16):
            in_flight = occ["warps"] * warp * width
            out |= {f"{r}_w{width}_bytes": in_flight, **{f"{r}_w{width}_{k}": v for k, v in _cap(ctx, H100, in_flight).items()}}
    return out


@claim(
    "bw.latency-bound-a100-to-h100",
    question=Q,
    statement="HBM 带宽 H100 SXM 是 A100 SXM（{=80GB}）的 {bw_ratio:x}。一个被在途字节卡住的 kernel（每 SM {=4096 字节}）"
              "拿不到这个倍数：带宽 = 在途字节 × SM 数 ÷ 延迟，两者延迟相同（都按假设的 {=600 ns}）时它从 "
              "{a100_gb_per_s:.0f} GB/s 到 {h100_gb_per_s:.0f} GB/s，只快 {latency_bound_ratio:x}，也就是 SM 数之比；"
              "真实延迟若不同，这个比还要乘上延迟之比的倒数。",
    expect={"bw_ratio": {"approx": [1.643, 1e-3]}, "latency_bound_ratio": {"approx": [1.2222, 1e-3]},
            "a100_gb_per_s": {"approx": [737.3, 1e-3]}, "h100_gb_per_s": {"approx": [901.1, 1e-3]}},
)
def _(ctx):
    """A latency-bound kernel scales with SM count x in-flight bytes / latency, not with HBM bandwidth.

    范围：A100 SXM、H100 SXM 的规格，假设两者延迟相同
    """
    in_flight = 4096
    rates = {}
    for key, gpu in (("a100", A100), ("h100", H100)):
        bw, sms, _ = _need(ctx, gpu)
        rates[key] = (bw, min(bw, in_flight * sms / LATENCY_S))
    return {"bw_ratio": rates["h100"][0] / rates["a100"][0], "a100_gb_per_s": rates["a100"][1] / 1e9,
            "h100_gb_per_s": rates["h100"][1] / 1e9, "latency_bound_ratio": rates["h100"][1] / rates["a100"][1]}
