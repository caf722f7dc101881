"""The α–β cost of ring and tree all-reduce, on published link bandwidths: NVLink from the spec table
(snippets/_gpu/specs.json), InfiniBand NDR from links.json beside this file (the spec table has no
network rows). The per-step latency α is an input. Besides the closed forms, an event simulation of
the ring: every rank sends one chunk per step to its right neighbour, and may send step s only after
its own step s−1 left and its left neighbour's step s−1 arrived."""

import json
import math
from pathlib import Path

from snippets._gpu import specs
from snippets._gpu.note import note
from verify.claim import claim

Q = "nccl-collectives"
ALPHA = 5e-6  # seconds per step: an input, of the order of one network hop plus software
GiB, KiB = 2**30, 2**10


def _ib(ctx):
    """One NDR port's bandwidth in one direction, with its source in the record."""
    spec = json.loads((Path(__file__).parent / "links.json").read_text(encoding="utf-8"))["ib_ndr_bytes_per_s"]
    note(ctx, "spec")
    ctx.observed.setdefault("sources", {})["InfiniBand NDR"] = spec["source"]
    return spec["value"]


def _nvlink(ctx):
    """H100 SXM's NVLink in one direction: the datasheet's figure counts all links, both directions."""
    return specs.get(ctx, "H100 SXM", "nvlink_bytes_per_s") / 2


def ring_terms(n, p, alpha, beta):
    """Seconds of a ring all-reduce of n bytes: 2(p−1) steps of α, and 2(p−1)/p·n bytes sent per rank."""
    return {"latency": 2 * (p - 1) * alpha, "bandwidth": 2 * (p - 1) / p * n / beta}


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


@claim("nccl.time-vs-p", question=Q,
       statement="按 α–β 算环形 all-reduce，β 取 InfiniBand NDR 一个端口单向的 {ib_gbs:.0f} GB/s，α 取 {=5 µs}：p 从 "
                 "{=8} 到 {=256}，带宽项只涨到原来的 {bw_growth:x}（2(p−1)/p 从 {share.8} 到 {share.256}，极限是 2），"
                 "延迟项涨到 {lat_growth:x}。所以 {=1 GiB} 的 all-reduce 从 {big.8:time} 变成 {big.256:time}，"
                 "{big_growth:x}；{=64 KiB} 的从 {small.8:time} 变成 {small.256:time}，{small_growth:x}。",
       expect={"bw_growth": {"approx": [1.1384, 1e-3]}, "lat_growth": {"approx": [36.43, 1e-3]},
               "big_growth": {"approx": [1.204, 1e-3]}, "small_growth": {"approx": [35.31, 1e-3]}})
def _(ctx):
    """The corrected answer, by the formula; the counted bytes of a real ring are nccl.ring-bytes.

    范围：环形算法的 α–β 模型
    """
    beta = _ib(ctx)
    out = {"ib_gbs": beta / 1e9, "share": {}, "big": {}, "small": {}}
    terms = {}
    for p in (8, 16, 64, 256):
        terms[p] = ring_terms(GiB, p, ALPHA, beta)
        out["share"][str(p)] = round(2 * (p - 1) / p, 4)
        out["big"][str(p)] = sum(terms[p].values())
        out["small"][str(p)] = sum(ring_terms(64 * KiB, p, ALPHA, beta).values())
    out["bw_growth"] = terms[256]["bandwidth"] / terms[8]["bandwidth"]
    out["lat_growth"] = terms[256]["latency"] / terms[8]["latency"]
    out["big_growth"] = out["big"]["256"] / out["big"]["8"]
    out["small_growth"] = out["small"]["256"] / out["small"]["8"]
    return out


def _crossover(p, alpha, beta, time_ring):
    """The message size where a binomial tree and a ring take the same time, by bisection on sizes."""
    lo, hi = 1.0, 1e12
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if tree_time(mid, p, alpha, beta) < time_ring(mid, p) else (lo, mid)
    return lo


@claim("nccl.ring-vs-tree", question=Q,
       statement="同一个 α（{=5 µs}）和 β（InfiniBand NDR），不分块的二项树要 2⌈log₂p⌉·(α + n/β)，环要 2(p−1)·α + "
                 "2(p−1)/p·n/β。两者相等的消息大小：p = {=8} 时 {cross_8:bytes}，p = {=64} 时 {cross_64:bytes}，比它小树快、"
                 "比它大环快；闭式解和在环的逐步模拟上二分出的分界相差不到 {agree:.0e}。p = {=64}、{=1 GiB} 时树要 "
                 "{tree_big:time}，是环的 {tree_vs_ring:x}。",
       expect={"agree": {"<": 1e-6}, "cross_grows": True, "tree_vs_ring": {"approx": [6.007, 0.01]},
               "cross_8": {"approx": [470600, 0.01]}, "cross_64": {"approx": [2841000, 0.01]}})
def _(ctx):
    """Closed form n* = αβ((p−1) − L)/(L − (p−1)/p), L = ⌈log2 p⌉, against bisection on the simulated ring.

    范围：环与不分块二项树的 α–β 模型
    """
    beta = _ib(ctx)
    cross, agree = {}, 0.0
    for p in (8, 64):
        levels = math.ceil(math.log2(p))
        closed = ALPHA * beta * ((p - 1) - levels) / (levels - (p - 1) / p)
        found = _crossover(p, ALPHA, beta, lambda n, p=p: max(ring_events(n, ALPHA, [beta] * p)))
        cross[str(p)] = closed
        agree = max(agree, abs(found - closed) / closed)
    tree_big = tree_time(GiB, 64, ALPHA, beta)
    return {"cross_8": cross["8"], "cross_64": cross["64"], "agree": agree, "cross_grows": cross["64"] > cross["8"],
            "tree_big": tree_big,
            "tree_vs_ring": tree_big / sum(ring_terms(GiB, 64, ALPHA, beta).values())}


@claim("nccl.slowest-link", question=Q,
       statement="一个环跨两台 8 卡机器：{=16} 个 rank，机内 14 跳走 NVLink（H100 SXM 单向 {nvl_gbs:.0f} GB/s），跨机 2 跳走 "
                 "InfiniBand（单向 {ib_gbs:.0f} GB/s）。逐步模拟 {=1 GiB} 的 all-reduce：这个环要 {mixed:time}，"
                 "全部 16 跳都走 IB 的环要 {all_ib:time}（两者之比 {mixed_vs_ib:.3f}），全部走 NVLink 要 {all_nvl:time}："
                 "两条慢链路就把整个环拉到了 IB 的速度，是全 NVLink 的 {mixed_vs_nvl:x}。",
       expect={"mixed_vs_ib": {"approx": [1.0, 1e-9]}, "mixed_vs_nvl": {"approx": [8.74, 0.01]}})
def _(ctx):
    """One ring, one link per hop, α as above; NCCL's several channels over several NICs are not modelled.

    范围：单个环的逐步模拟
    """
    nvl, ib = _nvlink(ctx), _ib(ctx)
    hops = [ib if r % 8 == 7 else nvl for r in range(16)]  # rank 7 → 8 and rank 15 → 0 cross machines
    times = {name: max(ring_events(GiB, ALPHA, bw)) for name, bw in
             (("mixed", hops), ("all_ib", [ib] * 16), ("all_nvl", [nvl] * 16))}
    return {**times, "nvl_gbs": nvl / 1e9, "ib_gbs": ib / 1e9,
            "mixed_vs_ib": times["mixed"] / times["all_ib"],
            "mixed_vs_nvl": times["mixed"] / times["all_nvl"]}


@claim("nccl.straggler-sim", question=Q,
       statement="同一个逐步模拟里让一个 rank 晚 {=300 µs} 开始（8 个 rank、NVLink、{=64 MiB}）：每个 rank 的完成时间都推后 "
                 "{shift_min:time} 到 {shift_max:time}，没有一个 rank 能先做完；这一段不在任何一步的传输里，"
                 "而是各 rank 在等左邻居的数据。",
       expect={"shift_min": {"approx": [3e-4, 1e-6]}, "shift_max": {"approx": [3e-4, 1e-6]}})
def _(ctx):
    """The ring's data dependencies alone: a late rank delays every rank by its lateness.

    范围：单个环的逐步模拟
    """
    nvl = _nvlink(ctx)
    on_time = ring_events(64 * 2**20, ALPHA, [nvl] * 8)
    late = ring_events(64 * 2**20, ALPHA, [nvl] * 8, start=[0.0, 0.0, 0.0, 3e-4, 0.0, 0.0, 0.0, 0.0])
    shifts = [b - a for a, b in zip(on_time, late, strict=True)]
    return {"shift_min": min(shifts), "shift_max": max(shifts), "on_time": max(on_time)}
