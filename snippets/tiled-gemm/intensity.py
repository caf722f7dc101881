"""Arithmetic intensity of a GEMM tile against the ridge points of the spec table (no kernel runs)."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "tiled-gemm"
TILES = [(64, 64), (128, 128), (128, 256), (256, 256)]


def tile_intensity(bm: int, bn: int, bk: int = 64, elem: int = 2) -> float:
    """FLOP per byte a BM x BN tile loads from global memory per K slice: 2*BM*BN*BK / ((BM*BK + BK*BN)*elem)."""
    return 2 * bm * bn * bk / ((bm * bk + bk * bn) * elem)


@claim(
    "tgemm.ridge-points",
    question=Q,
    statement="按规格表（dense，不含稀疏），bf16 Tensor Core 峰值 ÷ HBM 带宽的 ridge point：A100 SXM {ridge.a100:.0f}、"
              "H100 SXM {ridge.h100:.0f}、H200 SXM {ridge.h200:.0f} FLOP/字节——H200 算力与 H100 相同、带宽更高，所以更低。"
              "而一个 {=4096³} 的 bf16 GEMM 若三个矩阵各只读写一次，算术强度是 {gemm_4096:.0f} FLOP/字节，远在 ridge 之上。",
    expect={"h200_below_h100": True, "gemm_above_ridges": True},
)
def _(ctx):
    names = {"a100": "A100 SXM 80GB", "h100": "H100 SXM", "h200": "H200 SXM"}
    ridge = {k: specs.get(ctx, n, "bf16_dense_flops") / specs.get(ctx, n, "hbm_bytes_per_s") for k, n in names.items()}
    n = 4096
    gemm = 2 * n**3 / (3 * n * n * 2)
    return {"ridge": ridge, "gemm_4096": gemm, "h200_below_h100": ridge["h200"] < ridge["h100"],
            "gemm_above_ridges": all(gemm > r for r in ridge.values())}


@claim(
    "tgemm.tile-intensity",
    question=Q,
    statement="一个 BM×BN 的 tile 沿 K 每走一段 BK，从 global 读 BM·BK + BK·BN 个 fp16、做 2·BM·BN·BK 次浮点运算，"
              "强度 = BM·BN/(BM+BN)，与 BK 无关：64×64、128×128、128×256、256×256 分别是 {intensity}。"
              "对照 H100 SXM 的 ridge point，如果每次 tile 加载都来自 HBM，这几个 tile 全都{verdict}；"
              "方 tile 要 BM ≥ {square_needed} 才够，它的 fp32 累加器有 {acc_bytes:bytes}，是一个 SM 寄存器堆（{regfile:bytes}）的 {acc_over_regfile:.1f} 倍。",
    expect={"none_reach": True, "bk_free": True, "acc_over_regfile": {">": 1}},
)
def _(ctx):
    ridge = specs.get(ctx, "H100 SXM", "bf16_dense_flops") / specs.get(ctx, "H100 SXM", "hbm_bytes_per_s")
    values = [round(tile_intensity(bm, bn), 1) for bm, bn in TILES]
    square = 2 * ridge  # BM*BM/(2*BM) = BM/2 >= ridge
    square_needed = int(-(-square // 16) * 16)  # rounded up to a multiple of 16, as tile sizes are
    regfile = int(specs.get(ctx, "9.0", "registers_per_sm")) * 4
    acc = square_needed**2 * 4
    return {"intensity": values, "ridge": ridge, "largest_over_ridge": values[-1] / ridge, "square_needed": square_needed, "acc_bytes": acc,
            "regfile": regfile, "acc_over_regfile": acc / regfile,
            "none_reach": all(v < ridge for v in values),
            "verdict": "低于 ridge，是带宽受限的" if all(v < ridge for v in values) else "有的够到了 ridge",
            "bk_free": tile_intensity(128, 128, 32) == tile_intensity(128, 128, 128)}


@claim(
    "tgemm.tensor-core-vs-fp32-spec",
    question=Q,
    statement="规格表里 H100 SXM 的 dense bf16 Tensor Core 峰值是 CUDA core fp32 峰值的 {bf16_over_fp32:.1f} 倍，"
              "TF32 Tensor Core 是 {tf32_over_fp32:.1f} 倍；H200 SXM 的 bf16 Tensor Core 与 fp32 峰值{h200_same:?都与 H100 SXM 相同|与 H100 SXM 不同}。",
    expect={"bf16_over_fp32": {">": 10}, "h200_same": True},
)
def _(ctx):
    h100 = {f: specs.get(ctx, "H100 SXM", f) for f in ("bf16_dense_flops", "tf32_dense_flops", "fp32_flops")}
    h200 = {f: specs.get(ctx, "H200 SXM", f) for f in ("bf16_dense_flops", "fp32_flops")}
    return {"bf16_over_fp32": h100["bf16_dense_flops"] / h100["fp32_flops"],
            "tf32_over_fp32": h100["tf32_dense_flops"] / h100["fp32_flops"],
            "h200_same": all(h200[f] == h100[f] for f in h200)}
