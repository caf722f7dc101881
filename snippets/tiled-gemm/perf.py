"""On a GPU: the same GEMM on Tensor Cores (bf16) and on CUDA cores (fp32 with TF32 off), timed with torch only."""

from __future__ import annotations

import torch

from verify import timing
from verify.claim import claim

Q = "tiled-gemm"
N = 4096


@claim(
    "tgemm.cuda-tensor-core-ratio",
    question=Q,
    needs=["cuda"],
    kind="perf",
    statement="在 GPU 上（为 H200 录制而写：预期 bf16 比 fp32 快一个数量级，断言只取一个保守的下限）：{=4096}³ 的 `torch.matmul`，"
              "bf16（Tensor Core）{timings.bf16}，关掉 TF32 的 fp32（CUDA core）{timings.fp32}，快 {ratio:x}；"
              "bf16 跑出 {bf16_tflops:.0f} TFLOP/s，fp32 {fp32_tflops:.1f} TFLOP/s（这台机器上的观测值）。",
    expect={"ratio": {">": 4}, "tf32_restored": True, "fp32_close": True},
)
def _(ctx):
    """4096³ 的 `torch.matmul`：bf16（Tensor Core）与关掉 TF32 的 fp32（CUDA core）的耗时之比和 TFLOP/s。"""
    g = torch.Generator(device="cuda").manual_seed(0)
    a32 = torch.randn(N, N, device="cuda", generator=g)
    b32 = torch.randn(N, N, device="cuda", generator=g)
    a16, b16 = a32.to(torch.bfloat16), b32.to(torch.bfloat16)
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 GEMMs on CUDA cores (FFMA), not TF32 Tensor Cores
    try:
        ref = (a32.double() @ b32.double()).float()
        fp32_close = bool(torch.allclose(a32 @ b32, ref, rtol=1e-4, atol=1e-3))
        t = timing.compare({"bf16": lambda: a16 @ b16, "fp32": lambda: a32 @ b32},
                           rounds=15, warmup=3, inner=10, device="cuda")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    flop = 2 * N**3
    return {"n": N, "timings": t, "ratio": timing.ratio(t, "fp32", "bf16"),
            "bf16_tflops": flop / t["bf16"]["median_s"] / 1e12, "fp32_tflops": flop / t["fp32"]["median_s"] / 1e12,
            "fp32_close": fp32_close, "tf32_restored": torch.backends.cuda.matmul.allow_tf32 == saved,
            "gpu": torch.cuda.get_device_name()}
