"""Where the expert-parallel cost depends on the model: all-to-all time against expert GEMM time for a
Mixtral-8x7B layer and a DeepSeek-V3 layer, on NVLink and on a network card between nodes; and the bytes
of a dispatch that sends a token once per destination rank rather than once per (token, expert).

Spec arithmetic, not a measurement (the dedup count is also sampled on the CPU, as a check on its closed
form). The models' shapes are their published configurations (given);
NVLink bandwidth and the BF16 Tensor Core rate of an H100 SXM come from ``snippets._gpu.specs``; the
network between nodes is an assumption written as an input (one 400 Gb/s NIC per GPU).
"""

from __future__ import annotations

import math

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "moe-expert-parallel"
GPU = "H100 SXM"

# hidden, routed expert MLP width, routed experts, top-k (published configurations)
MODELS = {"mixtral": (4096, 14336, 8, 2), "dsv3": (7168, 2048, 256, 8)}
TOKENS, EP, BF16, FP8 = 4096, 8, 2, 1  # tokens per GPU per step, EP degree, bytes per element
NIC = 50e9  # bytes/s per GPU between nodes: one 400 Gb/s NIC (an assumption, not in the spec table)


def _times(d, ffn, k, link, peak, dispatch_bytes=BF16):
    """Dispatch + combine over ``link`` (every assignment on another rank is sent, (EP-1)/EP of them)
    against the three matmuls of a SwiGLU expert for every assignment at the dense BF16 peak."""
    off = TOKENS * k * (EP - 1) / EP
    comm = off * d * (dispatch_bytes + BF16) / link
    compute = TOKENS * k * 3 * 2 * d * ffn / peak
    return comm, compute


@claim("moe.a2a-vs-expert-width", question=Q,
       statement="同样每卡每步 {=4096} 个 token、EP {=8} 路、bf16，在 H100 SXM 上比 dispatch + combine 与路由专家 GEMM 的时间："
                 "Mixtral-8x7B（hidden {=4096}、专家 MLP {=14336}、top-{=2}）在 NVLink（单向 {nvlink_gb_s:.0f} GB/s）上是 "
                 "{ratio.mixtral.nvlink:pct}，走每卡 {=50 GB/s} 的跨节点网卡是 {ratio.mixtral.nic:pct}；DeepSeek-V3"
                 "（hidden {=7168}、路由专家 MLP {=2048}、{=256} 选 {=8}）在 NVLink 上已是 {ratio.dsv3.nvlink:pct}，跨节点是 "
                 "{ratio.dsv3.nic:x}（dispatch 改发 FP8 也还有 {ratio.dsv3.nic_fp8_dispatch:x}）。两者的字节和 FLOPs 都正比于 "
                 "token·k·hidden，比值里只剩专家的 MLP 宽度：宽度之比 {=14336}/{=2048}，两个模型的比值也差 {width_factor:.2f} 倍。",
       expect={"mixtral_nvlink_small": True, "dsv3_nic_above_one": True, "dsv3_nvlink_above_half": True})
def _(ctx):
    """范围：Mixtral、DeepSeek-V3 的形状，H100，假设的网卡"""
    nvlink = specs.get(ctx, GPU, "nvlink_bytes_per_s") / 2  # the table gives both directions together
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    ratio = {}
    for name, (d, ffn, _e, k) in MODELS.items():
        ratio[name] = {}
        for link_name, link in (("nvlink", nvlink), ("nic", NIC)):
            comm, compute = _times(d, ffn, k, link, peak)
            ratio[name][link_name] = comm / compute
    comm, compute = _times(*MODELS["dsv3"][:2], MODELS["dsv3"][3], NIC, peak, dispatch_bytes=FP8)
    ratio["dsv3"]["nic_fp8_dispatch"] = comm / compute
    return {"nvlink_gb_s": nvlink / 1e9, "ratio": ratio,
            "width_factor": ratio["dsv3"]["nvlink"] / ratio["mixtral"]["nvlink"],
            "mixtral_nvlink_small": ratio["mixtral"]["nvlink"] < 0.2,
            "dsv3_nvlink_above_half": ratio["dsv3"]["nvlink"] > 0.5,
            "dsv3_nic_above_one": ratio["dsv3"]["nic"] > 1 and ratio["dsv3"]["nic_fp8_dispatch"] > 1}


def _remote_ranks(e, k, ep):
    """Expected number of other ranks a token's k distinct experts land on, routing uniform over the
    experts: each of the ep - 1 other ranks holds e/ep experts and is missed with C(e - e/ep, k) / C(e, k)."""
    per = e // ep
    return (ep - 1) * (1 - math.comb(e - per, k) / math.comb(e, k))


@claim("moe.dedup-bytes", question=Q,
       statement="“字节与专家总数无关”只对按（token, 专家）对发送的实现成立。若同一个 token 发往同一张卡只发一份"
                 "（DeepEP 的常规（normal）dispatch 就按目标 rank 发，跨节点先按目标节点发一份、再经 NVLink 转发；它的低延迟内核仍按"
                 "（token, 专家）对发），每个 token 发出的 hidden 向量份数（路由均匀时的期望）："
                 "Mixtral（{=8} 个专家、top-{=2}、EP {=8}，每卡一个专家）按对发是 {pairs.mixtral_ep8:.3f}，去重后仍是 "
                 "{dedup.mixtral_ep8:.3f}；DeepSeek-V3（{=256} 个专家、top-{=8}）EP {=8} 时每卡 {=32} 个专家，按对发 "
                 "{pairs.dsv3_ep8:.3f}、去重后 {dedup.dsv3_ep8:.3f}，EP {=64} 时每卡 {=4} 个，{pairs.dsv3_ep64:.3f} 对 "
                 "{dedup.dsv3_ep64:.3f}。拿 {=200000} 个 token 随机抽不重复的 top-k 数一遍（固定种子），去重后的份数是 "
                 "{mc.mixtral_ep8:.3f}、{mc.dsv3_ep8:.3f}、{mc.dsv3_ep64:.3f}，与上面的期望最多差 {mc_max_dev:pct}。"
                 "去重后的字节取决于每张卡放几个专家，也就和专家总数、EP 度有关。",
       expect={"pairs": {"mixtral_ep8": 1.75, "dsv3_ep8": 7.0, "dsv3_ep64": 7.875}, "mixtral_no_saving": True,
               "dedup_dsv3_ep8": {"approx": [4.63282, 1e-5]}, "dedup_dsv3_ep64": {"approx": [7.55582, 1e-5]},
               "mc_mixtral_ep8": {"approx": [1.75, 0.01]}, "mc_dsv3_ep8": {"approx": [4.63282, 0.01]},
               "mc_dsv3_ep64": {"approx": [7.55582, 0.01]}, "mc_max_dev": {"<": 0.01}})
def _(ctx):
    """范围：均匀不重复的 top-k，Mixtral、DeepSeek-V3"""
    cases = {"mixtral_ep8": (8, 2, 8), "dsv3_ep8": (256, 8, 8), "dsv3_ep64": (256, 8, 64)}
    pairs = {name: k * (ep - 1) / ep for name, (e, k, ep) in cases.items()}
    dedup = {name: _remote_ranks(e, k, ep) for name, (e, k, ep) in cases.items()}
    mc = {name: _sampled_remote_ranks(e, k, ep) for name, (e, k, ep) in cases.items()}
    return {"pairs": pairs, "dedup": dedup, "dedup_dsv3_ep8": dedup["dsv3_ep8"], "dedup_dsv3_ep64": dedup["dsv3_ep64"],
            "mc": mc, **{f"mc_{name}": v for name, v in mc.items()},
            "mc_max_dev": max(abs(mc[name] / dedup[name] - 1) for name in cases),
            "mixtral_no_saving": abs(dedup["mixtral_ep8"] - pairs["mixtral_ep8"]) < 1e-12}


def _sampled_remote_ranks(e, k, ep, tokens=200_000, chunk=25_000):
    """The same count by sampling: each token on rank 0 draws k distinct experts uniformly
    (``torch.rand(T, E).topk(k)``, fixed generator); expert i lives on rank i // (e / ep)."""
    gen = torch.Generator().manual_seed(0)
    per, total = e // ep, 0
    for start in range(0, tokens, chunk):
        experts = torch.rand(min(chunk, tokens - start), e, generator=gen).topk(k, dim=1).indices
        hit = torch.zeros(experts.shape[0], ep, dtype=torch.bool)
        hit.scatter_(1, experts // per, True)
        total += int(hit[:, 1:].sum())
    return total / tokens
