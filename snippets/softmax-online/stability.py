"""Naive, safe and log softmax: what exp does at the edges of a float format."""

import math

import torch

from verify.claim import claim

Q = "softmax-online"


def naive_softmax(x):
    """The formula as written: exp, then divide by the sum of exp."""
    e = x.exp()
    return e / e.sum(-1, keepdim=True)


def safe_softmax(x):
    """Subtract the row max first: the largest exponent becomes exp(0) = 1."""
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def _show(values, digits=4):
    """Values as a reader reads them: finite ones rounded, nan and inf by name."""
    return [round(v, digits) if math.isfinite(v) else str(v) for v in values]


@claim("softmax.naive-overflows", question=Q,
       statement="按公式直接写 `exp(x) / exp(x).sum()`：float32 里 `exp` 在输入超过 {fp32_limit:.2f}（`ln` 最大有限值）"
                 "时溢出成 `inf`，对 {logits} 这行 logits，`exp(100)` 是 {exp_100}，结果变成 {naive}；"
                 "减掉行最大值后得到 {safe}，和 `torch.softmax` 一致。",
       expect={"exp_100": "inf", "naive": [0.0, 0.0, 0.0, "nan"], "safe": [0.0, 0.0, 0.0, 1.0],
               "fp32_limit": {"approx": [88.72, 1e-3]}, "safe_equals_torch": True})
def _(ctx):
    x = torch.tensor([1.0, 2.0, 3.0, 100.0], device=ctx.device)
    return {"logits": x.tolist(), "exp_100": str(x[-1].exp().item()),
            "fp32_limit": math.log(torch.finfo(torch.float32).max),
            "naive": _show(naive_softmax(x).tolist()), "safe": _show(safe_softmax(x).tolist()),
            "safe_equals_torch": torch.allclose(safe_softmax(x), torch.softmax(x, -1), atol=0, rtol=1e-6)}


@claim("softmax.half-limit", question=Q,
       statement="半精度更早溢出：FP16 的 `exp` 在输入超过 {fp16_limit:.2f} 时就是 `inf`，"
                 "所以 FP16 的 logits {logits} 直接按公式算得到 {naive}；BF16 的指数位和 FP32 一样多，上限是 "
                 "{bf16_limit:.2f}，和 FP32 几乎相同。",
       expect={"fp16_limit": {"approx": [11.09, 1e-3]}, "bf16_limit": {"approx": [88.72, 1e-3]},
               "naive": [0.0, 0.0, "nan"], "safe_finite": True})
def _(ctx):
    x = torch.tensor([1.0, 2.0, 12.0], dtype=torch.float16, device=ctx.device)
    return {"logits": x.float().tolist(), "naive": _show(naive_softmax(x).float().tolist()),
            "safe_finite": bool(torch.isfinite(safe_softmax(x)).all()),
            "fp16_limit": math.log(torch.finfo(torch.float16).max),
            "bf16_limit": math.log(torch.finfo(torch.bfloat16).max),
            "fp32_limit": math.log(torch.finfo(torch.float32).max)}


@claim("softmax.naive-underflows", question=Q,
       statement="反方向也会出错：一行 logits 全都很负时，例如 {logits}，每个 `exp` 都下溢成 {exp_values}，"
                 "按公式算是 0/0，结果是 {naive}；减掉最大值后最大的一项是 `exp(0) = 1`，分母至少为 1，"
                 "得到 {safe}，正是 `softmax([0, -1, -2])`。",
       expect={"exp_values": [0.0, 0.0, 0.0], "naive": ["nan", "nan", "nan"],
               "safe": [0.6652, 0.2447, 0.09], "same_as_shifted": True})
def _(ctx):
    x = torch.tensor([-200.0, -201.0, -202.0], device=ctx.device)
    shifted = torch.softmax(torch.tensor([0.0, -1.0, -2.0], device=ctx.device), -1)
    return {"logits": x.tolist(), "exp_values": x.exp().tolist(), "naive": _show(naive_softmax(x).tolist()),
            "safe": _show(safe_softmax(x).tolist()),
            "same_as_shifted": torch.allclose(safe_softmax(x), shifted, atol=0, rtol=1e-6)}


@claim("softmax.shift-invariant", kind="measured", question=Q,
       statement="减最大值不改变结果，因为 softmax 对整行加同一个常数不变：对 {rows} 行随机 logits，"
                 "`softmax(x + 50)` 与 `softmax(x)` 最多差 {shift_diff:.1e}，手写的 safe softmax 与 "
                 "`torch.softmax` 最多差 {safe_vs_torch:.1e}，都在 float32 的舍入误差量级。",
       expect={"shift_diff": {"<": 1e-5}, "safe_vs_torch": {"<": 1e-6}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(64, 1000, generator=g) * 4).to(ctx.device)
    return {"rows": x.shape[0],
            "shift_diff": (torch.softmax(x + 50, -1) - torch.softmax(x, -1)).abs().max().item(),
            "safe_vs_torch": (safe_softmax(x) - torch.softmax(x, -1)).abs().max().item()}


@claim("softmax.log-softmax", question=Q,
       statement="训练里要的常是对数概率：对 logits {logits}，先 softmax 再取 `log` 得到 {log_of_softmax}"
                 "（第二项的概率下溢成 0），`log_softmax` 直接算 `x - max - log(sum(exp(x - max)))`，得到 {log_softmax}；"
                 "`cross_entropy` 内部走的是后者，目标为第二类时损失是有限的 {cross_entropy:.1f}。",
       expect={"log_of_softmax": [0.0, "-inf"], "log_softmax": [0.0, -200.0], "cross_entropy": 200.0,
               "cross_entropy_runs_log_softmax": True})
def _(ctx):
    x = torch.tensor([0.0, -200.0], device=ctx.device)
    naive = _show(torch.softmax(x, -1).log().tolist())
    with torch.profiler.profile() as prof:
        loss = torch.nn.functional.cross_entropy(x[None], torch.tensor([1], device=ctx.device))
    ops = sorted({e.name for e in prof.events() if "softmax" in e.name or "nll" in e.name})
    return {"cross_entropy_ops": ops, "cross_entropy_runs_log_softmax": "aten::log_softmax" in ops,"logits": x.tolist(), "log_of_softmax": naive, "log_softmax": torch.log_softmax(x, -1).tolist(),
            "cross_entropy": loss.item()}
