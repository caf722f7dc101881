"""BatchNorm in PyTorch: the running statistics and their momentum, train against eval (and
no_grad, which is neither), which dimensions it normalises and a bias in front of it. Folding BN
into the convolution before it lives on the convolution question's page."""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: F401  (kept: the module's code keys its claims' records)
from torch import nn

from verify.claim import claim

Q = "norm-layers"


def _images(seed=0, n=8):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 5, 5, generator=g) * 2 + 1  # N, C, H, W; mean 1, std 2


def _per_channel(t):
    return t[None, :, None, None]


@claim("norm.bn-running-stats", kind="measured", question=Q,
       statement="`BatchNorm2d(3)` 在训练模式下前向一次（输入 {=8×3×5×5}，running_mean 初值 0、running_var 初值 1、"
                 "`momentum={=0.1}`）：running_mean 等于 0.9·0 + 0.1·batch 均值（最大差 {rm_diff:.1e}），running_var "
                 "等于 0.9·1 + 0.1·无偏方差（最大差 {rv_unbiased_diff:.1e}；若按有偏方差算则差 {rv_biased_diff:.1e}）。"
                 "这一步的输出却是用有偏方差归一化的（与有偏公式最大差 {out_biased_diff:.1e}，与无偏公式差 "
                 "{out_unbiased_diff:.1e}）；每个通道 {n} 个数，两种方差差一个 n/(n−1) = {ratio:.4f} 的因子。",
       expect={"rm_diff": {"<": 1e-6}, "rv_unbiased_diff": {"<": 1e-6}, "rv_biased_diff": {">": 1e-3},
               "out_biased_diff": {"<": 1e-5}, "out_unbiased_diff": {">": 1e-3}, "n": 200})
def _(ctx):
    x = _images()
    bn = nn.BatchNorm2d(3)
    y = bn(x)
    mean = x.mean((0, 2, 3))
    var_b, var_u = x.var((0, 2, 3), unbiased=False), x.var((0, 2, 3), unbiased=True)

    def normed(var):
        return (x - _per_channel(mean)) / torch.sqrt(_per_channel(var) + bn.eps)

    n = x.numel() // x.shape[1]
    return {"rm_diff": (bn.running_mean - 0.1 * mean).abs().max().item(),
            "rv_unbiased_diff": (bn.running_var - (0.9 + 0.1 * var_u)).abs().max().item(),
            "rv_biased_diff": (bn.running_var - (0.9 + 0.1 * var_b)).abs().max().item(),
            "out_biased_diff": (y - normed(var_b)).abs().max().item(),
            "out_unbiased_diff": (y - normed(var_u)).abs().max().item(), "n": n, "ratio": n / (n - 1)}


@claim("norm.bn-momentum-none", kind="measured", question=Q,
       statement="running 统计是指数滑动平均：`momentum={=0.1}` 时，{=30} 个 batch 的均值从 0 线性漂到 3，running_mean"
                 " 停在 {ema:.3f}，偏向最近的 batch（全部 batch 均值的平均是 {true_avg:.3f}）；`momentum=None` 时改成累计"
                 "平均，running_mean 是 {cumulative:.3f}，与全部 batch 均值的平均差 {cum_diff:.1e}。",
       expect={"cum_diff": {"<": 1e-5}, "ema_above_avg": True})
def _(ctx):
    g = torch.Generator().manual_seed(1)
    batches = [torch.randn(16, 1, generator=g) + 3 * i / 29 for i in range(30)]
    ema, cum = nn.BatchNorm1d(1), nn.BatchNorm1d(1, momentum=None)
    for b in batches:
        ema(b)
        cum(b)
    true_avg = torch.stack([b.mean() for b in batches]).mean().item()
    return {"ema": ema.running_mean.item(), "cumulative": cum.running_mean.item(), "true_avg": true_avg,
            "cum_diff": abs(cum.running_mean.item() - true_avg), "ema_above_avg": ema.running_mean.item() > true_avg + 0.5}


@claim("norm.bn-train-eval", kind="measured", question=Q,
       statement="train 和 eval 是两个函数：同一批输入，`eval()` 下的输出等于用 running_mean、running_var 归一化"
                 "（最大差 {eval_formula_diff:.1e}），与 train 模式的输出最大差 {train_vs_eval:.2f}。train 模式下一个样本的"
                 "输出取决于同一 batch 的其他样本：只换掉其余 {=7} 个样本，第一个样本的输出最大变了 {train_dependence:.2f}；"
                 "eval 下变了 {eval_dependence}。",
       expect={"eval_formula_diff": {"<": 1e-5}, "train_vs_eval": {">": 0.5}, "train_dependence": {">": 0.05},
               "eval_dependence": 0.0})
def _(ctx):
    x = _images()
    bn = nn.BatchNorm2d(3)
    y_train = bn(x)
    bn.eval()
    y_eval = bn(x)
    formula = (x - _per_channel(bn.running_mean)) / torch.sqrt(_per_channel(bn.running_var) + bn.eps)
    other = x.clone()
    other[1:] = _images(seed=5, n=7)
    fresh = nn.BatchNorm2d(3)
    train_dep = (fresh(x)[0] - fresh(other)[0]).abs().max().item()
    fresh.eval()
    eval_dep = (fresh(x)[0] - fresh(other)[0]).abs().max().item()
    return {"eval_formula_diff": (y_eval - formula).abs().max().item(),
            "train_vs_eval": (y_train - y_eval).abs().max().item(), "train_dependence": train_dep,
            "eval_dependence": eval_dep}


@claim("norm.bn-no-grad", kind="measured", question=Q,
       statement="`torch.no_grad()` 不会让 BatchNorm 进入推理模式：模型还在 train 模式时，在 `no_grad` 里前向一次，"
                 "running_mean {moved:?照样被更新|没有变化}（从 0 变成 {after:.3f}，num_batches_tracked = {tracked}），"
                 "输出仍用这一批自己的均值方差（与 train 模式的输出{same_as_train:?相同|不同}，与 eval 的输出最大差 "
                 "{vs_eval:.2f}）。",
       expect={"moved": True, "tracked": 1, "same_as_train": True, "vs_eval": {">": 0.5}})
def _(ctx):
    x = _images()
    bn = nn.BatchNorm2d(3)
    reference = nn.BatchNorm2d(3)
    with torch.no_grad():
        y = bn(x)
        y_train = reference(x)
    running = bn.running_mean.clone()
    evaluated = nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        y_eval = evaluated(x)
    return {"moved": bool((running != 0).all()), "after": running[0].item(), "tracked": int(bn.num_batches_tracked),
            "same_as_train": torch.equal(y, y_train), "vs_eval": (y - y_eval).abs().max().item()}


@claim("norm.bn-batch-one", question=Q,
       statement="train 模式下，每个通道只有一个值时 BatchNorm 拒绝计算：`BatchNorm1d(4)` 输入形状 {=(1, 4)} 时"
                 "{raised:?抛出|不抛出} {error}（“{message}”）；`eval()` 下同样的输入{eval_ok:?照常算出结果|也报错}，"
                 "因为用的是 running 统计。",
       expect={"raised": True, "error": "ValueError", "eval_ok": True})
def _(ctx):
    bn = nn.BatchNorm1d(4)
    x = torch.randn(1, 4)
    raised, error, message = False, "", ""
    try:
        bn(x)
    except ValueError as exc:
        raised, error, message = True, type(exc).__name__, str(exc).split(",")[0]
    bn.eval()
    return {"raised": raised, "error": error, "message": message, "eval_ok": bn(x).shape == (1, 4)}


@claim("norm.dims", kind="measured", question=Q,
       statement="归一化的维度：`BatchNorm2d(C={=3})` 对 {=8×3×5×5} 的输入，每个通道在 N、H、W 上求统计量，running_mean "
                 "形状是 {bn_stat_shape}，输出每个通道的均值最大偏离 0 为 {bn_mean_dev:.1e}、方差最大偏离 1 为 "
                 "{bn_var_dev:.1e}；`LayerNorm({=8})` 对 {=(2, 5, 8)}（batch、token、hidden）的输入，每个 token 在最后一维上"
                 "求统计量，{tokens} 个 token 各自的均值最大偏离 0 为 {ln_mean_dev:.1e}、方差最大偏离 1 为 "
                 "{ln_var_dev:.1e}，没有 running 统计（buffer {ln_buffers} 个），train 和 eval 输出{ln_same:?相同|不同}。",
       expect={"bn_stat_shape": [3], "bn_mean_dev": {"<": 1e-5}, "bn_var_dev": {"<": 1e-3}, "tokens": 10,
               "ln_mean_dev": {"<": 1e-5}, "ln_var_dev": {"<": 1e-3}, "ln_buffers": 0, "ln_same": True})
def _(ctx):
    x = _images()
    bn = nn.BatchNorm2d(3)
    y = bn(x)
    g = torch.Generator().manual_seed(2)
    t = torch.randn(2, 5, 8, generator=g) * 3 + 2
    ln = nn.LayerNorm(8)
    z = ln(t)
    ln.eval()
    return {"bn_stat_shape": list(bn.running_mean.shape),
            "bn_mean_dev": y.mean((0, 2, 3)).abs().max().item(),
            "bn_var_dev": (y.var((0, 2, 3), unbiased=False) - 1).abs().max().item(),
            "tokens": t.shape[0] * t.shape[1], "ln_mean_dev": z.mean(-1).abs().max().item(),
            "ln_var_dev": (z.var(-1, unbiased=False) - 1).abs().max().item(),
            "ln_buffers": len(list(ln.buffers())), "ln_same": torch.equal(ln(t), z)}


@claim("norm.bn-padding", kind="measured", question=Q,
       statement="序列上的 BatchNorm 把 batch 里所有序列的所有位置混在一起求统计量：两条 {=6} 个 token 的序列组成 batch，"
                 "只因为 batch 被补齐得更长（每条各补 {=10} 个全 0 的 padding 位置），第一条序列真实 token 的输出最大变了 "
                 "{bn_change:.2f}；换成 LayerNorm，变化是 {ln_change}。",
       expect={"bn_change": {">": 0.05}, "ln_change": 0.0})
def _(ctx):
    g = torch.Generator().manual_seed(3)
    d = 8
    real = torch.randn(1, 6, d, generator=g) + 0.5
    other = torch.randn(1, 6, d, generator=g)

    def batch(pad):
        """Both sequences padded with ``pad`` zero positions: (B, T, d)."""
        return torch.cat([torch.cat([seq, torch.zeros(1, pad, d)], 1) for seq in (real, other)], 0)

    bn, ln = nn.BatchNorm1d(d), nn.LayerNorm(d)

    def bn_out(x):
        return bn(x.transpose(1, 2)).transpose(1, 2)[0, :6]  # BatchNorm1d wants (B, C, T)

    return {"bn_change": (bn_out(batch(0)) - bn_out(batch(10))).abs().max().item(),
            "ln_change": (ln(batch(0))[0, :6] - ln(batch(10))[0, :6]).abs().max().item()}


@claim("norm.bias-cancels", kind="measured", question=Q,
       statement="BN 前面那层的 bias 在 train 模式下被减均值整个减掉：`Linear(16, 8)` 带 bias（取 ±{=3} 之间的随机值）和"
                 "不带 bias、权重相同，后面各接一个 `BatchNorm1d`（float64），输出最大差 {out_diff:.1e}；bias 的梯度最大 "
                 "{bias_grad:.1e}（权重的梯度最大 {weight_grad:.2f}），学不动。它只进了 running_mean：{=1} 步后两边 "
                 "running_mean 之差是 bias 的 {after_1:.4f} 倍，{=100} 步后是 {after_100:.6f} 倍，即 1 − 0.9ᵏ；此时 eval "
                 "输出的最大差 {eval_diff:.1e}。",
       expect={"out_diff": {"<": 1e-12}, "bias_grad": {"<": 1e-12}, "weight_grad": {">": 1e-3},
               "after_1": {"approx": [0.1, 1e-9]}, "after_100": {"approx": [1 - 0.9 ** 100, 1e-9]}})
def _(ctx):
    torch.manual_seed(0)
    with_bias = nn.Linear(16, 8).double()
    no_bias = nn.Linear(16, 8, bias=False).double()
    with torch.no_grad():
        no_bias.weight.copy_(with_bias.weight)
        with_bias.bias.uniform_(-3, 3)
    bn_a, bn_b = nn.BatchNorm1d(8).double(), nn.BatchNorm1d(8).double()
    g = torch.Generator().manual_seed(4)
    x = torch.randn(32, 16, generator=g, dtype=torch.float64)
    r = torch.randn(32, 8, generator=g, dtype=torch.float64)
    ya, yb = bn_a(with_bias(x)), bn_b(no_bias(x))
    (ya * r).sum().backward()  # any loss: the bias gradient is the sum of BN's input gradient, which is 0
    b = with_bias.bias.detach()
    after_1 = ((bn_a.running_mean - bn_b.running_mean) / b).mean().item()
    with torch.no_grad():
        for _ in range(99):
            bn_a(with_bias(x))
            bn_b(no_bias(x))
    after_100 = ((bn_a.running_mean - bn_b.running_mean) / b).mean().item()
    bn_a.eval()
    bn_b.eval()
    with torch.no_grad():
        eval_diff = (bn_a(with_bias(x)) - bn_b(no_bias(x))).abs().max().item()
    return {"out_diff": (ya - yb).abs().max().item(), "bias_grad": with_bias.bias.grad.abs().max().item(),
            "weight_grad": with_bias.weight.grad.abs().max().item(), "after_1": after_1, "after_100": after_100,
            "eval_diff": eval_diff}
