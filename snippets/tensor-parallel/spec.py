"""How the share of communication in a tensor-parallel layer grows with the TP degree t.

Spec arithmetic, not a measurement. The layer's shape is a given input (hidden 8192, sequence 4096, one
sequence per microbatch, BF16); NVLink bandwidth and the BF16 Tensor Core rate of an H100 SXM come from
``snippets._gpu.specs``. A layer does 4 all-reduces of its (s, b, h) activation (2 forward, 2 backward);
in a ring each GPU sends 2(t-1)/t of the tensor, which does not shrink with t, while each GPU's share of
the layer's FLOPs (72bsh² + 12bs²h forward and backward, Megatron-LM's count) is 1/t.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "tensor-parallel"

HIDDEN, SEQ, MICRO, BF16 = 8192, 4096, 1, 2
DEGREES = (2, 4, 8)
GPU = "H100 SXM"


@claim("tp.comm-share-vs-degree", question=Q,
       statement="按 h={=8192}、s={=4096}、每个微批 {=1} 条序列、BF16 的一层，H100 SXM（NVLink 每方向 {nvlink_gb_s:.0f} GB/s，"
                 "BF16 稠密峰值，不做重计算）：TP = {=2}、{=4}、{=8} 时，按环形 all-reduce，每张卡为这一层的 {=4} 次 all-reduce 要发 {sent.2:bytes}、"
                 "{sent.4:bytes}、{sent.8:bytes}，在 NVLink 上是 {comm_ms.2:.2f}、{comm_ms.4:.2f}、{comm_ms.8:.2f} ms；"
                 "每张卡的计算却是 {compute_ms.2:.1f}、{compute_ms.4:.1f}、{compute_ms.8:.1f} ms，通信与计算之比从 "
                 "{share.2:pct} 涨到 {share.4:pct}、{share.8:pct}。",
       expect={"grows": True, "sent_bound": True})
def _(ctx):
    nvlink = specs.get(ctx, GPU, "nvlink_bytes_per_s") / 2  # the table gives both directions together
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    act = SEQ * MICRO * HIDDEN * BF16
    flops = 72 * MICRO * SEQ * HIDDEN**2 + 12 * MICRO * SEQ**2 * HIDDEN
    out = {"nvlink_gb_s": nvlink / 1e9, "sent": {}, "comm_ms": {}, "compute_ms": {}, "share": {}}
    for t in DEGREES:
        sent = 4 * 2 * (t - 1) / t * act
        out["sent"][str(t)] = sent
        out["comm_ms"][str(t)] = sent / nvlink * 1e3
        out["compute_ms"][str(t)] = flops / t / peak * 1e3
        out["share"][str(t)] = out["comm_ms"][str(t)] / out["compute_ms"][str(t)]
    shares = [out["share"][str(t)] for t in DEGREES]
    out["grows"] = shares == sorted(shares)
    out["sent_bound"] = all(s < 8 * act for s in out["sent"].values())  # never more than 4 all-reduces of 2S
    return out
