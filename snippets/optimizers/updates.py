"""The update rules written by hand against torch.optim: SGD with momentum (PyTorch's convention and
Sutskever's), Adam with bias correction, Adam's L2 weight decay against AdamW's decoupled decay.

The hand-written steps run in float64 next to torch.optim on float64 parameters, so that a difference
is the formula's and not float32 rounding.
"""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "optimizers"
N, STEPS = 1000, 20


def _inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    p = torch.randn(N, generator=g, dtype=torch.float64)
    grads = [torch.randn(N, generator=g, dtype=torch.float64) for _ in range(STEPS)]
    return p, grads


def _torch_run(cls, p, grads, lrs=None, **kw):
    """Feed ``grads`` to ``cls`` one step at a time; ``lrs`` sets the learning rate before each step."""
    q = p.clone().requires_grad_(True)
    opt = cls([q], **kw)
    for i, g in enumerate(grads):
        if lrs is not None:
            opt.param_groups[0]["lr"] = lrs[i]
        q.grad = g.clone()
        opt.step()
    return q.detach(), opt


def _sgd_pytorch(p, grads, lrs, mu):
    """PyTorch's form: v <- mu*v + g (v = g at the first step), p <- p - lr*v."""
    q, v = p.clone(), None
    for lr, g in zip(lrs, grads):
        v = g.clone() if v is None else mu * v + g
        q = q - lr * v
    return q


def _sgd_sutskever(p, grads, lrs, mu):
    """Sutskever et al. (2013): v <- mu*v - lr*g, p <- p + v (the learning rate is inside v)."""
    q, v = p.clone(), torch.zeros_like(p)
    for lr, g in zip(lrs, grads):
        v = mu * v - lr * g
        q = q + v
    return q


def _adam(p, grads, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False, bias_correction=True):
    """Adam as the paper writes it, with L2 (wd added to the gradient) or decoupled decay (AdamW)."""
    q, m, v = p.clone(), torch.zeros_like(p), torch.zeros_like(p)
    for t, g in enumerate(grads, 1):
        if wd and decoupled:
            q = q * (1 - lr * wd)  # AdamW: shrink the weight itself, outside m and v
        elif wd:
            g = g + wd * q  # L2: the decay term becomes part of the gradient, so m and v see it
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = (m / (1 - b1 ** t), v / (1 - b2 ** t)) if bias_correction else (m, v)
        q = q - lr * m_hat / (v_hat.sqrt() + eps)
    return q


def _maxdiff(a, b):
    return (a - b).abs().max().item()


@claim("optim.sgd-momentum-matches", kind="measured", question=Q,
       statement="手写 PyTorch 的动量形式：第一步 v = g，之后 v = μv + g，p -= lr·v（μ = {=0.9}、lr = {=0.1}、"
                 "{=1000} 维参数、{=20} 步、float64），和 `torch.optim.SGD(momentum=0.9)` 的结果最大差 {diff:.1e}，"
                 "只剩舍入；优化器里存的 `momentum_buffer` 就是这个 v（最大差 {buf_diff:.1e}）。",
       expect={"diff": {"<": 1e-12}, "buf_diff": {"<": 1e-12}})
def _(ctx):
    p, grads = _inputs()
    lrs = [0.1] * STEPS
    q, opt = _torch_run(torch.optim.SGD, p, grads, lr=0.1, momentum=0.9)
    v = None
    for g in grads:
        v = g.clone() if v is None else 0.9 * v + g
    buf = next(iter(opt.state.values()))["momentum_buffer"]
    return {"diff": _maxdiff(q, _sgd_pytorch(p, grads, lrs, 0.9)), "buf_diff": _maxdiff(buf, v)}


@claim("optim.sutskever-lr-change", kind="measured", question=Q,
       statement="Sutskever 的写法把 lr 放进速度里（v = μv − lr·g，p += v）。学习率不变时两种写法的轨迹相同"
                 "（{=20} 步后最大差 {const_diff:.1e}）；学习率在第 {=10} 步后从 {=0.1} 降到 {=0.01} 时就不同了，"
                 "{=20} 步后最大差 {drop_diff:.2f}。用恒定梯度 g = 1 看降学习率后的第一步：PyTorch 的位移是 "
                 "{pt_step:.3f}，整个动量立刻按新学习率缩小；Sutskever 的是 {sut_step:.3f}，速度里还带着旧学习率，"
                 "是前者的 {ratio:.1f} 倍。",
       expect={"const_diff": {"<": 1e-9}, "drop_diff": {">": 0.1}, "ratio": {"approx": [8.688, 1e-3]}})
def _(ctx):
    p, grads = _inputs()
    const = [0.1] * STEPS
    drop = [0.1] * 10 + [0.01] * 10
    ones = [torch.ones(1, dtype=torch.float64)] * STEPS
    zero = torch.zeros(1, dtype=torch.float64)

    def first_step_after_drop(fn):
        before = fn(zero, ones[:10], drop[:10], 0.9)
        after = fn(zero, ones[:11], drop[:11], 0.9)
        return (before - after).item()

    pt, sut = first_step_after_drop(_sgd_pytorch), first_step_after_drop(_sgd_sutskever)
    return {"const_diff": _maxdiff(_sgd_pytorch(p, grads, const, 0.9), _sgd_sutskever(p, grads, const, 0.9)),
            "drop_diff": _maxdiff(_sgd_pytorch(p, grads, drop, 0.9), _sgd_sutskever(p, grads, drop, 0.9)),
            "pt_step": pt, "sut_step": sut, "ratio": sut / pt}


@claim("optim.adam-matches", kind="measured", question=Q,
       statement="手写 Adam：m = β₁m + (1−β₁)g，v = β₂v + (1−β₂)g²，m̂ = m/(1−β₁ᵗ)，v̂ = v/(1−β₂ᵗ)，"
                 "p -= lr·m̂/(√v̂ + ε)（默认 β = ({=0.9}, {=0.999})、ε = {=1e-8}、lr = {=1e-3}），{=20} 步后和 "
                 "`torch.optim.Adam` 最大差 {diff:.1e}；每个参数存两份状态，`exp_avg` 就是 m（最大差 {m_diff:.1e}）、"
                 "`exp_avg_sq` 就是 v（最大差 {v_diff:.1e}）。",
       expect={"diff": {"<": 1e-12}, "m_diff": {"<": 1e-12}, "v_diff": {"<": 1e-12}})
def _(ctx):
    p, grads = _inputs()
    q, opt = _torch_run(torch.optim.Adam, p, grads, lr=1e-3)
    m, v = torch.zeros_like(p), torch.zeros_like(p)
    for g in grads:
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
    s = next(iter(opt.state.values()))
    return {"diff": _maxdiff(q, _adam(p, grads)), "m_diff": _maxdiff(s["exp_avg"], m),
            "v_diff": _maxdiff(s["exp_avg_sq"], v)}


@claim("optim.adam-first-step", question=Q,
       statement="偏差修正的作用看第一步最清楚：梯度各坐标从 {=1e-3} 到 {=1e3} 跨六个数量级，Adam 第一步每个坐标"
                 "都移动 lr 的 {moved_min:.5f} 到 {moved_max:.5f} 倍，步长与梯度大小无关；去掉偏差修正，第一步是 "
                 "lr 的 {no_bc:.3f} 倍，即 (1−β₁)/√(1−β₂)：m、v 从 0 起步，前几步被低估的程度不同。",
       expect={"moved_min": {">": 0.999}, "moved_max": {"<": 1.0001}, "no_bc": {"approx": [0.1 / 0.001 ** 0.5, 1e-4]}})
def _(ctx):
    p = torch.zeros(7, dtype=torch.float64)
    g = torch.tensor([1e-3, -1e-2, 1e-1, -1.0, 10.0, -100.0, 1e3], dtype=torch.float64)
    q, _ = _torch_run(torch.optim.Adam, p, [g], lr=1e-3)
    moved = (q - p).abs() / 1e-3
    nb = (_adam(p, [g], bias_correction=False) - p).abs() / 1e-3
    return {"moved_min": moved.min().item(), "moved_max": moved.max().item(), "no_bc": nb.mean().item()}


@claim("optim.adamw-matches", kind="measured", question=Q,
       statement="weight_decay = {=0.1} 时两种写法各自对得上：`Adam(weight_decay=0.1)` 等于手写的“把 λp 加进梯度再走"
                 " Adam”（最大差 {adam_l2_diff:.1e}），`AdamW(weight_decay=0.1)` 等于手写的“先 p *= (1 − lr·λ)，"
                 "再用原梯度走 Adam”（最大差 {adamw_diff:.1e}）；两者 {=20} 步后相差 {l2_vs_w:.1e}。torch 2.13 里 "
                 "`AdamW` 就是 `Adam(decoupled_weight_decay=True)`，两者结果{same:?逐位相同|不同}。",
       expect={"adam_l2_diff": {"<": 1e-12}, "adamw_diff": {"<": 1e-12}, "l2_vs_w": {">": 1e-6}, "same": True,
               "adamw_default": 0.01, "adam_default": 0})
def _(ctx):
    p, grads = _inputs()
    adam_l2, _ = _torch_run(torch.optim.Adam, p, grads, lr=1e-3, weight_decay=0.1)
    adamw, _ = _torch_run(torch.optim.AdamW, p, grads, lr=1e-3, weight_decay=0.1)
    decoupled, _ = _torch_run(torch.optim.Adam, p, grads, lr=1e-3, weight_decay=0.1, decoupled_weight_decay=True)
    return {"adam_l2_diff": _maxdiff(adam_l2, _adam(p, grads, wd=0.1)),
            "adamw_diff": _maxdiff(adamw, _adam(p, grads, wd=0.1, decoupled=True)),
            "l2_vs_w": _maxdiff(adam_l2, adamw), "same": torch.equal(adamw, decoupled),
            "adamw_default": torch.optim.AdamW([p.clone()]).defaults["weight_decay"],
            "adam_default": torch.optim.Adam([p.clone()]).defaults["weight_decay"]}


def _decay_run(cls, wd, steps=100, lr=1e-2):
    """Two coordinates, both starting at 1.0: w0 gets no gradient from the loss, w1 a gradient of
    +-10 (alternating, so that it has no drift of its own)."""
    w = torch.ones(2, dtype=torch.float64, requires_grad=True)
    opt = cls([w], lr=lr, weight_decay=wd)
    for i in range(steps):
        w.grad = torch.tensor([0.0, 10.0 if i % 2 == 0 else -10.0], dtype=torch.float64)
        opt.step()
    return w.detach()


@claim("optim.l2-vs-decoupled", kind="measured", question=Q,
       statement="差在哪里：两个坐标都从 {=1.0} 开始，w₀ 没有来自损失的梯度，w₁ 的梯度是交替的 ±{=10}，lr = {=0.01}、"
                 "λ = {=0.1}、走 {=100} 步，看 weight_decay 让每个坐标多缩了多少（和 λ = 0 时比）。AdamW 对两个坐标一视同仁："
                 "w₀ 缩了 {adamw.w0:.4f}、w₁ 缩了 {adamw.w1:.4f}，w₀ 最后正好是 (1 − lr·λ)^100 = {expected_w0:.4f}。"
                 "Adam 的 L2 项要除以自适应分母 √v̂：w₀ 的梯度只有 λw，归一化后每步几乎走满 lr，缩了 {adam.w0:.4f}"
                 "（AdamW 的 {w0_ratio:.1f} 倍）；w₁ 的 v̂ 被大梯度撑大，λw 被除掉，只缩了 {adam.w1:.4f}"
                 "（AdamW 的 {w1_ratio:.2f} 倍）。",
       expect={"w0_ratio": {">": 5}, "w1_ratio": {"<": 0.2}, "adamw_w0_exact": True})
def _(ctx):
    out = {}
    for name, cls in (("adam", torch.optim.Adam), ("adamw", torch.optim.AdamW)):
        base, dec = _decay_run(cls, 0.0), _decay_run(cls, 0.1)
        out[name] = {"w0": (base[0] - dec[0]).item(), "w1": (base[1] - dec[1]).item()}
        out[name + "_final_w0"] = dec[0].item()
    expected = (1 - 1e-2 * 0.1) ** 100
    out.update(expected_w0=expected, adamw_w0_exact=abs(out["adamw_final_w0"] - expected) < 1e-12,
               w0_ratio=out["adam"]["w0"] / out["adamw"]["w0"], w1_ratio=out["adam"]["w1"] / out["adamw"]["w1"],
               adam_w0_over_w1=out["adam"]["w0"] / out["adam"]["w1"])
    return out


@claim("optim.sgd-l2-vs-decay", kind="measured", question=Q,
       statement="对不带动量的 SGD，L2 和解耦衰减是同一个更新：`SGD(weight_decay=0.1)` 与手写的 p *= (1 − lr·λ)、"
                 "p -= lr·g 在 {=20} 步后最大差 {plain_diff:.1e}。加上动量 μ = {=0.9} 就不同了：L2 项进了动量，"
                 "之后每一步都还在推，和解耦衰减相差 {momentum_diff:.2f}。到了 Adam，L2 项还要再除以 √v̂，差得更远"
                 "（上一条）。",
       expect={"plain_diff": {"<": 1e-12}, "momentum_diff": {">": 1e-4}})
def _(ctx):
    p, grads = _inputs()
    lr, wd = 0.1, 0.1
    plain, _ = _torch_run(torch.optim.SGD, p, grads, lr=lr, weight_decay=wd)
    with_mom, _ = _torch_run(torch.optim.SGD, p, grads, lr=lr, weight_decay=wd, momentum=0.9)
    q = p.clone()
    for g in grads:
        q = q * (1 - lr * wd) - lr * g
    q2, v = p.clone(), None  # decoupled decay with PyTorch-style momentum on the loss gradient only
    for g in grads:
        v = g.clone() if v is None else 0.9 * v + g
        q2 = q2 * (1 - lr * wd) - lr * v
    return {"plain_diff": _maxdiff(plain, q), "momentum_diff": _maxdiff(with_mom, q2)}
