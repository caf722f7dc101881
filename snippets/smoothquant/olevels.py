"""SmoothQuant's three efficiency levels (paper, Table 2): all with per-tensor weights; activations per token
dynamic (O1), per tensor dynamic (O2), per tensor static (O3). Their error, and the epilogue each needs."""

import torch

from snippets.smoothquant._data import (CHANNELS, OUTLIER_SCALE, QMAX, TOKENS, activations, fake, quantize, rel_error,
                                        smooth_scales, weight)
from verify.claim import claim

Q = "smoothquant"
ALPHA = 0.5


def _calibration(idx):
    """Another batch with the same outlier channels: what smoothing factors and static scales are computed from."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(TOKENS, CHANNELS, generator=g, dtype=torch.float64)
    x[:, idx] *= OUTLIER_SCALE
    return x


def _setup():
    x, idx = activations()
    w = weight()
    calib = _calibration(idx)
    s = smooth_scales(calib, w, ALPHA)
    static_scale = (calib / s).abs().amax() / QMAX        # O3: fixed offline from the calibration batch
    return x, w, s, static_scale


def _static(t, scale):
    return (t / scale).round().clamp(-QMAX, QMAX), scale


@claim("sq.o-levels", question=Q,
       statement="论文把 SmoothQuant 分成三档，权重都按整个张量量化：O1 激活按 token 动态量化，O2 按整个张量动态量化，O3 按"
                 "整个张量、用校准时定下的静态 scale。同一个平滑后的层（α = {=0.5}，平滑因子和静态 scale 都来自另一批校准数据）："
                 "输出误差 O1 {o1:pct}、O2 {o2:pct}、O3 {o3:pct}，越往后越省、误差越大；O3 的静态 scale 比这批数据现算的小 "
                 "{static_short:pct}，这批数据里 {clipped:pct} 的激活被截断（换一批数据可能一个也不截）。",
       expect={"ordered": True, "naive_worst": True, "per_channel_w_better": True})
def _(ctx):
    x, w, s, static_scale = _setup()
    xs, ws = x / s, w * s
    y = x @ w.T
    wq = fake(ws, None)
    o1 = rel_error(fake(xs, -1) @ wq.T, y)
    o2 = rel_error(fake(xs, None) @ wq.T, y)
    q3, sc3 = _static(xs, static_scale)
    o3 = rel_error(q3 * sc3 @ wq.T, y)
    dynamic_scale = xs.abs().amax() / QMAX
    naive = rel_error(fake(x, None) @ fake(w, None).T, y)
    o1_pc = rel_error(fake(xs, -1) @ fake(ws, -1).T, y)
    return {"o1": o1, "o2": o2, "o3": o3, "naive": naive, "o1_per_channel_w": o1_pc,
            "static_short": (1 - static_scale / dynamic_scale).item(),
            "clipped": ((xs / static_scale).abs() > QMAX).double().mean().item(),
            "ordered": o1 < o2 < o3, "naive_worst": naive > o3, "per_channel_w_better": o1_pc < o1}


@claim("sq.o-levels-epilogue", kind="measured", question=Q,
       statement="三档都是一次 int8 GEMM（`torch._int_mm`，int32 累加）加一个收尾缩放，与先反量化再做 float64 矩阵乘的最大相对差"
                 "是 {max_rel:.1e}。区别在收尾要几个 scale、什么时候算出来：O1 每行乘自己的 `s_x[i]`（{o1_scales} 个 token 各一个），"
                 "要在 GEMM 之前逐 token 求一次 absmax；O2 只乘一个标量 `s_x·s_w`，但这个标量要先对整个激活做一次"
                 "全局 absmax；O3 的标量离线就定了，可以直接当 GEMM 的 alpha。按输出通道的权重 scale 只是再乘一个列向量；每 "
                 "{=128} 个输入通道一组的 scale 则落在求和维上，一次 GEMM 装不下，要拆成 {groups} 段部分和。",
       expect={"max_rel": {"<": 1e-12}, "o1_scales": 256, "groups": 4})
def _(ctx):
    x, w, s, static_scale = _setup()
    xs, ws = x / s, w * s
    wq, sw = quantize(ws, None)                           # per-tensor weight: one scale
    w8 = wq.to(torch.int8).t().contiguous()
    levels = {"o1": quantize(xs, -1), "o2": quantize(xs, None), "o3": _static(xs, static_scale)}
    worst = 0.0
    for xq, sx in levels.values():
        acc = torch._int_mm(xq.to(torch.int8), w8)        # exact: int32 accumulation
        y = acc.double() * (sx * sw)                       # the epilogue: a (tokens, 1) column or a scalar
        ref = (xq * sx) @ (wq * sw).T
        worst = max(worst, ((y - ref).abs().max() / ref.abs().max()).item())
    return {"max_rel": worst, "o1_scales": levels["o1"][1].numel(), "o2_scales": levels["o2"][1].numel(),
            "groups": CHANNELS // 128}
