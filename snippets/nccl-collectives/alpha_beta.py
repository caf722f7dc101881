"""The α–β cost of ring and tree all-reduce, on published link bandwidths: NVLink from the spec table
(snippets/_gpu/specs.json), InfiniBand NDR from links.json beside this file (the spec table has no
network rows). The per-step latency α is an assumption, read from links.json with the figures of
NCCL's own cost model it sits between; the crossovers are also given at NCCL's Ring/Simple figure. Besides the closed forms, an event simulation of
the ring: every rank sends one chunk per step to its right neighbour, and may send step s only after
its own step s−1 left and its left neighbour's step s−1 arrived."""

import json
import math
from pathlib import Path

from snippets._gpu import specs
from snippets._gpu.note import note
from verify.claim import claim

Q = "nccl-collectives"
GiB, KiB = 2**30, 2**10


def _link(ctx, key, name):
    """One figure of links.json, with its source in the record."""
    spec = json.loads((Path(__file__).parent / "links.json").read_text(encoding="utf-8"))[key]
    note(ctx, "spec")
    ctx.observed.setdefault("sources", {})[name] = spec["source"]
    return spec["value"]


def _ib(ctx):
    """One NDR port's bandwidth in one direction."""
    return _link(ctx, "ib_ndr_bytes_per_s", "InfiniBand NDR")


def _alpha(ctx):
    """The per-step latency α: an assumption, with NCCL's model figures it sits between."""
    return _link(ctx, "alpha_s", "α")


def _nvlink(ctx):
    """H100 SXM's NVLink in one direction: the datasheet's figure counts all links, both directions."""
    return specs.get(ctx, "H100 SXM", "nvlink_bytes_per_s") / 2


def tree_time(n, p, alpha, beta):
    """A binomial tree without chunking: ⌈log2 p⌉ rounds up, as many down, each sending all n bytes."""
    return 2 * math.ceil(math.log2(p)) * (alpha + n / beta)


def ring_events(n, alpha, link_bw, start=None):
    """When each rank's ring all-reduce ends, step by step: link_bw[r] is the bandwidth of r → r+1."""
    p = len(link_bw)
    start = start or [0.0] * p
    chunk = n / p
    sent = list(start)  # when rank r's previous send left
    arrived = list(start)  # when rank r received its left neighbour's previous chunk
    for _step in range(2 * (p - 1)):
        done = [max(sent[r], arrived[r]) + alpha + chunk / link_bw[r] for r in range(p)]
        sent, arrived = done, [done[(r - 1) % p] for r in range(p)]
    return [max(s, a) for s, a in zip(sent, arrived, strict=True)]


def _ring(n, p, alpha, beta):
    """Seconds of a ring all-reduce on p equal links, from the step simulation."""
    return max(ring_events(n, alpha, [beta] * p))


@claim("nccl.time-vs-p", question=Q,
       statement="按 α–β 模型逐步模拟环形 all-reduce（每步等左邻居的块到达，不用闭式解），β 取 InfiniBand NDR 一个端口单向的 "
                 "{ib_gbs:.0f} GB/s，α 取 {alpha:time}：p 从 {=8} 到 {=256}，只算传输（α = 0）的时间涨到原来的 "
                 "{bw_growth:x}（每卡发送量与 N 之比从 {share.8} 到 {share.256}），只算延迟（n = 0）的时间涨到 "
                 "{lat_growth:x}。所以 {=1 GiB} 的 all-reduce 从 {big.8:time} 变成 {big.256:time}，{big_growth:x}；"
                 "{=64 KiB} 的从 {small.8:time} 变成 {small.256:time}，{small_growth:x}。",
       expect={"bw_growth": {"approx": [1.1384, 1e-3]}, "lat_growth": {"approx": [36.43, 1e-3]},
               "big_growth": {"approx": [1.204, 1e-3]}, "small_growth": {"approx": [35.31, 1e-3]}})
def _(ctx):
    """The corrected answer's second check: the ring's step simulation (ring_events), not the closed form;
    the first check counts the bytes of a real ring (nccl.ring-bytes).

    范围：环形算法的 α–β 模型，α 是假设的值
    """
    beta, alpha = _ib(ctx), _alpha(ctx)
    out = {"ib_gbs": beta / 1e9, "alpha": alpha, "share": {}, "big": {}, "small": {}, "bw": {}, "lat": {}}
    for p in (8, 16, 64, 256):
        key = str(p)
        out["bw"][key] = _ring(GiB, p, 0.0, beta)
        out["lat"][key] = _ring(0, p, alpha, beta)
        out["share"][key] = round(out["bw"][key] * beta / GiB, 4)
        out["big"][key] = _ring(GiB, p, alpha, beta)
        out["small"][key] = _ring(64 * KiB, p, alpha, beta)
    out["bw_growth"] = out["bw"]["256"] / out["bw"]["8"]
    out["lat_growth"] = out["lat"]["256"] / out["lat"]["8"]
    out["big_growth"] = out["big"]["256"] / out["big"]["8"]
    out["small_growth"] = out["small"]["256"] / out["small"]["8"]
    return out


def _crossover(p, alpha, beta):
    """The message size where a binomial tree and the simulated ring take the same time, by bisection."""
    lo, hi = 1.0, 1e12
    for _ in range(64):  # the size range shrinks to 1e12^(2^-64), far below the float spacing
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if tree_time(mid, p, alpha, beta) < _ring(mid, p, alpha, beta) else (lo, mid)
    return lo


@claim("nccl.ring-vs-tree", question=Q,
       statement="同一个 α（{alpha:time}）和 β（InfiniBand NDR），不分块的二项树要 2⌈log₂p⌉·(α + n/β)，环按逐步模拟算。"
                 "两者相等的消息大小：p = {=8} 时 {cross_8:bytes}，p = {=64} 时 {cross_64:bytes}，比它小树快、比它大环快；"
                 "α 换成 NCCL 代价模型里网络一跳 Ring/Simple 的 {alpha_hi:time}，分界变成 {cross_8_hi:bytes} 和 "
                 "{cross_64_hi:bytes}，是原来的 {alpha_scaling:.2f} 倍：分界与 α 成正比。p = {=64}、{=1 GiB} 时树要 "
                 "{tree_big:time}，是环的 {tree_vs_ring:x}。闭式解 n* = αβ((p−1) − L)/(L − (p−1)/p)（L = ⌈log₂p⌉）与二分"
                 "出的分界相对差不到 {agree:.0e}，这只核对闭式解的代数：两者是同一个模型。",
       expect={"agree": {"<": 1e-6}, "cross_grows": True, "tree_vs_ring": {"approx": [6.007, 0.01]},
               "cross_8": {"approx": [470600, 0.01]}, "cross_64": {"approx": [2841000, 0.01]},
               "alpha_scaling": {"approx": [2.8, 1e-6]}})
def _(ctx):
    """Crossovers by bisection on the simulated ring, at the assumed α and at NCCL's Ring/Simple figure.

    范围：环与不分块二项树的 α–β 模型
    """
    beta, alpha = _ib(ctx), _alpha(ctx)
    alpha_hi = _link(ctx, "alpha_simple_s", "α (Ring/Simple)")
    out, agree = {"alpha": alpha, "alpha_hi": alpha_hi}, 0.0
    for p in (8, 64):
        levels = math.ceil(math.log2(p))
        closed = alpha * beta * ((p - 1) - levels) / (levels - (p - 1) / p)
        out[f"cross_{p}"] = _crossover(p, alpha, beta)
        out[f"cross_{p}_hi"] = _crossover(p, alpha_hi, beta)
        agree = max(agree, abs(out[f"cross_{p}"] - closed) / closed)
    tree_big = tree_time(GiB, 64, alpha, beta)
    return {**out, "agree": agree, "cross_grows": out["cross_64"] > out["cross_8"],
            "alpha_scaling": out["cross_64_hi"] / out["cross_64"], "tree_big": tree_big,
            "tree_vs_ring": tree_big / _ring(GiB, 64, alpha, beta)}


@claim("nccl.slowest-link", question=Q,
       statement="一个环跨两台 8 卡机器：{=16} 个 rank，机内 14 跳走 NVLink（H100 SXM 单向 {nvl_gbs:.0f} GB/s），跨机 2 跳走 "
                 "InfiniBand（单向 {ib_gbs:.0f} GB/s）。逐步模拟 {=1 GiB} 的 all-reduce：只走一张网卡时这个环要 {mixed:time}，"
                 "全部 16 跳都走 IB 的环要 {all_ib:time}（两者之比 {mixed_vs_ib:.3f}），全部走 NVLink 要 {all_nvl:time}："
                 "两条慢链路就把整个环拉到了 IB 的速度，是全 NVLink 的 {mixed_vs_nvl:x}。每卡一张网卡、数据分成 {channels} 个"
                 "通道各走一张（每通道分到 NVLink 的 1/{channels}）时，要 {mixed_nics:time}，差距缩到 {mixed_vs_nvl_nics:.2f} 倍："
                 "环仍由最慢的一跳决定，但跨机的字节分到了 {channels} 张网卡上。",
       expect={"mixed_vs_ib": {"approx": [1.0, 1e-9]}, "mixed_vs_nvl": {"approx": [8.74, 0.01]},
               "mixed_vs_nvl_nics": {"approx": [1.12, 0.01]}})
def _(ctx):
    """One ring with one link per hop, and 8 such rings (channels) side by side, each crossing machines on
    its own NIC and sharing NVLink eightfold; α as above. NCCL's own channel and NIC placement is not modelled.

    范围：环的逐步模拟
    """
    nvl, ib, alpha, channels = _nvlink(ctx), _ib(ctx), _alpha(ctx), 8
    hops = [ib if r % 8 == 7 else nvl for r in range(16)]  # rank 7 → 8 and rank 15 → 0 cross machines
    per_channel = [ib if r % 8 == 7 else nvl / channels for r in range(16)]
    times = {name: max(ring_events(n, alpha, bw)) for name, n, bw in
             (("mixed", GiB, hops), ("all_ib", GiB, [ib] * 16), ("all_nvl", GiB, [nvl] * 16),
              ("mixed_nics", GiB / channels, per_channel))}
    return {**times, "nvl_gbs": nvl / 1e9, "ib_gbs": ib / 1e9, "channels": channels,
            "mixed_vs_ib": times["mixed"] / times["all_ib"],
            "mixed_vs_nvl": times["mixed"] / times["all_nvl"],
            "mixed_vs_nvl_nics": times["mixed_nics"] / times["all_nvl"]}


@claim("nccl.straggler-sim", question=Q,
       statement="在 §三 用过的环的逐步模拟里让一个 rank 晚 {late:time} 开始（8 个 rank、NVLink、{=64 MiB}）：每个 rank 的完成时间都"
                 "推后约 {shift_max:time}（最少 {shift_min:time}），没有一个 rank 能先做完；这一段不在任何一步的传输里，"
                 "而是各 rank 在等左邻居的数据。",
       expect={"shift_min": {"approx": [3e-4, 1e-6]}, "shift_max": {"approx": [3e-4, 1e-6]}})
def _(ctx):
    """The ring's data dependencies alone: a late rank delays every rank by its lateness.

    范围：环的逐步模拟
    """
    nvl, alpha, late_by = _nvlink(ctx), _alpha(ctx), 3e-4
    on_time = ring_events(64 * 2**20, alpha, [nvl] * 8)
    late = ring_events(64 * 2**20, alpha, [nvl] * 8, start=[0.0, 0.0, 0.0, late_by, 0.0, 0.0, 0.0, 0.0])
    shifts = [b - a for a, b in zip(on_time, late, strict=True)]
    return {"late": late_by, "shift_min": min(shifts), "shift_max": max(shifts), "on_time": max(on_time)}
