"""Why activations are hard to quantize: outlier channels, and what per-tensor and per-token int8 do with them."""

import torch

from snippets.smoothquant._data import (CHANNELS, OUTLIER_SCALE, OUTLIERS, TOKENS, activations, fake, quantize, rel_error,
                                        weight)
from verify.claim import claim

Q = "smoothquant"


def _normal_mask(idx):
    mask = torch.ones(CHANNELS, dtype=torch.bool)
    mask[idx] = False
    return mask


@claim("sq.per-tensor-levels", kind="measured", question=Q,
       statement="合成的激活有 {tokens} 个 token、{channels} 个通道，其中 {outliers} 个通道整体放大了 {outlier_scale:x}，"
                 "最大通道与中位通道的幅值比是 {channel_ratio:.0f}。对整个张量取一个 int8 scale，scale 由离群通道决定"
                 "（absmax 为 {absmax:.0f}，正常通道最大只有 {normal_absmax:.1f}）：正常通道的值只落在 {levels} 个整数格点上，"
                 "把正常通道单独量化能用上 {levels_alone} 个；正常通道的量化相对误差，单独量化时是 {err_alone:pct}，和离群通道共用一个 scale 时是 {err_normal:pct}。",
       expect={"tokens": 256, "channels": 512, "outliers": 4, "levels": {"<": 16}, "levels_alone": {">": 128},
               "err_normal": {">": 0.3}, "err_alone": {"<": 0.02}})
def _(ctx):
    x, idx = activations()
    normal = _normal_mask(idx)
    q, _ = quantize(x, None)
    xn = x[:, normal]
    per_channel_max = x.abs().amax(dim=0)
    return {"tokens": TOKENS, "channels": CHANNELS, "outliers": OUTLIERS, "outlier_scale": OUTLIER_SCALE,
            "channel_ratio": (per_channel_max.max() / per_channel_max.median()).item(),
            "absmax": x.abs().max().item(), "normal_absmax": xn.abs().max().item(),
            "levels": q[:, normal].unique().numel(), "levels_alone": quantize(xn, None)[0].unique().numel(),
            "err_normal": rel_error(fake(x, None)[:, normal], xn), "err_alone": rel_error(fake(xn, None), xn)}


@claim("sq.weights-easy", kind="measured", question=Q,
       statement="同一个线性层 `Y = X Wᵀ`（`W` 是 {w_shape} 的普通高斯矩阵）：只把权重按输出通道量化成 int8，"
                 "输出的相对误差是 {w_only:pct}；只把激活按整个张量量化成 int8，误差是 {a_per_tensor:pct}，是前者的 {ratio:x}。",
       expect={"w_shape": [512, 512], "ratio": {">": 5}})
def _(ctx):
    x, _ = activations()
    w = weight()
    y = x @ w.T
    w_only = rel_error(x @ fake(w, -1).T, y)
    a_tensor = rel_error(fake(x, None) @ w.T, y)
    return {"w_shape": list(w.shape), "w_only": w_only, "a_per_tensor": a_tensor, "ratio": a_tensor / w_only}


@claim("sq.per-token-not-enough", kind="measured", question=Q,
       statement="换成 per-token（每个 token 一个 scale）也救不了：离群值按通道出现，{share:pct} 的 token 的最大值都落在那 "
                 "{outliers} 个离群通道里，每一行的 scale 仍由离群值决定，输出误差只从 {a_per_tensor:pct} 降到 {a_per_token:pct}，"
                 "仍是只量化权重时的 {vs_weight:x}。如果能按输入通道给激活各取一个 scale，误差是 {a_per_channel:pct}，和权重一个量级。",
       expect={"share": 1.0, "outliers": 4, "vs_weight": {">": 3}, "per_channel_vs_weight": {"<": 2}})
def _(ctx):
    x, idx = activations()
    w = weight()
    y = x @ w.T
    w_only = rel_error(x @ fake(w, -1).T, y)
    a_token = rel_error(fake(x, -1) @ w.T, y)
    a_channel = rel_error(fake(x, 0) @ w.T, y)
    share = torch.isin(x.abs().argmax(dim=1), idx).double().mean().item()
    return {"share": share, "outliers": OUTLIERS, "a_per_tensor": rel_error(fake(x, None) @ w.T, y),
            "a_per_token": a_token, "a_per_channel": a_channel, "w_only": w_only,
            "vs_weight": a_token / w_only, "per_channel_vs_weight": a_channel / w_only}
