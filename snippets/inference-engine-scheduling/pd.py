"""Prefill/decode disaggregation priced from the spec table: the KV cache a prefill instance hands to a decode
instance, per prompt token, against the prefill's own compute per token at the GPU's peak, for a GQA and an MHA
model over NVLink and over PCIe. Spec arithmetic, not a measurement."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "inference-engine-scheduling"
GPU = "H100 SXM"
BF16 = 2

# published configurations: layers, hidden, query heads, KV heads, head_dim, FFN width
MODELS = {"llama3_8b": (32, 4096, 32, 8, 128, 14336), "llama2_7b": (32, 4096, 32, 32, 128, 11008)}


def per_token(layers, hidden, heads, kv_heads, hd, ffn):
    """KV bytes one prompt token leaves in the cache, and the FLOPs of the transformer layers' weight matmuls
    that token costs (attention's q·kᵀ and p·v left out; the LM head left out too: the prefill needs logits for
    the last prompt token only)."""
    kv_bytes = 2 * layers * kv_heads * hd * BF16
    weights = layers * (hidden * heads * hd * 2 + hidden * kv_heads * hd * 2 + 3 * hidden * ffn)
    return kv_bytes, 2 * weights


@claim("sched.pd-kv-transfer", question=Q,
       statement="PD 分离要把 prefill 实例算出的 KV 传给 decode 实例。每个提示词 token：Llama-3-8B（GQA，{=8} 个 KV 头）留下 "
                 "{kv.llama3_8b:bytes} 的 bf16 KV、权重矩阵乘 {gflops.llama3_8b:.1f} GFLOP；Llama-2-7B（MHA，{=32} 个 KV 头）留下 "
                 "{kv.llama2_7b:bytes}、{gflops.llama2_7b:.1f} GFLOP（只算各层的权重矩阵乘：输出层只对最后一个提示词 token 算，不计）。按 H100 SXM 的峰值算力和单向链路带宽（规格表的双向数除以 2）"
                 "算，传一个 token 的 KV 占它 prefill 时间下界的比例：Llama-3-8B 走 NVLink {ratio.llama3_8b.nvlink:pct}、走 PCIe "
                 "{ratio.llama3_8b.pcie:pct}；Llama-2-7B 走 NVLink {ratio.llama2_7b.nvlink:pct}、走 PCIe {ratio.llama2_7b.pcie:pct}，"
                 "四种组合{all_below_prefill:?都短于 prefill 本身|有的超过了 prefill 本身}。两边都按规格算：实际 prefill 达不到峰值、又要算注意力，"
                 "会让比例变小；实际链路达不到规格带宽，会让比例变大。跨机网卡的带宽不在规格表里，没有算。",
       expect={"kv": {"llama3_8b": 131072, "llama2_7b": 524288}, "mha_over_gqa_kv": 4.0,
               "all_below_prefill": True})
def _(ctx):
    """范围：Llama-3-8B 与 Llama-2-7B 的形状，H100 SXM 规格"""
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    links = {"nvlink": specs.get(ctx, GPU, "nvlink_bytes_per_s") / 2, "pcie": specs.get(ctx, GPU, "pcie_bytes_per_s") / 2}
    kv, flops, ratio = {}, {}, {}
    for name, shape in MODELS.items():
        kv[name], flops[name] = per_token(*shape)
        ratio[name] = {link: (kv[name] / bw) / (flops[name] / peak) for link, bw in links.items()}
    return {"kv": kv, "flops": flops, "gflops": {k: v / 1e9 for k, v in flops.items()}, "ratio": ratio,
            "mha_over_gqa_kv": kv["llama2_7b"] / kv["llama3_8b"],
            "all_below_prefill": all(r < 1 for v in ratio.values() for r in v.values())}
