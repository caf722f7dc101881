"""Timing on the CPU: SDPA against attention written out, and what a causal mask buys each of them."""

import torch
import torch.nn.functional as F

from verify import timing
from verify.claim import claim

Q = "flash-attention"
B = 1
H = 4
N = 2048
D = 64
Q_SPLIT = 256  # query rows per block in FlashAttentionKernel.cpp for a query length of 768 or more
KV_SPLIT = 512  # key rows per block there


def qkv(device):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, N, D, generator=g).to(device) for _ in range(3))


def naive_attention(q, k, v, causal=False):
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    if causal:
        n = q.shape[-2]
        future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, -1) @ v


def causal_work_fraction(n, q_split, kv_split):
    """Share of (query block, key block) pairs the CPU kernel computes with is_causal (it stops at the diagonal)."""
    done = total = 0
    for m in range(0, n, q_split):
        keys = min(m + q_split, n)
        done += -(-keys // kv_split)
        total += -(-n // kv_split)
    return done / total


@claim("flash.cpu-faster", question=Q, kind="perf",
       statement="CPU 上（本机，float32，N={=2048}、{=4} 个头），手写 attention 要 {timings.naive}，CPU 的 SDPA（同一个分块算法）要 "
                 "{timings.sdpa}，快 {speedup:x}。两者矩阵乘的 FLOP 相同；手写版要写出 {scores_bytes:bytes} 的分数矩阵，softmax "
                 "再把它读一遍、写一遍，矩阵乘再读回来，而且这些大块内存每次调用都是新分配的。这个倍数只说明这台 CPU，不能拿来解释 GPU。",
       expect={"speedup": {">": 1.0}})
def _(ctx):
    # CPU on purpose: the sentence is about the CPU kernel (a GPU run is flash.cuda-speed-memory)
    q, k, v = qkv("cpu")
    t = timing.compare({"naive": lambda: naive_attention(q, k, v),
                        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v)},
                       rounds=9, warmup=2)
    return {"n": N, "heads": H, "timings": t, "speedup": timing.ratio(t, "naive", "sdpa"),
            "scores_bytes": B * H * N * N * 4}


@claim("flash.causal-skips", question=Q, kind="perf",
       statement="causal mask 对两种写法的意义不同：SDPA 的 `is_causal=True` 让 kernel 在对角线处停下，"
                 "按 CPU kernel 的分块（查询 {=256} 行、键 {=512} 行一块）只算 {work_fraction:pct} 的块，"
                 "本机实测从 {timings.sdpa_full} 降到 {timings.sdpa_causal}，快 {sdpa_causal_speedup:x}；"
                 "手写 attention 加 mask 仍然算完整的 N×N，还多一次 `masked_fill`，从 {timings.naive_full} 变成 "
                 "{timings.naive_causal}（{naive_causal_speedup:x}）。",
       expect={"sdpa_causal_speedup": {">": 1.1}, "naive_causal_speedup": {"<": 1.2}, "work_fraction": 0.625,
               "same_result": True})
def _(ctx):
    q, k, v = qkv("cpu")  # CPU on purpose: the block sizes and the sentence are the CPU kernel's
    fused = timing.compare({"sdpa_full": lambda: F.scaled_dot_product_attention(q, k, v),
                            "sdpa_causal": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)},
                           rounds=15, warmup=2)
    naive = timing.compare({"naive_full": lambda: naive_attention(q, k, v),
                            "naive_causal": lambda: naive_attention(q, k, v, causal=True)},
                           rounds=7, warmup=1)
    same = torch.allclose(F.scaled_dot_product_attention(q, k, v, is_causal=True),
                          naive_attention(q, k, v, causal=True), atol=1e-5)
    return {"timings": {**fused, **naive}, "q_split": Q_SPLIT, "kv_split": KV_SPLIT,
            "work_fraction": causal_work_fraction(N, Q_SPLIT, KV_SPLIT),
            "sdpa_causal_speedup": timing.ratio(fused, "sdpa_full", "sdpa_causal"),
            "naive_causal_speedup": timing.ratio(naive, "naive_full", "naive_causal"), "same_result": same}
