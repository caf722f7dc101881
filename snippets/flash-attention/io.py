"""The paper's IO analysis on published shared-memory sizes: tile sizes and HBM traffic (arithmetic only).

FlashAttention (Dao et al. 2022), Algorithm 1: block sizes B_c = ceil(M / 4d), B_r = min(B_c, d), with M the
on-chip SRAM in elements; Theorem 2: standard attention makes Theta(N d + N^2) HBM accesses, FlashAttention
Theta(N^2 d^2 / M). Here M is the shared memory one thread block may use on a compute capability (the CUDA
programming guide's table), in FP16 elements. Real kernels (FlashAttention-2/3) pick their tiles by tuning;
nothing here is what they pick.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "flash-attention"
FP16 = 2  # bytes per element
N = 4096
HEAD_DIMS = (64, 128)
GPUS = {"h100": "H100 SXM", "a100": "A100 SXM 80GB"}


def sram_elements(ctx, gpu):
    """M of the paper: the shared memory a block may use on this GPU's compute capability, in FP16 elements."""
    budget = int(specs.get(ctx, specs.capability_of(gpu), "max_shared_per_block"))
    return budget, budget // FP16


def paper_tiles(m, d):
    """Algorithm 1, line 1: B_c = ceil(M / 4d), B_r = min(B_c, d)."""
    bc = -(-m // (4 * d))
    return bc, min(bc, d)


def tile_footprint(bc, br, d):
    """Elements on chip at once in Algorithm 1: Q_i and O_i (B_r x d), K_j and V_j (B_c x d), S_ij (B_r x B_c)."""
    return 2 * br * d + 2 * bc * d + br * bc


def standard_accesses(n, d):
    """Algorithm 0: read Q, K and write S; read S and write P; read P, V and write O (elements)."""
    return (2 * n * d + n * n) + (n * n + n * n) + (n * n + n * d + n * d)


def flash_accesses(n, d, bc):
    """Algorithm 1, counted line by line (elements): O, l, m initialised in HBM; K_j, V_j read once;
    for each of the T_c key blocks, every Q_i, O_i, l_i, m_i read and O_i, l_i, m_i written."""
    tc = -(-n // bc)
    return (n * d + 2 * n) + 2 * n * d + tc * ((2 * n * d + 2 * n) + (n * d + 2 * n))


@claim(
    "flash.tile-sizes-spec",
    question=Q,
    statement="论文（Dao 等 2022，Algorithm 1）按片上 SRAM 定块大小：B_c = ⌈M/(4d)⌉，B_r = min(B_c, d)，M 是 SRAM 能放的元素数。"
              "把 M 取成一个线程块最多可用的 shared memory、按 FP16 折算：H100（计算能力 9.0）是 {h100.budget:bytes}，M = {h100.m:,}，"
              "d={=64} 时 B_c = {h100.d64.bc}、B_r = {h100.d64.br}，d={=128} 时 B_c = {h100.d128.bc}、B_r = {h100.d128.br}；"
              "A100（8.0）是 {a100.budget:bytes}，两种 d 下 B_c = {a100.d64.bc} 和 {a100.d128.bc}。"
              "这组块在片上至少要同时放 Q_i、O_i、K_j、V_j 和 S_ij：H100 上 d=64 时共 {h100.d64.footprint:bytes}，"
              "{h100.d64.fits:?放得下|放不下}；d=128 时 {h100.d128.footprint:bytes}，{h100.d128.fits:?放得下|超出了预算}，"
              "A100 上 d=128 也{a100.d128.fits:?放得下|超出}。公式给的是量级，常数要靠实现自己调。",
    expect={"h100": {"budget": 232448, "m": 116224,
                     "d64": {"bc": 454, "br": 64, "footprint": 190720, "fits": True},
                     "d128": {"bc": 227, "br": 128, "footprint": 239872, "fits": False}},
            "a100": {"budget": 166912, "m": 83456,
                     "d64": {"bc": 326, "br": 64, "footprint": 141568, "fits": True},
                     "d128": {"bc": 163, "br": 128, "footprint": 190720, "fits": False}}},
)
def _(ctx):
    out = {}
    for key, gpu in GPUS.items():
        budget, m = sram_elements(ctx, gpu)
        out[key] = {"budget": budget, "m": m}
        for d in HEAD_DIMS:
            bc, br = paper_tiles(m, d)
            footprint = tile_footprint(bc, br, d) * FP16
            out[key][f"d{d}"] = {"bc": bc, "br": br, "footprint": footprint, "fits": footprint <= budget}
    return out


@claim(
    "flash.hbm-traffic-spec",
    question=Q,
    statement="再按论文的两个算法逐行数 HBM 读写（FP16，一个 head，N={=4096}，H100 上按上面的 B_c）：标准 attention 写出再读回 S 和 P，"
              "d=64 时共 {d64_standard:bytes}；FlashAttention 只读写 Q、K、V、O 和每行的 m、l，共 {d64_flash:bytes}，标准实现是它的 "
              "{d64_ratio:x}；d=128 时是 {d128_standard:bytes} 对 {d128_flash:bytes}（{d128_ratio:x}）。"
              "N 再大，这个比值也只趋于 4·B_c/(3d+4)，d=64 时 {d64_limit:.1f}、d=128 时 {d128_limit:.1f}：省多少看 SRAM 装得下几个 d×d，"
              "这就是 Θ(N·d + N²) 对 Θ(N²·d²/M)。换成时间下限（H100 SXM 的 HBM 带宽与 FP16 稠密算力），d=64 时标准实现光读写就要 "
              "{d64_standard_s:time}，是两次矩阵乘算力下限 {d64_compute_s:time} 的 {d64_standard_over_compute:x}；"
              "FlashAttention 的读写下限 {d64_flash_s:time}，与算力下限同一量级（{d64_flash_over_compute:x}）。",
    expect={"d64_standard": 136314880, "d64_flash": 17645568, "d64_ratio": {"approx": [7.725, 1e-3]},
            "d64_limit": {"approx": [9.265, 1e-3]}, "d64_standard_over_compute": {">": 5},
            "d64_flash_over_compute": {"between": [0.5, 2.0]},
            "d128_standard": 138412032, "d128_flash": 63553536, "d128_ratio": {"approx": [2.178, 1e-3]},
            "d128_limit": {"approx": [2.340, 1e-3]}},
)
def _(ctx):
    _, m = sram_elements(ctx, GPUS["h100"])
    bandwidth = specs.get(ctx, GPUS["h100"], "hbm_bytes_per_s")
    flops = specs.get(ctx, GPUS["h100"], "fp16_dense_flops")
    out = {}
    for d in HEAD_DIMS:
        bc, _ = paper_tiles(m, d)
        standard = standard_accesses(N, d) * FP16
        flash = flash_accesses(N, d, bc) * FP16
        compute_s = 4 * N * N * d / flops  # Q K^T and P V: 2 N^2 d FLOP each
        values = {"bc": bc, "standard": standard, "flash": flash, "ratio": standard / flash,
                  "limit": 4 * bc / (3 * d + 4),  # 4 N^2 against N / B_c sweeps of N (3d + 4) each
                  "standard_s": standard / bandwidth, "flash_s": flash / bandwidth, "compute_s": compute_s,
                  "standard_over_compute": standard / bandwidth / compute_s,
                  "flash_over_compute": flash / bandwidth / compute_s}
        out |= {f"d{d}_{k}": v for k, v in values.items()}  # expectations name top-level keys
    return out
