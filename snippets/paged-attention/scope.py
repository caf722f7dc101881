"""Where "prefill is compute-bound, decode attention has the intensity of the head ratio" holds: how many
rows a prefill matmul needs to cross the ridge on two GPUs, and decode attention's arithmetic intensity for
MHA, GQA, an FP8 KV cache and DeepSeek-V3's MLA, against the ridges of both GPUs.

Spec arithmetic, not a measurement: the models' shapes are given (published configurations), the GPUs'
numbers come from ``snippets._gpu.specs``.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "paged-attention"
GPUS = {"h100": "H100 SXM", "h200": "H200 SXM"}
N = K = 4096  # a 4096x4096 bf16 weight matrix, as in paged.prefill-vs-decode-intensity
BF16, FP8 = 2, 1
SHORT = 128  # tokens of a short prompt prefilled alone


def _intensity(m, n=N, k=K):
    """FLOPs per byte of an (m×k)·(k×n) bf16 matmul reading both inputs and writing the output once."""
    return 2 * m * n * k / ((m * k + k * n + m * n) * BF16)


@claim("paged.prefill-ridge-rows", question=Q,
       statement="prefill 的矩阵乘行数是这一步所有请求的提示词 token 数之和（batch × 提示词长度；开了 chunked prefill 时是这一步"
                 "调度进来的 token 数，受 max_num_batched_tokens 限制）。同一个 "
                 "{=4096}×{=4096} 的 bf16 权重矩阵，要至少 {rows.h200} 行才越过 H200 SXM 的拐点（{ridge.h200:.0f}），"
                 "H100 SXM 带宽低、拐点高（{ridge.h100:.0f}），要 {rows.h100} 行；一条 {=128} 个 token 的提示词单独 prefill，"
                 "强度只有 {short:.0f}，在两张卡上都{short_below:?还在拐点之下|已过拐点}。",
       expect={"rows": {"h100": 346, "h200": 230}, "short_below": True, "closed_form_ok": True})
def _(ctx):
    """范围：一个 4096×4096 的 bf16 权重矩阵"""
    ridge, rows = {}, {}
    closed_ok = True
    for key, gpu in GPUS.items():
        r = specs.get(ctx, gpu, "bf16_dense_flops") / specs.get(ctx, gpu, "hbm_bytes_per_s")
        m = 1
        while _intensity(m) < r:
            m += 1
        ridge[key], rows[key] = r, m
        closed_ok &= abs(m - r * N / (N - 2 * r)) < 1  # m·n/(2m + n) = r solved for m, n = k
    short = _intensity(SHORT)
    return {"ridge": ridge, "rows": rows, "short": short, "short_below": all(short < r for r in ridge.values()),
            "closed_form_ok": closed_ok}


# Llama-3-8B: 32 query heads, 8 KV heads, head_dim 128; DeepSeek-V3's MLA: 128 heads sharing one latent of
# 512 plus a 64-wide RoPE key per position (absorbed form, as decode kernels run it)
HQ, HKV, HD = 32, 8, 128
MLA_HEADS, MLA_LATENT, MLA_ROPE = 128, 512, 64


def _gqa(hq, hkv, kv_bytes):
    """Per cached position: q·k and p·v for every query head, over K and V of every KV head."""
    return (4 * hq * HD) / (2 * hkv * HD * kv_bytes)


def _mla(kv_bytes):
    """Per cached position: every head's q·[c, k_rope] and p·c, over one stored [c, k_rope]."""
    flops = MLA_HEADS * (2 * (MLA_LATENT + MLA_ROPE) + 2 * MLA_LATENT)
    return flops / ((MLA_LATENT + MLA_ROPE) * kv_bytes)


@claim("paged.decode-attn-intensity-variants", question=Q,
       statement="decode 注意力的强度（每读一个字节的 KV 做几次 FLOP）只在 bf16 的 MHA/GQA 下等于查询头数与 KV 头数之比："
                 "{=32} 个查询头时，MHA（{=32} 个 KV 头）是 {mha_bf16:.0f}，GQA（{=8} 个）是 {gqa_bf16:.0f}；KV 存成 FP8，"
                 "字节减半，GQA 变成 {gqa_fp8:.0f}。DeepSeek-V3 的 MLA 让 {=128} 个头共用每个位置一份 {=512} 维潜在向量"
                 "（外加 {=64} 维 RoPE 键），吸收权重后的 decode 每读一个 bf16 字节做 {mla_bf16:.0f} 次 FLOP，"
                 "{mla_above.h200:?已超过|仍低于} H200 SXM 的拐点 {ridge.h200:.0f}，在 H100 SXM（拐点 {ridge.h100:.0f}）上"
                 "{mla_above.h100:?也已超过|仍略低于}拐点：已在拐点附近，不再是远低于拐点的"
                 "带宽受限（这是所有头在同一张卡上时；按头切到几张卡上，每张卡仍读整份潜在向量，强度按卡数缩小）。",
       expect={"mha_bf16": 1.0, "gqa_bf16": 4.0, "gqa_fp8": 8.0, "mla_bf16": {"approx": [278528 / 1152, 1e-12]},
               "mla_above": {"h100": False, "h200": True}})
def _(ctx):
    """范围：Llama-3-8B 的头数、DeepSeek-V3 的 MLA 形状"""
    ridge = {key: specs.get(ctx, gpu, "bf16_dense_flops") / specs.get(ctx, gpu, "hbm_bytes_per_s")
             for key, gpu in GPUS.items()}
    mla = _mla(BF16)
    return {"mha_bf16": _gqa(HQ, HQ, BF16), "gqa_bf16": _gqa(HQ, HKV, BF16), "gqa_fp8": _gqa(HQ, HKV, FP8),
            "mla_bf16": mla, "ridge": ridge, "mla_above": {key: mla > r for key, r in ridge.items()}}
