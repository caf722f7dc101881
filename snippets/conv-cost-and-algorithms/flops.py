"""Counting a convolution: parameters, FLOPs from ``torch.utils.flop_counter.FlopCounterMode`` against
the formula, the MAC/FLOP factor of 2, output sizes, the backward's FLOPs, and where the FLOPs of a
depthwise-separable block go."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from verify.claim import claim

Q = "conv-cost-and-algorithms"
# The interview's case: input [C, H, W] = [64, 64, 128], 3×3, stride 1, padding 1, 128 output channels.
C_IN, H, W, C_OUT, K = 64, 64, 128, 128, 3


def _flops(fn, *args):
    with FlopCounterMode(display=False) as counter:
        fn(*args)
    return counter.get_total_flops()


def _params(module):
    return sum(p.numel() for p in module.parameters())


@claim("conv.interview-count", question=Q,
       statement="输入 {=[64, 64, 128]}（C×H×W）、{=3×3} 卷积、stride {=1}、padding {=1}、输出 {=128} 个通道：输出形状是 "
                 "{out_shape}；权重 {weight:,d} 个参数（3·3·64·128），bias {bias} 个，共 {params:,d} 个。`FlopCounterMode` "
                 "数出一张图 {flops:,d} FLOP，与公式 2·C_in·K_h·K_w·C_out·H_out·W_out {matches:?相等|不相等}；"
                 "去掉 bias 再数，结果{same_without_bias:?不变|变了}：它不计 bias 的加法。",
       expect={"out_shape": [128, 64, 128], "weight": 73728, "bias": 128, "params": 73856, "flops": 1207959552,
               "matches": True, "same_without_bias": True})
def _(ctx):
    conv = nn.Conv2d(C_IN, C_OUT, K, stride=1, padding=1)
    x = torch.randn(1, C_IN, H, W)
    with torch.no_grad():
        out = conv(x)
        flops = _flops(conv, x)
        flops_nb = _flops(nn.Conv2d(C_IN, C_OUT, K, padding=1, bias=False), x)
    formula = 2 * C_IN * K * K * C_OUT * out.shape[2] * out.shape[3]
    return {"out_shape": list(out.shape[1:]), "weight": conv.weight.numel(), "bias": conv.bias.numel(),
            "params": _params(conv), "flops": flops, "formula": formula, "matches": flops == formula,
            "same_without_bias": flops_nb == flops}


@claim("conv.mac-vs-flop", question=Q,
       statement="“参数量乘输出尺寸”数的是乘加（MAC）：{params:,d}·64·128 = {params_times_hw:,d}，正好是 "
                 "{macs:,d} 次乘加加上每个输出一次 bias 加法（{bias_adds:,d} 次）；`FlopCounterMode` 把一次乘加记作 2 次浮点运算，"
                 "是它的 {ratio:.3f} 倍。矩阵乘也一样：`Linear({=4096}, {=4096})` 作用在 {=8} 个 token 上记 {linear_flops:,d}"
                 "，即 2·M·N·K。",
       expect={"params_times_hw": 73856 * 64 * 128, "macs": 64 * 9 * 128 * 64 * 128, "bias_adds": 128 * 64 * 128,
               "linear_flops": 2 * 8 * 4096 * 4096, "ratio": {"approx": [2.0, 0.01]}})
def _(ctx):
    conv = nn.Conv2d(C_IN, C_OUT, K, padding=1)
    x = torch.randn(1, C_IN, H, W)
    with torch.no_grad():
        flops = _flops(conv, x)
        lin = nn.Linear(4096, 4096)
        linear_flops = _flops(lin, torch.randn(8, 4096))
    p = _params(conv)
    macs = C_IN * K * K * C_OUT * H * W
    return {"params": p, "params_times_hw": p * H * W, "macs": macs, "bias_adds": C_OUT * H * W,
            "ratio": flops / (p * H * W), "linear_flops": linear_flops}


@claim("conv.padding-macs", question=Q,
       statement="公式和 `FlopCounterMode` 都把乘在 padding 零上的那部分算进去：同一个例子里真正落在图内像素上的乘加只占 "
                 "{valid_fraction:.1%}（边缘一圈的输出只有部分窗口在图内）；im2col 摊开的矩阵里，另外那 "
                 "{cols_zero_fraction:.1%} 的元素就是补的零，GEMM 照样乘它们，所以估计开销时按公式算。",
       expect={"valid_fraction": {"approx": [(190 * 382) / (9 * 64 * 128), 1e-9]}, "zeros_match": True})
def _(ctx):
    # count, for every output position, how many of the K×K taps land inside the image: a conv of ones
    ones = torch.ones(1, 1, H, W, dtype=torch.float64)
    taps = F.conv2d(ones, torch.ones(1, 1, K, K, dtype=torch.float64), padding=1)
    valid = taps.sum().item() / (K * K * H * W)
    x = torch.rand(1, C_IN, H, W) + 0.5  # no zero inside the image
    cols = F.unfold(x, K, padding=1)
    zeros = (cols == 0).sum().item() / cols.numel()
    return {"valid_fraction": valid, "cols_zero_fraction": zeros, "zeros_match": abs(zeros - (1 - valid)) < 1e-12}


@claim("conv.output-size", question=Q,
       statement="输出尺寸按 `⌊(H + 2p − d·(K−1) − 1) / s⌋ + 1` 算：对 H = {=64}，(K, s, p, d) 取 (3, 1, 1, 1)、(3, 2, 1, 1)、"
                 "(7, 2, 3, 1)、(3, 1, 2, 2)、(1, 1, 0, 1)、(5, 1, 0, 1) 时分别是 {sizes}，与 `F.conv2d` 给出的"
                 "{matches:?全部相同|不全相同}。",
       expect={"sizes": [64, 32, 32, 64, 64, 60], "matches": True})
def _(ctx):
    cases = [(3, 1, 1, 1), (3, 2, 1, 1), (7, 2, 3, 1), (3, 1, 2, 2), (1, 1, 0, 1), (5, 1, 0, 1)]
    x = torch.randn(1, 1, 64, 64)
    sizes, ok = [], True
    for k, s, p, d in cases:
        formula = (64 + 2 * p - d * (k - 1) - 1) // s + 1
        got = F.conv2d(x, torch.randn(1, 1, k, k), stride=s, padding=p, dilation=d).shape[2]
        sizes.append(formula)
        ok &= formula == got
    return {"sizes": sizes, "matches": ok}


@claim("conv.backward-flops", question=Q,
       statement="反向要算对输入的梯度和对权重的梯度，各是一次同样大小的卷积：同一层前向加反向，`FlopCounterMode` "
                 "数出的总量是前向的 {with_input_grad:.1f} 倍；第一层的输入不需要梯度时只算权重梯度，是前向的 "
                 "{weight_only:.1f} 倍。",
       expect={"with_input_grad": 3.0, "weight_only": 2.0})
def _(ctx):
    conv = nn.Conv2d(C_IN, C_OUT, K, padding=1)
    fwd = 2 * C_IN * K * K * C_OUT * H * W
    out = {}
    for name, need in (("with_input_grad", True), ("weight_only", False)):
        x = torch.randn(1, C_IN, H, W, requires_grad=need)
        out[name] = _flops(lambda t: conv(t).sum().backward(), x) / fwd
    return out


@claim("conv.depthwise-separable", question=Q,
       statement="同样的输入输出，换成深度可分离卷积（{=3×3} depthwise、groups={=64}，接 {=1×1} pointwise）：参数从 "
                 "{dense_params:,d} 降到 {sep_params:,d}（depthwise {dw_params}、pointwise {pw_params:,d}），FLOP 从 "
                 "{dense_flops:,d} 降到 {sep_flops:,d}，都是原来的 {ratio:.4f}，即 1/C_out + 1/K² = {formula:.4f}。"
                 "groups={=4} 的分组卷积则正好是 1/4（{grouped_ratio:.2f}）。",
       expect={"dense_params": 73728, "sep_params": 576 + 8192, "dw_params": 576, "pw_params": 8192,
               "dense_flops": 1207959552, "sep_flops": 9437184 + 134217728,
               "ratio": {"approx": [1 / 128 + 1 / 9, 1e-9]}, "grouped_ratio": 0.25})
def _(ctx):
    x = torch.randn(1, C_IN, H, W)
    dense = nn.Conv2d(C_IN, C_OUT, K, padding=1, bias=False)
    dw = nn.Conv2d(C_IN, C_IN, K, padding=1, groups=C_IN, bias=False)
    pw = nn.Conv2d(C_IN, C_OUT, 1, bias=False)
    grouped = nn.Conv2d(C_IN, C_OUT, K, padding=1, groups=4, bias=False)
    with torch.no_grad():
        fd, fdw, fpw, fg = _flops(dense, x), _flops(dw, x), _flops(pw, x), _flops(grouped, x)
    sep_p = _params(dw) + _params(pw)
    return {"dense_params": _params(dense), "sep_params": sep_p, "dw_params": _params(dw), "pw_params": _params(pw),
            "dense_flops": fd, "sep_flops": fdw + fpw, "ratio": (fdw + fpw) / fd, "formula": 1 / C_OUT + 1 / K**2,
            "grouped_ratio": fg / fd, "param_ratio": sep_p / _params(dense)}


@claim("conv.pointwise-dominates", kind="measured", question=Q,
       statement="1×1 卷积就是一个矩阵乘：把 {=[64, 64·128]} 的输入当矩阵，与 `weight.view(128, 64)` 相乘，结果与 "
                 "`conv2d` 的最大差 {max_diff:.2g}；它的 FLOP 是 2·C_in·C_out·H·W = {pw_flops:,d}。在上面的深度可分离块里，"
                 "1×1 这一半占了 {pw_share:pct} 的 FLOP，depthwise 只占 {dw_share:pct}。",
       expect={"max_diff": {"<": 1e-4}, "pw_flops": 134217728, "pw_share": {"approx": [134217728 / 143654912, 1e-9]}})
def _(ctx):
    x = torch.randn(1, C_IN, H, W)
    pw = nn.Conv2d(C_IN, C_OUT, 1, bias=False)
    dw = nn.Conv2d(C_IN, C_IN, K, padding=1, groups=C_IN, bias=False)
    with torch.no_grad():
        ref = pw(x)
        mm = (pw.weight.view(C_OUT, C_IN) @ x.view(C_IN, H * W)).view(1, C_OUT, H, W)
        fpw, fdw = _flops(pw, x), _flops(dw, x)
    return {"max_diff": (mm - ref).abs().max().item(), "pw_flops": fpw, "pw_share": fpw / (fpw + fdw),
            "dw_share": fdw / (fpw + fdw)}
