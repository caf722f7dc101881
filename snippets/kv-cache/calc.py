"""计算题 of this question: the KV cache's bytes for a model config, and the claim that checks the formula.

The formula is a plain function (the quiz draws configs and asks for its value); the claim builds
the cache a decoder really keeps (one K and one V tensor per layer) for several configs and
compares their bytes with it.
"""

from __future__ import annotations

from verify.claim import claim

Q = "kv-cache"
GIB = 2**30
DTYPE_BYTES = {"FP16": 2, "BF16": 2, "FP32": 4, "FP8": 1}


def kv_cache_bytes(layers: int, batch: int, kv_heads: int, head_dim: int, seq: int, dtype: str) -> int:
    """2 (K and V) × layers × batch × KV heads × head_dim × length × bytes per element."""
    return 2 * layers * batch * kv_heads * head_dim * seq * DTYPE_BYTES[dtype]


CALCULATORS = [
    {"id": "kv-cache-bytes", "question": Q, "claim": "kvcache.calc-formula",
     "prompt": "一个 {layers} 层的模型，{kv_heads} 个 KV 头、head_dim {head_dim}；batch {batch}、上下文 {seq} 个 token，"
               "KV cache 用 {dtype} 存。它一共占多少 GiB？",
     "params": {"layers": [24, 32, 40, 48, 80], "kv_heads": [1, 8, 32, 64], "head_dim": [64, 128],
                "batch": [1, 4, 16, 64], "seq": [2048, 4096, 8192, 32768], "dtype": ["FP16", "BF16", "FP8"]},
     "answer": kv_cache_bytes, "unit": "GiB", "scale": GIB, "tolerance": 0.02,
     "explain": "2（K 和 V）× 层数 × batch × KV 头数 × head_dim × 上下文长度 × 每元素字节数；按 KV 头数算，不是查询头数。"},
]

CONFIGS = [(4, 2, 8, 64, 128, "FP16"), (3, 1, 2, 32, 96, "FP32"), (2, 3, 1, 128, 40, "BF16")]


@claim("kvcache.calc-formula", question=Q,
       statement="显存公式和真实的缓存一致：按解码器真正保存的样子（每层一个 K、一个 V，形状 (batch, KV 头数, 长度, "
                 "head_dim)）建出 {n_configs} 种配置的缓存，张量字节数之和与公式 2·层数·batch·KV 头数·head_dim·"
                 "长度·每元素字节数{equal:?处处相等|有不相等的}；模拟面试的计算题用的就是这个公式。",
       expect={"equal": True, "n_configs": 3})
def _(ctx):
    import torch

    dtypes = {"FP16": torch.float16, "BF16": torch.bfloat16, "FP32": torch.float32}
    equal = True
    for layers, batch, kv_heads, head_dim, seq, dtype in CONFIGS:
        cache = [(torch.zeros(batch, kv_heads, seq, head_dim, dtype=dtypes[dtype]),
                  torch.zeros(batch, kv_heads, seq, head_dim, dtype=dtypes[dtype])) for _ in range(layers)]
        real = sum(t.numel() * t.element_size() for pair in cache for t in pair)
        equal = equal and real == kv_cache_bytes(layers, batch, kv_heads, head_dim, seq, dtype)
    return {"equal": equal, "n_configs": len(CONFIGS)}


@claim("kvcache.calc-items", question=Q,
       statement="模拟面试里 KV cache 的 {n_items} 道计算题按 KV cache 的大小公式出答案；按每道题的配置在 meta 设备上"
                 "建出每层的 K、V（只有形状和 dtype，不占内存），字节数与答案{equal:?每道都相等|有不相等的}。",
       expect={"equal": True, "n_items": 6})
def _(ctx):
    """The quiz's items of this question, each answer checked against the cache its config gives."""
    import torch

    from snippets._calc import checked, same

    dtypes = {"FP16": torch.float16, "BF16": torch.bfloat16, "FP32": torch.float32, "FP8": torch.float8_e4m3fn}

    def again(_calc, p):
        cache = [torch.empty(p["batch"], p["kv_heads"], p["seq"], p["head_dim"], dtype=dtypes[p["dtype"]], device="meta")
                 for _ in range(2 * p["layers"])]
        return sum(t.numel() * t.element_size() for t in cache)

    quiz, pairs = checked(CALCULATORS, again)
    return {"equal": same(pairs), "n_items": len(pairs), "calc_items": quiz}
