"""Which side of the H100's ridge a 1×1 convolution falls on depends on its channels: the same batch
and image size with 64→128 channels and with 512→2048 channels, BF16.

Spec arithmetic, not a measurement: the shapes are given and the GPU's rates come from
``snippets._gpu.specs``."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "conv-cost-and-algorithms"
GPU = "H100 SXM"
N, H, W = 32, 64, 128
BF16 = 2
SHAPES = {"narrow": (64, 128), "wide": (512, 2048)}


def _pointwise(c_in, c_out):
    """(FLOPs, minimum bytes) of a 1×1 conv over the batch: read input and weights once, write output once."""
    p = N * H * W
    return 2 * p * c_in * c_out, (p * c_in + c_in * c_out + p * c_out) * BF16


@claim("conv.pointwise-intensity-sweep", question=Q,
       statement="1×1 卷积在拐点哪一侧，看通道数。同样 batch {=32}、{=64×128} 的图、BF16、每个字节只搬一次，按 H100 SXM 的"
                 "规格（拐点 {ridge:.0f} FLOP/字节）：{=64}→{=128} 通道的算术强度是 {ai.narrow:.1f}，在拐点之下，带宽受限；"
                 "{=512}→{=2048} 通道（ResNet-50 瓶颈块里扩张的那个 1×1）是 {ai.wide:.0f}，在拐点之上，计算受限。"
                 "权重相对激活可以忽略时，强度约为 C_in·C_out/(C_in + C_out)（两种形状分别是 {approx.narrow:.1f} 和 "
                 "{approx.wide:.0f}），通道越宽越靠计算受限。",
       expect={"narrow_below": True, "wide_above": True, "approx_holds": True})
def _(ctx):
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    ridge = peak / bw
    ai = {name: f / b for name, (f, b) in ((k, _pointwise(*s)) for k, s in SHAPES.items())}
    approx = {name: c_in * c_out / (c_in + c_out) for name, (c_in, c_out) in SHAPES.items()}
    return {"ridge": ridge, "ai": ai, "approx": approx, "narrow_below": ai["narrow"] < ridge,
            "wide_above": ai["wide"] > ridge,
            "approx_holds": all(abs(ai[k] / approx[k] - 1) < 0.01 for k in SHAPES)}
