"""A 3×3 convolution, a 1×1 and a depthwise 3×3 against the H100's ridge point: FLOPs over the bytes
each must move at least (read the input and the weights once, write the output once), BF16.

Spec arithmetic, not a measurement: the shapes are given (the interview's layer, batch 32) and the
GPU's rates come from ``snippets._gpu.specs``."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "conv-cost-and-algorithms"
GPU = "H100 SXM"
N, C_IN, H, W, C_OUT, K = 32, 64, 64, 128, 128, 3
BF16 = 2


def _layers():
    """(FLOPs, minimum bytes) of each layer of the batch."""
    hw = H * W
    return {
        "dense": (2 * N * C_IN * K * K * C_OUT * hw, (N * C_IN * hw + C_IN * K * K * C_OUT + N * C_OUT * hw) * BF16),
        "pointwise": (2 * N * C_IN * C_OUT * hw, (N * C_IN * hw + C_IN * C_OUT + N * C_OUT * hw) * BF16),
        "depthwise": (2 * N * C_IN * K * K * hw, (N * C_IN * hw + C_IN * K * K + N * C_IN * hw) * BF16),
    }


@claim("conv.intensity-vs-ridge", question=Q,
       statement="按 H100 SXM 的规格（BF16 稠密 {peak_tflops:.1f} TFLOP/s、HBM {hbm_tb_s:.2f} TB/s），拐点是 {ridge:.0f} FLOP/字节。"
                 "面试里那一层（batch {=32}、BF16，每个字节只搬一次的理想情况）的算术强度是 {ai.dense:.0f}，在拐点之上，"
                 "是计算受限的；同样输入输出的 1×1 卷积只有 {ai.pointwise:.1f}，depthwise 3×3 只有 {ai.depthwise:.2f}，"
                 "都在带宽受限的一侧。",
       expect={"dense_above_ridge": True, "pointwise_below": True, "depthwise_below": True})
def _(ctx):
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    ridge = peak / bw
    ai = {name: f / b for name, (f, b) in _layers().items()}
    return {"peak_tflops": peak / 1e12, "hbm_tb_s": bw / 1e12, "ridge": ridge, "ai": ai,
            "dense_above_ridge": ai["dense"] > ridge, "pointwise_below": ai["pointwise"] < ridge,
            "depthwise_below": ai["depthwise"] < ridge / 10}


@claim("conv.separable-time-bound", question=Q,
       statement="于是 FLOP 少不等于快。同一批数据在 H100 SXM 上的时间下界（算力下界与带宽下界取大）：普通 3×3 卷积 "
                 "{t_us.dense:.1f} µs；深度可分离写成两个 kernel（中间结果写回 HBM 再读）是 {t_us.separable:.1f} µs，"
                 "FLOP 只有前者的 {flop_ratio:.3f}，下界反而{separable_slower:?更长|更短}；就算融合成一个 kernel、中间结果不出片上，"
                 "下界也只降到 {t_us.fused:.1f} µs，比普通卷积快 {fused_speedup:.2f} 倍，远不到 FLOP 之比。",
       expect={"separable_slower": True, "fused_speedup": {"between": [1.0, 2.0]}})
def _(ctx):
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    layers = _layers()

    def bound(flops, nbytes):
        return max(flops / peak, nbytes / bw) * 1e6

    f_dense, b_dense = layers["dense"]
    f_dw, b_dw = layers["depthwise"]
    f_pw, b_pw = layers["pointwise"]
    t = {"dense": bound(f_dense, b_dense), "separable": bound(f_dw, b_dw) + bound(f_pw, b_pw)}
    fused_bytes = (N * C_IN * H * W + C_IN * K * K + C_IN * C_OUT + N * C_OUT * H * W) * BF16
    t["fused"] = bound(f_dw + f_pw, fused_bytes)
    return {"t_us": t, "flop_ratio": (f_dw + f_pw) / f_dense, "separable_slower": t["separable"] > t["dense"],
            "fused_speedup": t["dense"] / t["fused"]}
