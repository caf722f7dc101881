"""Prefill against decode on an H200, from published specs: the bytes one decode step reads for a
Llama-3-8B-shaped model, the arithmetic intensity of its matmuls and of attention on each side of the
ridge point, how many requests fit with and without paging (and what that does to decode throughput),
and why a one-token query leaves SMs idle without a split along the keys.

Spec arithmetic, not a measurement: the model's shapes are given (Llama-3-8B's published
configuration) and the GPU's numbers come from ``snippets._gpu.specs``.
"""

from __future__ import annotations

import math

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "paged-attention"
GPU = "H200 SXM"

# Llama-3-8B (given): layers, hidden, query heads, KV heads, head_dim, MLP width, vocabulary; bf16.
LAYERS, D, HQ, HKV, HD, FFN, VOCAB = 32, 4096, 32, 8, 128, 14336, 128256
BF16 = 2
BLOCK, MAX_LEN, N_REQ = 16, 2048, 256
TIGHT = 8e9  # a KV budget of 8 GB: the memory left when the weights take most of the card


def _params():
    per_layer = 2 * D * HQ * HD + 2 * D * HKV * HD + 3 * D * FFN + 2 * D  # q, o; k, v; MLP; two RMSNorms
    matmul = LAYERS * (2 * D * HQ * HD + 2 * D * HKV * HD + 3 * D * FFN) + VOCAB * D  # the LM head included
    total = LAYERS * per_layer + D + 2 * VOCAB * D  # embedding and LM head are separate matrices
    return {"total": total, "read": total - VOCAB * D, "matmul": matmul}  # the embedding is gathered, not read


KV_PER_TOKEN = 2 * LAYERS * HKV * HD * BF16  # K and V, every layer


def _step(batch, ctx_tokens):
    """Bytes read and FLOPs of one decode step: every weight once, every sequence's whole cache."""
    p = _params()
    nbytes = p["read"] * BF16 + batch * ctx_tokens * KV_PER_TOKEN
    flops = batch * (2 * p["matmul"] + 4 * LAYERS * HQ * HD * ctx_tokens)
    return nbytes, flops


@claim("paged.decode-step-bytes", question=Q,
       statement="按 Llama-3-8B 的形状（{=32} 层、{=32} 个查询头、{=8} 个 KV 头、head_dim {=128}，bf16），每个 token "
                 "的 KV 是 {kv_per_token:bytes}。batch {=64}、每条序列已有 {=4096} 个 token 时，解码一步要读权重 "
                 "{weights_gb:.1f} GB（embedding 表不算：每步只按 token 取其中几行）加 KV {kv_gb:.1f} GB；按 H200 SXM 的 HBM 带宽 {hbm_tb_s:.1f} TB/s 至少 "
                 "{t_mem_ms:.1f} ms，同一步的 FLOPs 按 bf16 稠密峰值只要 {t_compute_ms:.2f} ms。",
       expect={"kv_per_token": 131072, "memory_over_compute": {">": 5}})
def _(ctx):
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    nbytes, flops = _step(64, 4096)
    w = _params()["read"] * BF16
    return {"kv_per_token": KV_PER_TOKEN, "weights_gb": w / 1e9, "kv_gb": (nbytes - w) / 1e9,
            "hbm_tb_s": bw / 1e12, "t_mem_ms": nbytes / bw * 1e3, "t_compute_ms": flops / peak * 1e3,
            "memory_over_compute": (nbytes / bw) / (flops / peak)}


def _linear_intensity(m, n=D, k=D):
    """FLOPs per byte of an (m×k)·(k×n) bf16 matmul that reads both inputs and writes the output once."""
    return 2 * m * n * k / ((m * k + k * n + m * n) * BF16)


@claim("paged.prefill-vs-decode-intensity", question=Q,
       statement="H200 SXM 的拐点（bf16 稠密算力 ÷ HBM 带宽）是每字节 {ridge:.0f} 次 FLOP。一个 {=4096}×{=4096} 的 "
                 "bf16 权重矩阵乘：decode 时行数是 batch，batch {=1}、{=64} 的算术强度是 {lin.m1:.2f}、{lin.m64:.1f}；"
                 "prefill 一次喂 {=4096} 个 token，强度 {lin.m4096:.0f}，越过拐点。注意力也一样：decode 时一个查询 "
                 "token 读整段 KV，bf16 的 GQA 下强度恒为查询头数与 KV 头数之比 {attn_decode:.0f}；{=4096} 个 token 的因果 prefill "
                 "（Q、K、V、O 各读写一次）是 {attn_prefill:.0f}。",
       expect={"attn_decode": 4.0, "decode_below": True, "prefill_above": True})
def _(ctx):
    ridge = specs.get(ctx, GPU, "bf16_dense_flops") / specs.get(ctx, GPU, "hbm_bytes_per_s")
    lin = {f"m{m}": _linear_intensity(m) for m in (1, 64, 4096)}
    n = 4096
    decode = (4 * HQ * HD) / (2 * HKV * HD * BF16)  # per key position: q·k and p·v for every query head / K and V
    prefill_flops = 4 * HQ * HD * n * n / 2  # causal: half the score matrix
    prefill_bytes = (2 * HQ + 2 * HKV) * n * HD * BF16
    attn_prefill = prefill_flops / prefill_bytes
    return {"ridge": ridge, "lin": lin, "attn_decode": decode, "attn_prefill": attn_prefill,
            "decode_below": lin["m64"] < ridge and decode < ridge,
            "prefill_above": lin["m4096"] > ridge and attn_prefill > ridge}


def _mix():
    """The same request mix as paged.fragmentation: prompt and output lengths uniform in [16, 1024]."""
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(16, 1025, (N_REQ,), generator=gen)
    output = torch.randint(16, 1025, (N_REQ,), generator=gen)
    return (prompt + output).tolist()


@claim("paged.batch-capacity", question=Q,
       statement="省下的显存换成 batch：H200 SXM 的 {hbm_gb:.0f} GB 扣掉 Llama-3-8B 的全部 bf16 权重（{weights_gb:.1f} GB，"
                 "比解码一步读的多出 embedding 表：它占显存，却只按 token 取几行）"
                 "全给 KV（不计激活和其他开销），按上下文 {=2048} 给每个请求预留，能同时放 {batch_prealloc} 个请求；"
                 "按块分配，照上面那组请求的平均长度（{mean_len:.0f} 个 token）能放 {batch_paged} 个，是 "
                 "{batch_ratio:.2f} 倍。解码吞吐的带宽上限（每步读全部权重加这些请求实际占用的 KV）却只从每秒 "
                 "{tps_prealloc:,.0f} 个 token 升到 {tps_paged:,.0f} 个（{gain:.2f} 倍）：这么大的 batch 下，一步读的"
                 "字节里 KV 已占 {kv_share:pct}，KV 是每条序列各读各的，batch 摊薄的只有权重那一份。显存紧的时候差别才大："
                 "假如留给 KV 的只有 {=8 GB}，两种分配各放 {tight.batch_prealloc} 和 {tight.batch_paged} 个请求，"
                 "吞吐上限差 {tight.gain:.2f} 倍。",
       expect={"gain": {"between": [1.0, 2.0]}, "batch_ratio": {">": 1.5}, "kv_share": {">": 0.5},
               "tight_gain_larger": True})
def _(ctx):
    hbm = specs.get(ctx, GPU, "hbm_bytes")
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    weights = _params()["total"] * BF16
    budget = hbm - weights
    lengths = _mix()
    mean_len = sum(lengths) / len(lengths)
    mean_paged = sum(math.ceil(n / BLOCK) * BLOCK for n in lengths) / len(lengths)
    b_pre = int(budget // (MAX_LEN * KV_PER_TOKEN))
    b_paged = int(budget // (mean_paged * KV_PER_TOKEN))
    w_read = _params()["read"] * BF16

    def tps(batch):  # the KV a step reads is what the requests hold, not what was reserved for them
        return batch / ((w_read + batch * mean_len * KV_PER_TOKEN) / bw)

    kv = b_paged * mean_len * KV_PER_TOKEN
    tight_pre, tight_paged = int(TIGHT // (MAX_LEN * KV_PER_TOKEN)), int(TIGHT // (mean_paged * KV_PER_TOKEN))
    tight = {"batch_prealloc": tight_pre, "batch_paged": tight_paged, "gain": tps(tight_paged) / tps(tight_pre)}
    return {"tight": tight, "tight_gain_larger": tight["gain"] > tps(b_paged) / tps(b_pre),"hbm_gb": hbm / 1e9, "weights_gb": weights / 1e9, "batch_prealloc": b_pre, "batch_paged": b_paged,
            "batch_ratio": b_paged / b_pre, "mean_len": mean_len, "tps_prealloc": tps(b_pre),
            "tps_paged": tps(b_paged), "gain": tps(b_paged) / tps(b_pre), "kv_share": kv / (kv + w_read)}


@claim("paged.split-occupancy", question=Q,
       statement="为什么 decode 要切 KV：查询只有一个 token 时，若每个（序列, 查询头）一个线程块，batch {=1}、"
                 "{=32} 个查询头只有 {blocks_plain} 个线程块，H200 SXM 的 {sms} 个 SM 只用上 {busy:pct}；"
                 "把 {=8192} 个 key 按每段 {=512} 个切开，线程块变成 {blocks_split} 个，再加一次很小的合并。",
       expect={"blocks_plain": 32, "blocks_split": 512})
def _(ctx):
    sms = int(specs.get(ctx, GPU, "sms"))
    plain = 1 * HQ
    split = plain * (8192 // 512)
    return {"sms": sms, "blocks_plain": plain, "busy": plain / sms, "blocks_split": split}
