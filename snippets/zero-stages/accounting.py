"""The ZeRO paper's accounting (Rajbhandari et al., 2020): bytes per device for each stage, and the
communication volume per step, for its example of a 7.5B-parameter model on 64 GPUs."""

from verify.claim import claim

Q = "zero-stages"


def _per_device(psi, n, k=12):
    """Mixed-precision Adam: fp16 parameters (2 bytes) and gradients (2), K bytes of fp32 optimizer
    state per parameter (master weights, momentum, variance: 4 + 4 + 4)."""
    return {
        "baseline": (2 + 2 + k) * psi,
        "os": 2 * psi + 2 * psi + k * psi / n,
        "os_g": 2 * psi + (2 + k) * psi / n,
        "os_g_p": (2 + 2 + k) * psi / n,
    }


@claim("zero.paper-memory", question=Q,
       statement="论文的记账：混合精度 Adam 给每个参数存 fp16 的参数和梯度各 {=2} 字节，外加 K = {k} 字节的 fp32 "
                 "状态（主权重、一阶矩、二阶矩）。Ψ = {=7.5B} 个参数、N = {n} 张卡时，每卡从 {gb.baseline:.0f} GB "
                 "降到 ZeRO-1 的 {gb.os:.1f} GB（只切状态）、ZeRO-2 的 {gb.os_g:.1f} GB（再切梯度）、"
                 "ZeRO-3 的 {gb.os_g_p:.2f} GB（连参数一起切）。",
       expect={"k": 12, "n": 64, "gb": {"baseline": 120.0, "os": 31.40625, "os_g": 16.640625, "os_g_p": 1.875}})
def _(ctx):
    psi, n = 7.5e9, 64
    per = _per_device(psi, n)
    return {"k": 12, "n": n, "gb": {key: value / 1e9 for key, value in per.items()}}


@claim("zero.paper-comm", question=Q,
       statement="论文的通信账（每个 rank 发送的元素数，环形算法）：DDP 的 all-reduce 是 reduce-scatter 加 all-gather，"
                 "各 (N-1)/N·Ψ，合计 {ddp:.3f}·Ψ（N = {n}）；ZeRO-1 和 ZeRO-2 把梯度 reduce-scatter、参数 all-gather，"
                 "同为 {zero2:.3f}·Ψ；ZeRO-3 的参数在前向和反向各 all-gather 一次，{zero3:.3f}·Ψ，是 DDP 的 {ratio:x}。",
       expect={"n": 64, "ddp": 1.96875, "zero2": 1.96875, "zero3": 2.953125, "ratio": 1.5})
def _(ctx):
    n = 64
    one = (n - 1) / n  # one reduce-scatter or one all-gather of the whole model, per rank
    ddp, zero2, zero3 = 2 * one, one + one, one + 2 * one
    return {"n": n, "ddp": ddp, "zero2": zero2, "zero3": zero3, "ratio": zero3 / ddp}
