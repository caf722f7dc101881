"""LayerNorm and RMSNorm: what RMSNorm leaves out and when that matters, torch.nn.RMSNorm itself,
what a fused norm kernel saves (bytes that each eager op reads and writes), and Pre-LN against
Post-LN at initialisation."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from snippets._workloads.modes import Mode
from torch.utils._pytree import tree_leaves

from verify.claim import claim

Q = "norm-layers"
D = 256


def _rows(seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, D, generator=g, dtype=dtype)
    return x - x.mean(-1, keepdim=True)  # every row with mean exactly (to rounding) zero


def _ln(t):
    return F.layer_norm(t, (D,), eps=1e-6)


def _rms(t):
    return F.rms_norm(t, (D,), eps=1e-6)


@claim("norm.rms-vs-ln", kind="measured", question=Q,
       statement="RMSNorm 是 x/√(mean(x²)+ε)·γ，不减均值、没有 β。每个 token 的均值为 0 时它和 LayerNorm 是同一个函数"
                 "（{=256} 维、float64，最大差 {zero_mean_diff:.1e}）；均值不为 0 时就不是：给每个 token 加上等于其标准差 "
                 "{=1} 倍的偏移，两者输出的余弦相似度降到 {cos.1:.4f}，偏移 {=3} 倍时是 {cos.3:.4f}，正好是 1/√(1+k²)："
                 "RMSNorm 把偏移原样留在输出里，偏移 {=3} 倍时输出的均值是 {rms_out_mean.3:.3f}，几乎全是那个常数分量。LayerNorm 对整体平移不变（加 {=2} 后最大差 "
                 "{ln_shift:.1e}），RMSNorm 不是（{rms_shift:.2f}）。",
       expect={"zero_mean_diff": {"<": 1e-12}, "cos_1": {"approx": [2 ** -0.5, 1e-9]}, "cos_3": {"approx": [10 ** -0.5, 1e-9]},
               "ln_shift": {"<": 1e-12},
               "rms_shift": {">": 0.5}})
def _(ctx):
    x0 = _rows()
    std = x0.std(-1, unbiased=False, keepdim=True)
    cos, mean = {}, {}
    for k in (1, 3):
        shifted = x0 + k * std
        a, b = _ln(shifted), _rms(shifted)
        cos[str(k)] = F.cosine_similarity(a, b, dim=-1).mean().item()
        mean[str(k)] = b.mean().item()
    return {"zero_mean_diff": (_ln(x0) - _rms(x0)).abs().max().item(), "cos": cos, "rms_out_mean": mean,
            "cos_1": cos["1"], "cos_3": cos["3"],
            "ln_shift": (_ln(x0 + 2) - _ln(x0)).abs().max().item(), "rms_shift": (_rms(x0 + 2) - _rms(x0)).abs().max().item()}


@claim("norm.rmsnorm-module", kind="measured", question=Q, min_torch="2.4",
       statement="`torch.nn.RMSNorm`（torch 2.4 加入）：参数只有 {params}（`LayerNorm` 是 {ln_params}），输出与手写的 "
                 "x·rsqrt(mean(x²) + ε)·γ 最大差 {hand_diff:.1e}。`eps` 默认是 {eps_default}，这时用计算类型的机器 ε"
                 "（fp32 为 {fp32_eps:.3g}），不是 `LayerNorm` 默认的 {ln_eps:g}。激活很小时这个差别看得见：输入缩小到 "
                 "{=1e-4} 倍，默认模块与按机器 ε 手写的结果最大差 {small_default_diff:.1e}，与按 ε = {=1e-6} 手写的差 "
                 "{small_1e6_diff:.2f}。",
       expect={"params": "weight", "ln_params": "weight、bias", "eps_default": None, "hand_diff": {"<": 1e-6},
               "fp32_eps": 2.0 ** -23, "small_default_diff": {"<": 1e-4}, "small_1e6_diff": {">": 0.1}})
def _(ctx):
    rms, ln = nn.RMSNorm(D), nn.LayerNorm(D)
    with torch.no_grad():
        rms.weight.uniform_(0.5, 1.5, generator=torch.Generator().manual_seed(7))
    x = _rows(dtype=torch.float32) + 0.3
    eps = torch.finfo(torch.float32).eps

    def hand(t, e):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + e) * rms.weight

    with torch.no_grad():
        small = x * 1e-4
        out = {"params": "、".join(n for n, _ in rms.named_parameters()),
               "ln_params": "、".join(n for n, _ in ln.named_parameters()),
               "eps_default": rms.eps, "fp32_eps": eps, "ln_eps": ln.eps,
               "hand_diff": (rms(x) - hand(x, eps)).abs().max().item(),
               "small_default_diff": (rms(small) - hand(small, eps)).abs().max().item(),
               "small_1e6_diff": (rms(small) - hand(small, 1e-6)).abs().max().item()}
    return out


class _Traffic(Mode):
    """Every ATen op the code runs, with the bytes of its tensor inputs and outputs: what an eager
    kernel per op reads from and writes to memory (each op is its own kernel)."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        tensors = [t for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
        tensors += [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        self.ops.append(func.__name__.split(".")[0])
        self.bytes += sum(t.numel() * t.element_size() for t in tensors)
        return out


def _traffic(fn):
    with _Traffic() as t:
        fn()
    return t


ROWS, WIDTH = 64, 1024


@claim("norm.fusion-bytes", question=Q,
       statement="融合省的是对这一行的读写。输入 {=64×1024}、fp32，数每个 aten 算子读入和写出的字节（eager 下每个算子是"
                 "一个 kernel，以 x 的大小为单位）：`F.layer_norm` 是一个算子 `{ln_ops}`，共 {ln_rows:.2f} 份，接近读一遍 x、"
                 "写一遍 y 的下限 2；CPU 上的 `F.rms_norm` 拆成 {rms_n} 个算子（{rms_ops}），共 {rms_rows:.2f} 份；"
                 "照公式手写的 LayerNorm 是 {hand_n} 个算子、{hand_rows:.2f} 份。残差加法再接 RMSNorm，分开写是 "
                 "{add_rms_rows:.2f} 份，融合成一个 kernel（vLLM 的 `fused_add_rms_norm` 就是这样做的）只需读 x 和残差、"
                 "写回残差和输出，{=4} 份。",
       expect={"ln_ops": "native_layer_norm", "ln_rows": {"<": 2.1}, "rms_n": 6, "rms_rows": {">": 6.5},
               "hand_n": {">=": 7}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, WIDTH, generator=g)
    res = torch.randn(ROWS, WIDTH, generator=g)
    w, b = torch.ones(WIDTH), torch.zeros(WIDTH)
    unit = x.numel() * x.element_size()
    ln = _traffic(lambda: F.layer_norm(x, (WIDTH,), w, b))
    rms = _traffic(lambda: F.rms_norm(x, (WIDTH,), w, 1e-6))
    hand = _traffic(lambda: (x - x.mean(-1, keepdim=True))
                    / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5) * w + b)
    add_rms = _traffic(lambda: F.rms_norm(x + res, (WIDTH,), w, 1e-6))
    return {"ln_ops": "、".join(ln.ops), "ln_rows": ln.bytes / unit, "rms_n": len(rms.ops), "rms_ops": "、".join(rms.ops),
            "rms_rows": rms.bytes / unit, "hand_n": len(hand.ops), "hand_rows": hand.bytes / unit,
            "add_rms_rows": add_rms.bytes / unit}


@claim("norm.cuda-rms-fused", question=Q, needs=["cuda"],
       statement="GPU 上 `F.rms_norm` 是 {rms_n} 个 aten 算子（{rms_ops}），`F.layer_norm` 是 {ln_ops}；"
                 "同样数读写字节，RMSNorm 共 {rms_rows:.2f} 份 x 的大小。",
       expect={"rms_n": 1})
def _(ctx):
    """GPU 上 64×1024、FP32 的 F.rms_norm 与 F.layer_norm 调用的 aten 算子和读写字节。"""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(ROWS, WIDTH, generator=g, device="cuda")
    w, b = torch.ones(WIDTH, device="cuda"), torch.zeros(WIDTH, device="cuda")
    unit = x.numel() * x.element_size()
    rms = _traffic(lambda: F.rms_norm(x, (WIDTH,), w, 1e-6))
    ln = _traffic(lambda: F.layer_norm(x, (WIDTH,), w, b))
    return {"rms_n": len(rms.ops), "rms_ops": "、".join(rms.ops), "ln_ops": "、".join(ln.ops), "rms_rows": rms.bytes / unit}


def _stack(norm_first, layers, d=64, seed=0):
    """A stack of Transformer encoder layers at initialisation: per-layer residual-stream norms and the
    gradient norm reaching the input, for a fixed random target."""
    torch.manual_seed(seed)
    blocks = nn.ModuleList(nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True,
                                                      norm_first=norm_first) for _ in range(layers))
    final = nn.LayerNorm(d) if norm_first else nn.Identity()  # Pre-LN needs a final norm; Post-LN ends in one
    g = torch.Generator().manual_seed(100)
    x = torch.randn(8, 16, d, generator=g, requires_grad=True)
    target = torch.randn(8, 16, d, generator=g)
    h, norms = x, []
    for block in blocks:
        h = block(h)
        norms.append(h.detach().norm(dim=-1).mean().item())
    ((final(h) - target) ** 2).mean().backward()
    return norms, x.grad.norm().item()


@claim("norm.pre-post-ln", kind="measured", question=Q,
       statement="Pre-LN 和 Post-LN 在初始化时就不一样（`TransformerEncoderLayer`，d = {=64}、{=4} 个头、随机种子固定）："
                 "Post-LN 每层输出都过一次 LN，残差流里每个 token 的范数始终是 √d = {post_norm:.2f}；Pre-LN 的残差流不经过"
                 " LN，{=48} 层后范数长到 {pre_norm_48:.2f}，所以最后要再接一个 LN。传回输入的梯度范数：从 {=6} 层加深到 "
                 "{=48} 层，Post-LN 变成原来的 {post_grad_ratio:.2f}，比 Pre-LN 缩得多。在这个模型和初始化上，Pre-LN 的梯度也缩小了"
                 "（{pre_grad_ratio:.2f}）：梯度先要穿过最后那个 LN，LN 的缩放与输入范数成反比，而残差流范数从 {=6} 层时的 "
                 "{pre_norm_6:.2f} 长到 {=48} 层时的 {pre_norm_48:.2f}，单这一项就把梯度压到一半左右；各层分支的 I + J 又放大回"
                 "一部分，净效果取决于模型和初始化。",
       expect={"post_norm": {"approx": [8.0, 1e-3]}, "pre_norm_6": {"<": 14.0}, "pre_norm_48": {">": 16.0},
               "post_below_pre": True})
def _(ctx):
    saved = torch.get_num_threads()
    torch.set_num_threads(1)  # small ops: a second OpenMP thread on a shared machine only adds stalls
    try:
        post6, g_post6 = _stack(False, 6)
        post48, g_post48 = _stack(False, 48)
        pre6, g_pre6 = _stack(True, 6)
        pre48, g_pre48 = _stack(True, 48)
    finally:
        torch.set_num_threads(saved)
    post_ratio, pre_ratio = g_post48 / g_post6, g_pre48 / g_pre6
    return {"post_norm": post48[-1], "pre_norm_48": pre48[-1], "pre_norm_6": pre6[-1],
            "post_grad_ratio": post_ratio, "pre_grad_ratio": pre_ratio, "post_below_pre": post_ratio < pre_ratio}
