"""What `torch.optim` on BF16 parameters costs: an update smaller than half the parameter's ulp is rounded
away, so pure-BF16 AdamW stops moving where FP32 keeps moving. Varied over the learning rate and the
parameter's magnitude.

Exact: a constant gradient makes every Adam step move each coordinate by lr (up to eps), and rounding to
nearest BF16 either keeps such a step or drops it by the size of the ulp, on any machine.
"""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "optimizers"
STEPS, N = 100, 64
CASES = {"p1_lr1e-4": (1.0, 1e-4), "p1_lr1e-2": (1.0, 1e-2), "p001_lr1e-4": (0.01, 1e-4),
         "p1_lr15e-4": (1.0, 1.5e-3), "p1_lr3e-3": (1.0, 3e-3)}  # start value, lr (either side of half an ulp)


def _drift(start, lr, dtype):
    """How far AdamW (no weight decay) moves parameters that start at ``start`` in STEPS steps of a
    constant gradient."""
    p = torch.nn.Parameter(torch.full((N,), start, dtype=dtype))
    opt = torch.optim.AdamW([p], lr=lr, weight_decay=0.0)
    for _ in range(STEPS):
        p.grad = torch.full_like(p, 0.5)
        opt.step()
    return (start - p.detach().double()).abs().max().item()


@claim("optim.bf16-lost-updates", question=Q,
       statement="纯 BF16 的 AdamW 会丢掉小的更新：常数梯度下每步把每个坐标挪 lr，{=100} 步后 FP32 参数挪了 100·lr。"
                 "参数从 {=1.0} 开始、lr = {=1e-4} 时，FP32 挪了 {fp32.p1_lr1e-4:.4f}，BF16 一点没动（{bf16.p1_lr1e-4:g}）："
                 "每一步都小于 1.0 附近 BF16 的半个 ulp，舍入回原值。lr = {=1e-2} 时 BF16 挪了 {bf16.p1_lr1e-2:.4f}"
                 "（FP32 是 {fp32.p1_lr1e-2:.4f}）；参数在 {=0.01} 附近、lr = {=1e-4} 时 ulp 小，BF16 也挪了 "
                 "{bf16.p001_lr1e-4:.5f}。分界就在半个 ulp：1.0 之下 BF16 的半个 ulp 是 {half_ulp:.5f}，"
                 "lr = {=1.5e-3} 比它小，BF16 仍是 {bf16.p1_lr15e-4:g}；lr = {=3e-3} 比它大，BF16 挪了 {bf16.p1_lr3e-3:.3f}"
                 "（FP32 是 {fp32.p1_lr3e-3:.3f}，差在每步都舍入到整 ulp）。"
                 "丢不丢看每步的更新与参数自身大小之比，所以要 fp32 主权重（或 Kahan 求和、随机舍入）。",
       expect={"lost": True, "large_lr_moves": True, "small_param_moves": True, "fp32_moves": True,
               "half_ulp": {"approx": [2 ** -9, 1e-12]}, "below_half_ulp_lost": True, "above_half_ulp_moves": True})
def _(ctx):
    fp32 = {k: _drift(s, lr, torch.float32) for k, (s, lr) in CASES.items()}
    bf16 = {k: _drift(s, lr, torch.bfloat16) for k, (s, lr) in CASES.items()}
    expect = {k: STEPS * lr for k, (_s, lr) in CASES.items()}
    one = torch.tensor(1.0, dtype=torch.bfloat16)
    half_ulp = (one - torch.nextafter(one, torch.zeros_like(one))).item() / 2
    return {"fp32": fp32, "bf16": bf16, "half_ulp": half_ulp,
            "below_half_ulp_lost": CASES["p1_lr15e-4"][1] < half_ulp and bf16["p1_lr15e-4"] == 0.0,
            "above_half_ulp_moves": CASES["p1_lr3e-3"][1] > half_ulp
            and 0.5 * expect["p1_lr3e-3"] < bf16["p1_lr3e-3"] < 1.5 * expect["p1_lr3e-3"],
            "fp32_moves": all(abs(fp32[k] - expect[k]) < 0.01 * expect[k] for k in CASES),
            "lost": bf16["p1_lr1e-4"] == 0.0,
            "large_lr_moves": 0.5 * expect["p1_lr1e-2"] < bf16["p1_lr1e-2"] < 1.5 * expect["p1_lr1e-2"],
            "small_param_moves": 0.5 * expect["p001_lr1e-4"] < bf16["p001_lr1e-4"] < 1.5 * expect["p001_lr1e-4"]}
