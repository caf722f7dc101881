"""Accumulating in low precision: lost weight updates, and kernels that accumulate in FP32."""

import torch

from verify.claim import claim

Q = "amp-bf16-fp16"


def _sgd_steps(dtype, steps, update, device):
    """A weight of 1.0 stored in ``dtype``, decreased by ``update`` (lr * grad) ``steps`` times."""
    w = torch.ones((), dtype=dtype, device=device)
    for _ in range(steps):
        w = w - torch.tensor(update, dtype=dtype, device=device)
    return w.item()


def _count_up(dtype, limit, device):
    """Add 1 to a running total kept in ``dtype``; return where the total stops growing."""
    total = torch.zeros((), dtype=dtype, device=device)
    one = torch.ones((), dtype=dtype, device=device)
    for _ in range(limit):
        after = total + one
        if after.item() == total.item():
            break
        total = after
    return total.item()


@claim("amp.update-lost", question=Q,
       statement="权重 1.0 每步减去 `1e-3`（学习率乘梯度），走 {steps} 步：权重存成 FP32 得 {fp32:.4f}；存成 FP16 得 "
                 "{fp16:.4f}，每步实际减去的是 {fp16_step:.4g}；存成 BF16 则一步也没动，始终是 {bf16:.1f}：1 附近 BF16 "
                 "的间距是 {bf16_gap:.4g}，不到间距一半的更新被舍入掉。这就是混合精度要在 FP32 里保留一份主权重"
                 "（master weights）、让优化器在 FP32 上更新的原因。",
       expect={"fp32": {"approx": [0.9, 1e-4]}, "bf16": 1.0, "bf16_gap": 2.0 ** -8, "fp16_step": 2.0 ** -10,
               "fp16": {"between": [0.90, 0.91]}})
def _(ctx):
    steps, update = 100, 1e-3
    one_bf16 = torch.ones((), dtype=torch.bfloat16)
    below = torch.nextafter(one_bf16, torch.zeros((), dtype=torch.bfloat16)).item()
    first_fp16 = 1.0 - _sgd_steps(torch.float16, 1, update, ctx.device)
    return {"steps": steps, "fp32": _sgd_steps(torch.float32, steps, update, ctx.device),
            "fp16": _sgd_steps(torch.float16, steps, update, ctx.device),
            "bf16": _sgd_steps(torch.bfloat16, steps, update, ctx.device),
            "bf16_gap": 1.0 - below, "fp16_step": first_fp16}


@claim("amp.accumulate-fp32", question=Q,
       statement="逐个累加时，累加器的精度决定结果：在 BF16 里从 0 开始一次加 1，加到 {bf16_stall:.0f} 就再也加不上去，"
                 "FP16 停在 {fp16_stall:.0f}。PyTorch 的归约和矩阵乘不这样累加：`torch.ones(10000, dtype=torch.bfloat16)"
                 ".sum()` 得 {sum_bf16:.0f}，正是 10000 舍入到 BF16 的结果（{bf16_of_10000:.0f}），说明内部用 FP32 累加、"
                 "最后只舍入一次；BF16 的 `ones(1, 4096) @ ones(4096, 1)` 得 {mm_bf16:.0f}。",
       expect={"bf16_stall": 256.0, "fp16_stall": 2048.0, "sum_bf16": 9984.0, "bf16_of_10000": 9984.0,
               "mm_bf16": 4096.0})
def _(ctx):
    ones = torch.ones(10000, dtype=torch.bfloat16, device=ctx.device)
    a = torch.ones(1, 4096, dtype=torch.bfloat16, device=ctx.device)
    return {"bf16_stall": _count_up(torch.bfloat16, 5000, ctx.device),
            "fp16_stall": _count_up(torch.float16, 5000, ctx.device),
            "sum_bf16": ones.sum().item(), "bf16_of_10000": torch.tensor(10000.0).bfloat16().item(),
            "mm_bf16": (a @ a.t()).item()}
