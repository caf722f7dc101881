"""Around the update: optimizer state in bytes, gradient accumulation against one large batch
(loss scaling, variable-length token losses, BatchNorm), and gradient clipping with and without
GradScaler."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from verify.claim import claim

Q = "optimizers"


def _mlp(bn=False, seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(16, 32), *([nn.BatchNorm1d(32)] if bn else []), nn.ReLU(), nn.Linear(32, 4)]
    return nn.Sequential(*layers)


def _grads(model):
    return torch.cat([p.grad.flatten() for p in model.parameters()])


def _state_bytes(opt):
    """Bytes of the per-element state tensors, and of the 0-d ones (Adam's ``step``), over all params."""
    full = scalar = 0
    for s in opt.state.values():
        for t in s.values():
            if torch.is_tensor(t):
                n = t.numel() * t.element_size()
                if t.dim() == 0:
                    scalar += n
                else:
                    full += n
    return full, scalar


OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: torch.optim.Adam(ps),
    "adamw": lambda ps: torch.optim.AdamW(ps),
    "adamw_amsgrad": lambda ps: torch.optim.AdamW(ps, amsgrad=True),
}


@claim("optim.state-bytes", question=Q,
       statement="一个 {n_params:,} 个 fp32 参数的 MLP（{n_tensors} 个参数张量），第一次 `step()` 之后数优化器状态："
                 "不带动量的 SGD {bytes_per_param.sgd:.0f} 字节/参数（`state` 里 {sgd_entries} 项）；带动量的 SGD "
                 "{bytes_per_param.sgd_momentum:.0f} 字节/参数（`momentum_buffer`）；Adam 和 AdamW 都是 "
                 "{bytes_per_param.adamw:.0f} 字节/参数（`exp_avg`、`exp_avg_sq`），外加每个参数张量一个 "
                 "{step_bytes} 字节的 `step` 标量；`amsgrad=True` 再多一份 `max_exp_avg_sq`，"
                 "{bytes_per_param.adamw_amsgrad:.0f} 字节/参数。",
       expect={"bytes_per_param": {"sgd": 0.0, "sgd_momentum": 4.0, "adam": 8.0, "adamw": 8.0, "adamw_amsgrad": 12.0},
               "sgd_entries": 0, "step_bytes": 4})
def _(ctx):
    per, scalars = {}, {}
    n = entries = 0
    for name, make in OPTIMIZERS.items():
        model = _mlp()
        opt = make(model.parameters())
        model(torch.randn(4, 16)).sum().backward()
        opt.step()
        n = sum(p.numel() for p in model.parameters())
        full, scalar = _state_bytes(opt)
        per[name], scalars[name] = full / n, scalar
        if name == "sgd":
            entries = len(opt.state)
    n_tensors = len(list(_mlp().parameters()))
    return {"n_params": n, "n_tensors": n_tensors, "bytes_per_param": per, "sgd_entries": entries,
            "step_bytes": scalars["adamw"] // n_tensors}


@claim("optim.state-dtype", question=Q,
       statement="状态的 dtype 跟着参数走：把同一个 MLP 转成 BF16 再用 `AdamW`，`exp_avg` 是 {exp_avg_dtype}，"
                 "状态只剩 {bytes_per_param:.0f} 字节/参数：`torch.optim` 按参数的 dtype 建状态，不会自己升到 fp32。",
       expect={"exp_avg_dtype": "torch.bfloat16", "bytes_per_param": 4.0})
def _(ctx):
    model = _mlp().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 16, dtype=torch.bfloat16)).sum().backward()
    opt.step()
    full, _ = _state_bytes(opt)
    s = opt.state[model[0].weight]
    return {"exp_avg_dtype": str(s["exp_avg"].dtype), "bytes_per_param": full / sum(p.numel() for p in model.parameters())}


def _batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(32, 16, generator=g), torch.randint(0, 4, (32,), generator=g)


def _full_batch(bn=False):
    x, y = _batch()
    model = _mlp(bn)
    F.cross_entropy(model(x), y).backward()
    return model


def _accumulated(k, divide=True, bn=False):
    x, y = _batch()
    model = _mlp(bn)
    for xb, yb in zip(x.chunk(k), y.chunk(k)):
        loss = F.cross_entropy(model(xb), yb)  # mean over the micro-batch
        (loss / k if divide else loss).backward()  # .grad accumulates across backward calls
    return model


@claim("optim.accum-scaling", kind="measured", question=Q,
       statement="batch {=32} 一次反向，对比拆成 {=4} 个 {=8} 的 micro-batch、每个 `backward()` 之后不清梯度（`.grad` "
                 "会累加）：损失是 mean 归约时，每个 micro-batch 的损失除以 {=4} 再反向，累加出的梯度与整批的最大差 "
                 "{right_vs_full:.1e}（最大梯度的 {right_rel:.1e}），只剩求和顺序的舍入；忘了除，梯度{exact:?逐位正好是|不是}"
                 "正确值的 {factor:.0f} 倍。拿这份梯度各走一步：SGD 的位移是正确值的 {sgd_ratio:.2f} 倍，等于学习率"
                 "放大了这么多；Adam 的位移几乎不变（相对 L2 差 {adam_rel:.1e}），m 和 √v 同比例放大后相除抵消，只剩 ε 的"
                 "影响。",
       expect={"right_rel": {"<": 1e-5}, "exact": True, "factor": 4.0, "sgd_ratio": {"approx": [4.0, 1e-4]},
               "adam_rel": {"<": 1e-3}})
def _(ctx):
    right_model, wrong_model = _accumulated(4), _accumulated(4, divide=False)
    full, right, wrong = _grads(_full_batch()), _grads(right_model), _grads(wrong_model)
    diff = (right - full).abs().max().item()
    nz = right != 0

    def displacement(model, make):
        before = [p.detach().clone() for p in model.parameters()]
        make(model.parameters()).step()
        return torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before)])

    sgd_r = displacement(_accumulated(4), lambda ps: torch.optim.SGD(ps, lr=0.1))
    sgd_w = displacement(_accumulated(4, divide=False), lambda ps: torch.optim.SGD(ps, lr=0.1))
    adam_r = displacement(_accumulated(4), lambda ps: torch.optim.Adam(ps, lr=1e-3))
    adam_w = displacement(_accumulated(4, divide=False), lambda ps: torch.optim.Adam(ps, lr=1e-3))
    return {"right_vs_full": diff, "right_rel": diff / full.abs().max().item(), "exact": torch.equal(wrong, 4 * right),
            "factor": (wrong[nz] / right[nz]).unique().item(), "sgd_ratio": (sgd_w.norm() / sgd_r.norm()).item(),
            "adam_rel": ((adam_w - adam_r).norm() / adam_r.norm()).item()}


@claim("optim.accum-variable-length", kind="measured", question=Q,
       statement="按 token 平均的语言模型损失，micro-batch 的 token 数不同时，“每个 micro-batch 取均值再除以步数”"
                 "就不等于整批的均值：{=4} 个 micro-batch 分别有 {=10、2、6、14} 个 token，这样算的损失是 "
                 "{mean_of_means:.4f}，整批按 token 平均是 {global_mean:.4f}；token 的权重不再相等，2 个 token 那一批里的"
                 " token 权重是 14 个那一批的 {weight_ratio:.0f} 倍。正确做法是每个 micro-batch 用 sum 归约、除以整批的总 "
                 "token 数（{sum_over_total:.4f}，与整批差 {fixed_diff:.1e}）。",
       expect={"weight_ratio": {"approx": [7.0, 1e-5]}, "fixed_diff": {"<": 1e-5}, "differs": True})
def _(ctx):
    g = torch.Generator().manual_seed(2)
    sizes, vocab = (10, 2, 6, 14), 11
    logits = [torch.randn(n, vocab, generator=g, requires_grad=True) for n in sizes]
    targets = [torch.randint(0, vocab, (n,), generator=g) for n in sizes]
    global_mean = F.cross_entropy(torch.cat(logits), torch.cat(targets))
    mean_of_means = sum(F.cross_entropy(lg, t) for lg, t in zip(logits, targets)) / len(sizes)
    total = sum(sizes)
    fixed = sum(F.cross_entropy(lg, t, reduction="sum") for lg, t in zip(logits, targets)) / total
    mean_of_means.backward()
    # d loss / d logits of one token = weight * (softmax - onehot): read each token's weight off its gradient
    weight = {}
    for n, lg, t in zip(sizes, logits, targets):
        direction = lg.detach().softmax(-1) - F.one_hot(t, vocab)
        weight[n] = (lg.grad / direction).mean().item()
    return {"global_mean": global_mean.item(), "mean_of_means": mean_of_means.item(),
            "sum_over_total": fixed.item(), "fixed_diff": abs(fixed.item() - global_mean.item()),
            "weight_ratio": weight[2] / weight[14], "weight_global": 1 / total, "differs": abs(mean_of_means.item() - global_mean.item()) > 1e-3}


@claim("optim.accum-batchnorm", kind="measured", question=Q,
       statement="模型里有 BatchNorm 时，损失怎么缩放都补不回来：同样拆成 {=4} 个 micro-batch、损失正确地除以 {=4}，"
                 "梯度与整批相差 {grad_rel:pct}（相对 L2 误差），因为每个 micro-batch 用自己 {=8} 个样本的均值方差归一化；"
                 "running_mean 也不同（最大差 {running_mean_diff:.3f}），整批更新了 {full_tracked} 次，累积更新了 "
                 "{accum_tracked} 次。",
       expect={"grad_rel": {">": 0.05}, "full_tracked": 1, "accum_tracked": 4})
def _(ctx):
    full, accum = _full_batch(bn=True), _accumulated(4, bn=True)
    gf, ga = _grads(full), _grads(accum)
    return {"grad_rel": ((ga - gf).norm() / gf.norm()).item(),
            "running_mean_diff": (full[1].running_mean - accum[1].running_mean).abs().max().item(),
            "full_tracked": int(full[1].num_batches_tracked), "accum_tracked": int(accum[1].num_batches_tracked)}


def _clip_setup(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    g = torch.Generator().manual_seed(3)
    return model, torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


@claim("optim.clip-global", kind="measured", question=Q,
       statement="`clip_grad_norm_(params, max_norm={=1.0})` 裁的是全局范数：返回值 {returned:.3f} 是裁剪前所有梯度拼在一起的"
                 " L2 范数，等于各参数梯度范数的平方和开方（{from_parts:.3f}）；裁剪后全局范数是 {after:.4f}，每个参数的"
                 "梯度都乘了同一个系数（{n_tensors} 个张量的缩放比最大相差 {coef_spread:.1e}），方向不变。",
       expect={"after": {"approx": [1.0, 1e-5]}, "coef_spread": {"<": 1e-6}, "matches": True})
def _(ctx):
    model, x, y = _clip_setup()
    ((model(x) - y) ** 2).mean().mul(50).backward()
    before = torch.stack([p.grad.norm() for p in model.parameters()])
    returned = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
    after_parts = torch.stack([p.grad.norm() for p in model.parameters()])
    coef = after_parts / before
    from_parts = before.norm().item()
    return {"returned": returned, "from_parts": from_parts, "matches": abs(returned - from_parts) < 1e-4 * from_parts,
            "after": after_parts.norm().item(), "coef_spread": (coef.max() - coef.min()).item(),
            "n_tensors": len(before)}


@claim("optim.clip-scaler-order", question=Q,
       statement="FP16 加 GradScaler（放大倍数 {=1024}）时，裁剪必须在 `scaler.unscale_(opt)` 之后、`scaler.step(opt)` 之前。"
                 "真实梯度范数是 {true_norm:.3f}，按 max_norm = {=1.0} 正确裁剪后，这一步用的梯度范数是 {right_applied:.4f}；"
                 "在 unscale 之前裁剪，量到的是放大后的范数 {wrong_measured:.0f}，裁到 1 以后 `step` 又除以 {=1024}，"
                 "实际用的梯度范数只有 {wrong_applied:.2e}，是该有的 1/{shrink_inv:.0f}，这一步几乎白走。",
       expect={"right_applied": {"approx": [1.0, 1e-4]}, "shrink": {"approx": [1 / 1024, 1e-3]},
               "wrong_over_true": {"approx": [1024.0, 1e-3]}})
def _(ctx):
    lr = 0.1

    def one_step(order):
        model, x, y = _clip_setup()
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        before = [p.detach().clone() for p in model.parameters()]
        with torch.autocast("cpu", dtype=torch.float16):
            loss = ((model(x).float() - y) ** 2).mean() * 4
        scaler.scale(loss).backward()
        if order == "right":
            scaler.unscale_(opt)
            measured = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        elif order == "wrong":
            measured = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        else:
            scaler.unscale_(opt)
            measured = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
        scaler.step(opt)
        scaler.update()
        moved = torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before)])
        return measured.item(), moved.norm().item() / lr  # plain SGD: the step is lr times the gradient used

    true_norm, _ = one_step("none")
    _, right = one_step("right")
    wrong_measured, wrong = one_step("wrong")
    return {"true_norm": true_norm, "right_applied": right, "wrong_measured": wrong_measured, "wrong_applied": wrong,
            "shrink": wrong / right, "shrink_inv": right / wrong, "wrong_over_true": wrong_measured / true_norm}
