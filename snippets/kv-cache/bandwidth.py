"""One decode step against HBM bandwidth: the bytes it has to read for a Llama-2-7B-shaped model
(every weight once, plus the KV cache of every sequence in the batch), the time that bounds the
step from below on an H100, and its arithmetic intensity against the GPU's ridge point.

Spec arithmetic, not a measurement: the model's configuration is given (Llama-2-7B's published
shapes) and the GPU's bandwidth and Tensor Core rate come from ``snippets._gpu.specs``.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "kv-cache"

# Llama-2-7B's configuration (given inputs): layers, query heads, head_dim, width, MLP width, vocabulary.
LAYERS, HEADS, HEAD_DIM, D, FFN, VOCAB = 32, 32, 128, 4096, 11008, 32000
CTX = 4096  # positions already in each sequence's cache
BATCHES = (1, 8, 32)
FP16 = 2  # bytes per element of the weights and of the cache
GPU = "H100 SXM"


def _shapes(kv_heads=HEADS, kv_elem=FP16):
    """Per-token counts of one decode step of the model with ``kv_heads`` K/V heads."""
    q_o = 2 * D * HEADS * HEAD_DIM  # W_q and W_o
    k_v = 2 * D * kv_heads * HEAD_DIM  # W_k and W_v
    mlp = 3 * D * FFN  # gate, up, down
    matmul_params = LAYERS * (q_o + k_v + mlp) + VOCAB * D  # every matmul weight, the LM head included
    read_params = matmul_params + LAYERS * 2 * D + D  # plus the RMSNorm weights; the embedding table is gathered, not read
    return {
        "read_bytes": read_params * FP16,
        "all_bytes": (read_params + VOCAB * D) * FP16,  # what has to fit in memory: the embedding table too
        "kv_per_seq": 2 * LAYERS * kv_heads * HEAD_DIM * CTX * kv_elem,
        "weight_flops": 2 * matmul_params,  # per token: a multiply and an add per weight
        "attn_flops": 4 * LAYERS * HEADS * HEAD_DIM * CTX,  # q·Kᵀ and P·V over CTX positions, every query head
    }


@claim("kvcache.decode-hbm-bound", question=Q,
       statement="按 Llama-2-7B 的配置（{=32} 层、{=32} 个头、head_dim {=128}，权重和 KV 都是 FP16），每条序列已缓存 "
                 "{=4096} 个 token 时，解码一步要从 HBM 读一遍除 embedding 表外的全部权重（{weight_read_gb:.1f} GB，"
                 "batch 里的所有序列共用这一次读），再加上每条序列各自的整个 KV cache：batch {=1}、{=8}、{=32} 时一共 "
                 "{gb.b1:.1f}、{gb.b8:.1f}、{gb.b32:.1f} GB。按 H100 SXM 的 HBM 带宽 {hbm_tb_s:.2f} TB/s，"
                 "一步至少要 {t_ms.b1:.2f}、{t_ms.b8:.2f}、{t_ms.b32:.1f} ms；同一步的 FLOPs 按 FP16 稠密 Tensor Core "
                 "峰值只要 {compute_ms.b1:.3f}、{compute_ms.b8:.2f}、{compute_ms.b32:.2f} ms。batch {=32} 时权重加缓存"
                 "共 {total_gb_b32:.1f} GB，{fits_b32:?放得进|已经放不进} H100 的 {hbm_gb:.0f} GB 显存。",
       expect={"weight_read": 2 * (32 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) + 4096 + 32000 * 4096),
               "kv_per_seq": 2 * 32 * 32 * 128 * 4096 * 2, "weight_flops": 13214154752,
               "memory_over_compute_b32": {">": 10}, "fits_b32": False})
def _(ctx):
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    peak = specs.get(ctx, GPU, "fp16_dense_flops")
    hbm = specs.get(ctx, GPU, "hbm_bytes")
    m = _shapes()
    out = {"weight_read": m["read_bytes"], "kv_per_seq": m["kv_per_seq"], "weight_flops": m["weight_flops"],
           "weight_read_gb": m["read_bytes"] / 1e9, "hbm_tb_s": bw / 1e12, "hbm_gb": hbm / 1e9,
           "bytes": {}, "gb": {}, "t_ms": {}, "compute_ms": {}}
    for b in BATCHES:
        nbytes = m["read_bytes"] + b * m["kv_per_seq"]
        flops = b * (m["weight_flops"] + m["attn_flops"])
        out["bytes"][f"b{b}"] = nbytes
        out["gb"][f"b{b}"] = nbytes / 1e9
        out["t_ms"][f"b{b}"] = nbytes / bw * 1e3
        out["compute_ms"][f"b{b}"] = flops / peak * 1e3
    total = m["all_bytes"] + 32 * m["kv_per_seq"]
    out.update(total_gb_b32=total / 1e9, fits_b32=total <= hbm,
               memory_over_compute_b32=out["t_ms"]["b32"] / out["compute_ms"]["b32"])
    return out


@claim("kvcache.decode-intensity", question=Q,
       statement="同一步每读一个字节做多少次 FLOP（算术强度）：batch {=1}、{=8}、{=32} 时是 {intensity.b1:.2f}、"
                 "{intensity.b8:.2f}、{intensity.b32:.2f}，而 H100 SXM 的拐点（FP16 稠密算力 ÷ HBM 带宽）是 {ridge:.0f}，"
                 "解码远在带宽受限的一侧。权重部分每个参数占 {=2 字节}、每个 token 对它做 {=2} 次 FLOP，强度约等于 batch，"
                 "batch 能摊薄它；KV 部分每条序列只给自己用，MHA、FP16 下强度恒为 {kv_intensity.mha_fp16:.1f}，"
                 "batch 再大，整体强度也封顶在 {cap:.1f}。假如同一个模型只用 {=8} 个 KV 头（GQA），KV 部分的强度是 "
                 "{kv_intensity.gqa8_fp16:.1f}，KV 再存成 FP8 是 {kv_intensity.gqa8_fp8:.1f}；batch {=32} 时一步的下界"
                 "随之降到 {t_ms_b32.gqa8_fp16:.1f} ms 和 {t_ms_b32.gqa8_fp8:.1f} ms。",
       expect={"kv_intensity": {"mha_fp16": 1.0, "gqa8_fp16": 4.0, "gqa8_fp8": 8.0}, "ridge_over_100": True,
               "intensity_below_ridge": True})
def _(ctx):
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    ridge = specs.get(ctx, GPU, "fp16_dense_flops") / bw
    m = _shapes()
    intensity = {f"b{b}": b * (m["weight_flops"] + m["attn_flops"]) / (m["read_bytes"] + b * m["kv_per_seq"])
                 for b in BATCHES}
    variants = {"mha_fp16": _shapes(), "gqa8_fp16": _shapes(kv_heads=8), "gqa8_fp8": _shapes(kv_heads=8, kv_elem=1)}
    kv_intensity = {k: v["attn_flops"] / v["kv_per_seq"] for k, v in variants.items()}
    t_b32 = {k: (v["read_bytes"] + 32 * v["kv_per_seq"]) / bw * 1e3 for k, v in variants.items() if k != "mha_fp16"}
    return {"intensity": intensity, "ridge": ridge, "ridge_over_100": ridge > 100,
            "intensity_below_ridge": max(intensity.values()) < ridge / 10,
            "cap": (m["weight_flops"] + m["attn_flops"]) / m["kv_per_seq"], "kv_intensity": kv_intensity,
            "t_ms_b32": t_b32}
