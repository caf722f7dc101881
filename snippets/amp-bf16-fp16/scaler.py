"""Gradients in FP16 and BF16: underflow in the backward pass, what GradScaler does, and how it adapts."""

import torch
import torch.nn.functional as F
from torch import nn

from verify.claim import claim

Q = "amp-bf16-fp16"
LOSS_FACTOR = 1e-4  # a small loss: gradients of the size deep networks produce late in training


def _model(device):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 8)).to(device)


def _batch(device):
    g = torch.Generator().manual_seed(1)
    return torch.randn(32, 64, generator=g).to(device), torch.randint(0, 8, (32,), generator=g).to(device)


def _grads(device, dtype=None, scale=None):
    """Parameter gradients of one small loss, in FP32 or under autocast, optionally scaled and unscaled."""
    model = _model(device)
    x, y = _batch(device)
    if dtype is None:
        loss = F.cross_entropy(model(x), y) * LOSS_FACTOR
    else:
        with torch.autocast(device, dtype=dtype):
            loss = F.cross_entropy(model(x), y) * LOSS_FACTOR
    (loss * scale if scale else loss).backward()
    return torch.cat([(p.grad / (scale or 1.0)).flatten() for p in model.parameters()])


def _compare(device):
    ref = _grads(device)
    runs = {"fp16": _grads(device, torch.float16), "fp16_scaled": _grads(device, torch.float16, 65536.0),
            "bf16": _grads(device, torch.bfloat16)}
    nonzero = ref != 0
    out = {"n_nonzero": int(nonzero.sum().item()), "median_grad": ref.abs().median().item(), "fp16_tiny": torch.finfo(torch.float16).tiny}
    for name, g in runs.items():
        out[f"{name}_zero"] = ((g == 0) & nonzero).float().sum().item() / nonzero.sum().item()
        out[f"{name}_err"] = ((g - ref).norm() / ref.norm()).item()
    return out


@claim("amp.fp16-grad-underflow", kind="measured", question=Q,
       statement="梯度下溢发生在反向传播里：一个小 MLP 的损失乘以 `1e-4`，FP32 算出的梯度中位数是 {median_grad:.2g}，"
                 "低于 FP16 的最小正规数。在 FP16 的 autocast 下直接反向，FP32 里非零的 {n_nonzero} 个梯度中有 "
                 "{fp16_zero:pct} 变成 0，整体相对误差 {fp16_err:pct}；先用 GradScaler 的初始倍数把损失放大再反向，"
                 "变成 0 的只剩 {fp16_scaled_zero:pct}，误差 {fp16_scaled_err:pct}。BF16 不放大也只有 {bf16_zero:pct} 变成 0。",
       expect={"median_grad": {"<": 6.1e-5}, "fp16_zero": {">": 0.05}, "fp16_scaled_zero": {"<": 0.001},
               "bf16_zero": {"<": 0.001}, "fp16_err": {">": 0.05}, "fp16_scaled_err": {"<": 0.05}})
def _(ctx):
    return _compare(ctx.device)


@claim("amp.bf16-coarser-grads", kind="measured", question=Q,
       statement="但 BF16 的梯度并不比放大后的 FP16 准：同一组梯度，BF16 的相对误差是 {bf16_err:pct}，放大后的 FP16 是 "
                 "{fp16_scaled_err:pct}，BF16 大 {ratio:x}；两者 eps 之比是 {eps_ratio:x}，梯度误差不只来自一次舍入，两者之比随这批输入而变。BF16 省掉的是"
                 "放大倍数的管理，精度还是 FP16 高。",
       expect={"ratio": {">": 1.0}})
def _(ctx):
    out = _compare(ctx.device)
    out["ratio"] = out["bf16_err"] / out["fp16_scaled_err"]
    out["eps_ratio"] = torch.finfo(torch.bfloat16).eps / torch.finfo(torch.float16).eps
    return out


@claim("amp.scaler-dynamic", question=Q,
       statement="GradScaler 的放大倍数是动态的：默认从 {init_scale:.0f} 开始，出现 inf/NaN 梯度时乘 {backoff}、连续 "
                 "{default_interval} 步正常就乘 {growth}。把 `growth_interval` 设成 {interval} 跑 {steps} 步、第 2 步让损失"
                 "变成 inf：每步后的倍数依次是 {scales_text}，参数是否更新依次是 {updated_text}。溢出的那一步 `scaler.step` 不调用 "
                 "`optimizer.step()`，只把倍数减半，所以偶尔的溢出不会弄坏权重。",
       expect={"init_scale": 65536.0, "backoff": 0.5, "growth": 2.0, "default_interval": 2000,
               "scales": [65536.0, 32768.0, 32768.0, 32768.0, 65536.0], "updated": [True, False, True, True, True]})
def _(ctx):
    default = torch.amp.GradScaler(ctx.device)
    torch.manual_seed(0)
    model = nn.Linear(4, 1).to(ctx.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    interval, steps = 3, 5
    scaler = torch.amp.GradScaler(ctx.device, growth_interval=interval)
    x = torch.randn(8, 4, device=ctx.device) * 0.01  # small enough that 65536 times the gradient fits in FP16
    scales, updated = [], []
    for i in range(steps):
        opt.zero_grad()
        with torch.autocast(ctx.device, dtype=torch.float16):
            loss = model(x).float().pow(2).mean()
        if i == 1:
            loss = loss * float("inf")
        before = model.weight.detach().clone()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        updated.append(not torch.equal(before, model.weight.detach()))
    return {"init_scale": default.get_scale(), "backoff": default.get_backoff_factor(),
            "growth": default.get_growth_factor(), "default_interval": default.get_growth_interval(),
            "interval": interval, "steps": steps, "scales": scales, "updated": updated,
            "scales_text": " → ".join(f"{v:.0f}" for v in scales),
            "updated_text": " → ".join("是" if u else "否" for u in updated)}


@claim("amp.unscale-before-clip", question=Q,
       statement="梯度裁剪要先 `scaler.unscale_(optimizer)`：`scaler.scale(loss).backward()` 之后，参数上的梯度是放大过的，"
                 "直接算范数得 {scaled_norm:.0f}，`unscale_` 之后是 {true_norm:.4g}，正好差 {ratio:.0f} 倍，即当前的放大倍数"
                 "（{scale:.0f}）。不先 unscale 就按阈值 1.0 裁剪，裁的是放大后的梯度。",
       expect={"ratio": {"approx": [65536.0, 1e-4]}, "scale": 65536.0, "step_after_unscale": True})
def _(ctx):
    torch.manual_seed(0)
    model = nn.Linear(4, 1).to(ctx.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(ctx.device)
    x = torch.randn(8, 4, device=ctx.device) * 0.01
    with torch.autocast(ctx.device, dtype=torch.float16):
        loss = model(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scale = scaler.get_scale()
    scaled = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf")).item()
    scaler.unscale_(opt)
    true = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
    before = model.weight.detach().clone()
    scaler.step(opt)  # already unscaled: step does not unscale twice
    scaler.update()
    return {"scaled_norm": scaled, "true_norm": true, "ratio": scaled / true, "scale": scale,
            "step_after_unscale": not torch.equal(before, model.weight.detach())}
