"""Why fusion pays for an element-wise chain and hardly for a large GEMM: roofline arithmetic on the spec table.

No kernel runs: every number is published peak rates and bandwidths (``snippets._gpu.specs``)
combined with a byte and FLOP count of the workload. The page marks these claims 按规格计算.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "graph-fusion"
GPUS = {"a100": "A100 SXM 80GB", "h100": "H100 SXM", "h200": "H200 SXM"}
CHAIN_OPS = 3  # relu(x * 2 + 1): a multiply, an add and a max per element
FP32 = 4  # bytes per element
N_CHAIN = 1 << 26  # the size gpu-fusion.bandwidth measures
GEMM = 4096  # M = N = K of the GEMM, bf16


@claim(
    "roofline.elementwise",
    question=Q,
    statement="先按规格表（dense，不含稀疏）算 ridge point，即峰值算力 ÷ HBM 带宽：bf16 Tensor Core 在 A100 SXM、H100 SXM、H200 SXM 上是 "
              "{ridge_bf16.a100:.0f} / {ridge_bf16.h100:.0f} / {ridge_bf16.h200:.0f} FLOP/字节；逐元素算子跑在 CUDA core 上，"
              "H100 SXM 的 fp32 峰值对应的 ridge 也有 {ridge_fp32.h100:.0f} FLOP/字节。fp32 的 `relu(x * 2 + 1)` 每个元素 {=3} 次运算："
              "不融合时三个 kernel 各读一遍、写一遍，每元素搬 {unfused_bytes} 字节，算术强度 {unfused_intensity:.3f} FLOP/字节；"
              "融合后只搬 {fused_bytes} 字节，强度 {fused_intensity:.3f}，仍只有 fp32 ridge 的 {fused_over_ridge_fp32:pct}，"
              "所以两种写法都是带宽受限，时间由字节数决定：{=1 << 26} 个元素在 H100 SXM 上按 HBM 带宽算，"
              "融合前至少 {unfused_us.h100:.0f} µs，融合后至少 {fused_us.h100:.0f} µs，H200 SXM 上是 {unfused_us.h200:.0f} 和 {fused_us.h200:.0f} µs。",
    expect={"unfused_bytes": 24, "fused_bytes": 8, "below_every_ridge": True, "bytes_ratio": 3.0},
)
def _(ctx):
    ridge_bf16 = {k: specs.get(ctx, n, "bf16_dense_flops") / specs.get(ctx, n, "hbm_bytes_per_s") for k, n in GPUS.items()}
    ridge_fp32 = {k: specs.get(ctx, n, "fp32_flops") / specs.get(ctx, n, "hbm_bytes_per_s") for k, n in GPUS.items()}
    bw = {k: specs.get(ctx, n, "hbm_bytes_per_s") for k, n in GPUS.items()}
    unfused_bytes = CHAIN_OPS * 2 * FP32  # each of the three kernels reads its input and writes its output
    fused_bytes = 2 * FP32  # the fused kernel reads x once and writes the result once
    unfused_intensity = CHAIN_OPS / unfused_bytes
    fused_intensity = CHAIN_OPS / fused_bytes
    return {
        "ridge_bf16": ridge_bf16,
        "ridge_fp32": ridge_fp32,
        "unfused_bytes": unfused_bytes,
        "fused_bytes": fused_bytes,
        "bytes_ratio": unfused_bytes / fused_bytes,
        "unfused_intensity": unfused_intensity,
        "fused_intensity": fused_intensity,
        "fused_over_ridge_fp32": fused_intensity / ridge_fp32["h100"],
        "below_every_ridge": all(fused_intensity < r for r in (*ridge_bf16.values(), *ridge_fp32.values())),
        "n": N_CHAIN,
        "unfused_us": {k: unfused_bytes * N_CHAIN / b * 1e6 for k, b in bw.items()},
        "fused_us": {k: fused_bytes * N_CHAIN / b * 1e6 for k, b in bw.items()},
    }


@claim(
    "roofline.gemm-epilogue",
    question=Q,
    statement="同样按 H100 SXM 的规格算 GEMM：{=4096}×{=4096}×{=4096} 的 bf16 GEMM 若三个矩阵各只读写一次，强度是 {gemm_intensity:.0f} FLOP/字节，"
              "远在 ridge 之上，按 dense 峰值至少要 {gemm_us:.0f} µs；epilogue（bias + ReLU）若是单独一个 kernel，要把 C 读一遍、写一遍，"
              "共 {epilogue_bytes:bytes}，按 HBM 带宽至少 {epilogue_us:.1f} µs。融进 GEMM 省下的就是这一趟，占两者之和的 {gemm_saved_share:pct}；"
              "K 加倍到 {=8192} 时降到 {gemm_saved_share_k8192:pct}。上面的逐元素链融合省下的是 {chain_saved_share:pct}。",
    expect={"gemm_above_ridge": True, "chain_saves_more": True},
)
def _(ctx):
    gpu = GPUS["h100"]
    peak = specs.get(ctx, gpu, "bf16_dense_flops")
    bw = specs.get(ctx, gpu, "hbm_bytes_per_s")
    ridge = peak / bw
    bf16 = 2

    def share(m: int, n: int, k: int) -> tuple[float, float, float, float]:
        flops = 2 * m * n * k
        gemm_s = flops / peak  # compute-bound: the bound is the peak rate
        epilogue_bytes = 2 * m * n * bf16  # read C, write C (the bias vector is negligible)
        epilogue_s = epilogue_bytes / bw
        return gemm_s, epilogue_bytes, epilogue_s, epilogue_s / (gemm_s + epilogue_s)

    gemm_s, epilogue_bytes, epilogue_s, saved = share(GEMM, GEMM, GEMM)
    *_, saved_k8192 = share(GEMM, GEMM, 2 * GEMM)
    intensity = 2 * GEMM**3 / (3 * GEMM * GEMM * bf16)
    chain_saved = 1 - (2 * FP32) / (CHAIN_OPS * 2 * FP32)
    return {
        "ridge": ridge,
        "gemm_intensity": intensity,
        "gemm_above_ridge": intensity > ridge,
        "gemm_us": gemm_s * 1e6,
        "epilogue_bytes": epilogue_bytes,
        "epilogue_us": epilogue_s * 1e6,
        "gemm_saved_share": saved,
        "gemm_saved_share_k8192": saved_k8192,
        "chain_saved_share": chain_saved,
        "chain_saves_more": chain_saved > saved,
    }
