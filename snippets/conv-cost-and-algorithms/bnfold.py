"""Folding an eval-mode BatchNorm into the convolution before it: W' = W·γ/√(σ²+ε), b' = (b − μ)·γ/√(σ²+ε) + β."""

from __future__ import annotations

import torch
from torch import nn
from torch.ao.quantization import fuse_modules
from torch.nn.utils.fusion import fuse_conv_bn_eval

from verify.claim import claim

Q = "conv-cost-and-algorithms"


def _trained_pair():
    """A conv without bias and a BN whose running statistics and affine parameters are not the defaults."""
    conv, bn = nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32)
    with torch.no_grad():
        for _ in range(5):
            bn(conv(torch.randn(8, 16, 16, 16) * 3 + 1))  # train mode: updates running_mean / running_var
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1.0, 1.0)
    return conv.eval(), bn.eval()


def _fold(conv, bn):
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    return conv.weight * scale.view(-1, 1, 1, 1), (bias - bn.running_mean) * scale + bn.bias


@claim("conv.bn-fold-eval", kind="measured", question=Q,
       statement="eval 模式下 BN 是逐通道的仿射变换，可以并进前面的卷积：W' = W·γ/√(σ²+ε)，b' = (b − μ)·γ/√(σ²+ε) + β。"
                 "手写折叠后的单个卷积与 conv→BN 的最大差 {err_manual:.1e}（输出最大绝对值 {out_max:.2f}），"
                 "`torch.nn.utils.fusion.fuse_conv_bn_eval` 给出的是 {err_torch:.1e}；原卷积 `bias=False`，折叠后"
                 "{has_bias:?多出了|仍没有} bias。`torch.ao.quantization.fuse_modules` 对 eval 模式的 `Sequential(conv, bn)` 做同样的事，"
                 "BN 的位置换成了 {bn_slot}，输出的最大差 {err_fuse_modules:.1e}。",
       expect={"err_manual": {"<": 1e-4}, "err_torch": {"<": 1e-4}, "has_bias": True, "bn_slot": "Identity",
               "err_fuse_modules": {"<": 1e-4}})
def _(ctx):
    conv, bn = _trained_pair()
    x = torch.randn(4, 16, 16, 16)
    with torch.no_grad():
        ref = bn(conv(x))
        w, b = _fold(conv, bn)
        manual = torch.nn.functional.conv2d(x, w, b, padding=1)
        fused = fuse_conv_bn_eval(conv, bn)
        via_torch = fused(x)
        seq = fuse_modules(nn.Sequential(conv, bn).eval(), [["0", "1"]])
        via_fuse_modules = seq(x)
    return {"err_manual": (manual - ref).abs().max().item(), "err_torch": (via_torch - ref).abs().max().item(),
            "out_max": ref.abs().max().item(), "has_bias": fused.bias is not None, "bn_slot": type(seq[1]).__name__,
            "err_fuse_modules": (via_fuse_modules - ref).abs().max().item()}


@claim("conv.bn-fold-train", kind="measured", question=Q,
       statement="训练模式不能这样折叠：BN 用的是当前 batch 的均值方差，不是 running 统计量，同一个输入下折叠结果与 conv→BN "
                 "的最大差 {err_train:.2f}；`fuse_conv_bn_eval` 在训练模式下直接 AssertionError（{message}）。",
       expect={"err_train": {">": 0.1}, "message": "Fusion only for eval!"})
def _(ctx):
    conv, bn = _trained_pair()
    x = torch.randn(4, 16, 16, 16)
    with torch.no_grad():
        w, b = _fold(conv, bn)
        folded = torch.nn.functional.conv2d(x, w, b, padding=1)
        bn.train()
        err = (bn(conv(x)) - folded).abs().max().item()
    try:
        fuse_conv_bn_eval(conv.train(), bn)
        message = ""
    except AssertionError as exc:
        message = str(exc)
    return {"err_train": err, "message": message}
