"""Is a half-precision matmul faster? It depends on what the hardware has for it."""

import torch

from verify import timing
from verify.claim import claim

Q = "amp-bf16-fp16"


def _cpu_flags():
    """The CPU's low-precision instruction sets named in /proc/cpuinfo (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            words = set(f.read().split())
    except OSError:
        return []
    return sorted(words & {"avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16", "amx_tile"})


def _hardware(device):
    if device == "cuda":
        return torch.cuda.get_device_name()
    flags = _cpu_flags()
    return "CPU，低精度指令集 " + "、".join(flags) if flags else "CPU，没有 BF16/FP16 专用指令"


@claim("amp.matmul-speed-depends", question=Q, kind="perf",
       statement="低精度快不快取决于硬件有没有对应的指令。这台机器是 {hardware}：{n}×{n} 的矩阵乘 FP32 要 "
                 "{timings.fp32}，BF16 要 {timings.bf16}（速度是 FP32 的 {bf16_speedup:x}），FP16 要 "
                 "{timings.fp16}（{fp16_speedup:x}）。两种半精度结果与 FP64 参考的相对误差都在各自 eps 的量级：BF16 {bf16_err:.1e}，"
                 "FP16 {fp16_err:.1e}。",
       expect={"bf16_dtype": "torch.bfloat16", "fp16_dtype": "torch.float16", "bf16_err": {"<": 0.02},
               "fp16_err": {"<": 0.005}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    n = 256
    a, b = (torch.randn(n, n, generator=g).to(ctx.device) for _ in range(2))
    ab, bb, ah, bh = a.bfloat16(), b.bfloat16(), a.half(), b.half()
    t = timing.compare({"fp32": lambda: a @ b, "bf16": lambda: ab @ bb, "fp16": lambda: ah @ bh},
                       rounds=11, warmup=2, inner=3, device=ctx.device)
    ref = a.double() @ b.double()

    def err(c):
        return ((c.double() - ref).norm() / ref.norm()).item()

    return {"n": n, "hardware": _hardware(ctx.device), "cpu_flags": _cpu_flags(),
            "timings": t, "bf16_speedup": timing.ratio(t, "fp32", "bf16"),
            "fp16_speedup": timing.ratio(t, "fp32", "fp16"), "bf16_dtype": str((ab @ bb).dtype),
            "fp16_dtype": str((ah @ bh).dtype), "bf16_err": err(ab @ bb), "fp16_err": err(ah @ bh)}
