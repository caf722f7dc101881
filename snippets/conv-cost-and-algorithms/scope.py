"""Which side of the H100's ridge a 1×1 convolution falls on depends on its channels and on N·H·W:
the same batch and image size with 64→128 and with 512→2048 channels, and 512→2048 at ResNet-50's
stage-4 resolution with batch 1, BF16; and how large the coefficients of the Winograd transforms get
from F(2,3) to F(4,3).

The 1×1 part is spec arithmetic, not a measurement: the shapes are given and the GPU's rates come
from ``snippets._gpu.specs``."""

from __future__ import annotations

import random

from snippets import _sibling as sibling
from snippets._gpu import specs
from verify.claim import claim

Q = "conv-cost-and-algorithms"
GPU = "H100 SXM"
BF16 = 2
# name: (C_in, C_out, N, H, W)
SHAPES = {"narrow": (64, 128, 32, 64, 128), "wide": (512, 2048, 32, 64, 128), "small": (512, 2048, 1, 7, 7)}


def _pointwise(c_in, c_out, n, h, w):
    """(FLOPs, minimum bytes) of a 1×1 conv over the batch: read input and weights once, write output once."""
    p = n * h * w
    return 2 * p * c_in * c_out, (p * c_in + c_in * c_out + p * c_out) * BF16


@claim("conv.pointwise-intensity-sweep", question=Q,
       statement="1×1 卷积在拐点哪一侧，看通道数，也看 N·H·W。BF16、每个字节只搬一次，按 H100 SXM 的规格（拐点 {ridge:.0f} "
                 "FLOP/字节）：batch {=32}、{=64×128} 的图上，{=64}→{=128} 通道的算术强度是 {ai.narrow:.1f}，在拐点之下，带宽受限；"
                 "{=512}→{=2048} 通道（ResNet-50 第四段扩张 1×1 的通道数，这里的分辨率和 batch 不是它的）是 {ai.wide:.0f}，在拐点"
                 "之上，计算受限。同样 {=512}→{=2048}，换成 ResNet-50 第四段实际的 {=7×7}、batch {=1}，权重（{w_bytes:bytes}）比输入加输出（{act_bytes:bytes}）还大，强度只有 "
                 "{ai.small:.0f}，又回到拐点之下。BF16 下强度正好是 1/(1/C_in + 1/C_out + 1/(N·H·W))（三个形状按它算与按字节数算"
                 "{formula_holds:?相同|不同}），比三者中最小的一个还小：通道窄或 N·H·W 小，都落在拐点之下。",
       expect={"narrow_below": True, "wide_above": True, "small_below": True, "formula_holds": True,
               "small_weights_dominate": True})
def _(ctx):
    """范围：H100 SXM 规格，三个 1×1 形状"""
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    ridge = peak / bw
    ai = {name: f / b for name, (f, b) in ((k, _pointwise(*s)) for k, s in SHAPES.items())}
    c_in, c_out, n, h, w = SHAPES["small"]
    w_bytes, act_bytes = c_in * c_out * BF16, n * h * w * (c_in + c_out) * BF16
    formula = {name: 1 / (1 / c_in + 1 / c_out + 1 / (n * h * w)) for name, (c_in, c_out, n, h, w) in SHAPES.items()}
    return {"ridge": ridge, "ai": ai, "formula": formula, "narrow_below": ai["narrow"] < ridge,
            "wide_above": ai["wide"] > ridge, "small_below": ai["small"] < ridge,
            "formula_holds": all(abs(ai[k] / formula[k] - 1) < 1e-9 for k in SHAPES),
            "w_bytes": w_bytes, "act_bytes": act_bytes, "small_weights_dominate": w_bytes > act_bytes}


def _matvec(mat, vec):
    return [sum(m * v for m, v in zip(row, vec)) for row in mat]


def _computes_correlation(bt, g, at, trials=20):
    """Whether y = Aᵀ[(G g) ⊙ (Bᵀ d)] equals the direct 3-tap correlation on random inputs (float64)."""
    rng = random.Random(0)
    m, a = len(at), len(bt)
    for _ in range(trials):
        d = [rng.uniform(-1, 1) for _ in range(a)]
        w = [rng.uniform(-1, 1) for _ in range(3)]
        y = _matvec(at, [u * v for u, v in zip(_matvec(g, w), _matvec(bt, d))])
        if any(abs(y[i] - sum(d[i + k] * w[k] for k in range(3))) > 1e-12 for i in range(m)):
            return False
    return True


def _abs_entries(mat):
    """The distinct absolute values of a matrix's non-zero entries, smallest first."""
    return sorted({abs(v) for row in mat for v in row if v})


def _fmt(vals):
    return "、".join(f"1/{round(1 / v)}" if v < 1 else f"{v:g}" for v in vals)


@claim("conv.winograd-coefficients", question=Q,
       statement="变换矩阵的系数随 tile 变大（Lavin 和 Gray 的标准矩阵，插值点 0、±1、±2、∞）：F(2,3) 的 Bᵀ、Aᵀ 里非零元素的"
                 "绝对值只有 {f2_data}，G 里是 {f2_filter}；F(4,3) 的 Bᵀ 里是 {f4_bt}，Aᵀ 里是 {f4_at}，G 里是 {f4_g}。"
                 "两组矩阵在随机输入上都{both_correct:?算对了|没算对} 3 抽头的互相关；二维 F(2×2,3×3)、F(4×4,3×3) 把同一组矩阵用在行和列上。",
       expect={"f2_data_max": 1, "f4_bt_max": 5, "f4_at_max": 8, "f4_g_min": {"approx": [1 / 24, 1e-12]},
               "both_correct": True})
def _(ctx):
    """范围：F(2,3) 与 F(4,3) 的标准变换矩阵"""
    w = sibling.load(ctx.snippet_dir() / "algorithms.py")  # the matrices the winograd claims use
    f2_data = _abs_entries(w.BT2 + w.AT2)
    f4_bt, f4_at, f4_g = _abs_entries(w.BT4), _abs_entries(w.AT4), _abs_entries(w.G4)
    return {"f2_data": _fmt(f2_data), "f2_filter": _fmt(_abs_entries(w.G2)), "f4_bt": _fmt(f4_bt), "f4_at": _fmt(f4_at),
            "f4_g": _fmt(f4_g), "f2_data_max": max(f2_data), "f4_bt_max": max(f4_bt), "f4_at_max": max(f4_at),
            "f4_g_min": min(f4_g),
            "both_correct": _computes_correlation(w.BT2, w.G2, w.AT2) and _computes_correlation(w.BT4, w.G4, w.AT4)}
