"""DeepSeek-V2's multi-head latent attention (MLA): what it caches per token against MHA, GQA and
MQA; why folding the key up-projection into the query (and the value up-projection into the output
projection) gives the same attention exactly; and why RoPE then needs a separate, decoupled key."""

from __future__ import annotations

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "mha-mqa-gqa"

# DeepSeek-V2 (236B) as DeepSeek's own inference config gives it (deepseek-ai/DeepSeek-V3,
# inference/configs/config_236B.json): n_heads 128, qk_nope_head_dim 128, v_head_dim 128,
# kv_lora_rank 512, qk_rope_head_dim 64, n_layers 60.
N_HEADS, HEAD_DIM, KV_LORA, ROPE_DIM, LAYERS = 128, 128, 512, 64, 60
BF16 = 2

# A small MLA layer for the numerical checks (float64, so that only rounding is left).
D_MODEL, H, DH, DC, DR, T = 64, 4, 16, 32, 8, 12


@claim("mla.cache-per-token", question=Q,
       statement="按 DeepSeek-V2 的配置（{=128} 个头、head_dim {=128}、KV 压缩维 d_c = {=512}、解耦 RoPE 的 key 维 "
                 "d_R = {=64}）在 meta 设备上建出一层的缓存张量，每个 token 要存的元素数：MHA 的 K、V 是 2·n_h·d_h = "
                 "{elems.mha:,}，同样头数的 GQA-8 是 {elems.gqa8:,}，MQA 是 {elems.mqa}；MLA 只存一个潜向量 c 和一段所有头"
                 "共享的 RoPE key，d_c + d_R = {elems.mla}，是 MHA 的 {mla_over_mha:pct}，相当于只有 {mla_as_groups:.2f} "
                 "个 KV 头的 GQA。按 BF16、{=60} 层，每个 token 的缓存 MLA 是 {model_bytes.mla:bytes}，MHA 是 "
                 "{model_bytes.mha:bytes}。",
       expect={"elems": {"mha": 2 * 128 * 128, "gqa8": 2 * 8 * 128, "mqa": 2 * 128, "mla": 512 + 64},
               "mla_as_groups": 2.25})
def _(ctx):
    t = 4096  # positions in the meta cache; everything is divided back to one token
    with torch.device("meta"):
        caches = {
            "mha": [torch.empty(1, N_HEADS, t, HEAD_DIM, dtype=torch.bfloat16) for _ in range(2)],
            "gqa8": [torch.empty(1, 8, t, HEAD_DIM, dtype=torch.bfloat16) for _ in range(2)],
            "mqa": [torch.empty(1, 1, t, HEAD_DIM, dtype=torch.bfloat16) for _ in range(2)],
            # what DeepSeek's absorbed MLA keeps: the latent c (kv_cache) and the shared RoPE key (pe_cache)
            "mla": [torch.empty(1, t, KV_LORA, dtype=torch.bfloat16), torch.empty(1, t, ROPE_DIM, dtype=torch.bfloat16)],
        }
    elems = {k: sum(x.numel() for x in v) // t for k, v in caches.items()}
    per_layer = {k: sum(x.untyped_storage().nbytes() for x in v) // t for k, v in caches.items()}
    return {"elems": elems, "mla_over_mha": elems["mla"] / elems["mha"],
            "mla_as_groups": elems["mla"] / (2 * HEAD_DIM),
            "model_bytes": {k: v * LAYERS for k, v in per_layer.items()}, "bytes_per_elem": BF16}


def _rope(x, pos):
    """Rotary embedding of the last dim of ``x`` (..., T, d) at positions ``pos`` (T,), pairs interleaved."""
    d = x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=x.dtype) / d))
    ang = pos.to(x.dtype)[:, None] * inv[None, :]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def _layer(seed=0):
    """Random weights of a small MLA layer, and hidden states of T tokens (float64)."""
    g = torch.Generator().manual_seed(seed)

    def w(*shape, fan_in):
        return torch.randn(*shape, generator=g, dtype=torch.float64) / fan_in ** 0.5

    return {"h": torch.randn(T, D_MODEL, generator=g, dtype=torch.float64),
            "w_dkv": w(D_MODEL, DC, fan_in=D_MODEL),  # down-projection to the latent c
            "w_uk": w(H, DC, DH, fan_in=DC), "w_uv": w(H, DC, DH, fan_in=DC),  # per-head up-projections of c
            "w_q": w(H, D_MODEL, DH, fan_in=D_MODEL), "w_o": w(H, DH, D_MODEL, fan_in=H * DH),
            "w_qr": w(H, D_MODEL, DR, fan_in=D_MODEL), "w_kr": w(D_MODEL, DR, fan_in=D_MODEL)}  # decoupled RoPE part


@claim("mla.absorb-exact", kind="measured", question=Q,
       statement="推理时的“吸收”就是矩阵乘的结合律：q·kᵀ = (h·W_Q)(c·W_UK)ᵀ = (h·W_Q·W_UKᵀ)·cᵀ。在一个 {=4} 头、"
                 "head_dim {=16}、d_c = {=32} 的小 MLA 层上用 float64 对比：把缓存的潜向量逐头解压成 K 再算分数，与把 "
                 "W_UK 并进 W_Q、让查询直接和潜向量点积，分数最大差 {score_diff:.1e}；再把 W_UV 并进 W_O（先对潜向量"
                 "加权求和，再一次投影回去），层输出最大差 {out_diff:.1e}，只差浮点舍入。吸收之后，每个头的查询是 "
                 "{absorbed_q_dim} 维，所有头读的是同一份潜向量缓存。",
       expect={"score_diff": {"<": 1e-12}, "out_diff": {"<": 1e-12}, "absorbed_q_dim": 32})
def _(ctx):
    p = _layer()
    h, q_in = p["h"], p["h"][-1]
    c = h @ p["w_dkv"]  # (T, DC): the only thing cached
    # decompressed: every head gets its own K and V from c
    k = torch.einsum("tc,hcd->htd", c, p["w_uk"])
    v = torch.einsum("tc,hcd->htd", c, p["w_uv"])
    q = torch.einsum("m,hmd->hd", q_in, p["w_q"])
    s_full = torch.einsum("hd,htd->ht", q, k) * DH ** -0.5
    out_full = torch.einsum("hd,hdm->m", torch.einsum("ht,htd->hd", s_full.softmax(-1), v), p["w_o"])
    # absorbed: W_Q·W_UKᵀ and W_UV·W_O merged ahead of time, c never decompressed
    w_q_abs = torch.einsum("hmd,hcd->hmc", p["w_q"], p["w_uk"])  # (H, D_MODEL, DC)
    w_o_abs = torch.einsum("hcd,hdm->hcm", p["w_uv"], p["w_o"])  # (H, DC, D_MODEL)
    q_abs = torch.einsum("m,hmc->hc", q_in, w_q_abs)
    s_abs = (q_abs @ c.T) * DH ** -0.5
    out_abs = torch.einsum("hc,hcm->m", s_abs.softmax(-1) @ c, w_o_abs)
    return {"score_diff": (s_full - s_abs).abs().max().item(), "out_diff": (out_full - out_abs).abs().max().item(),
            "absorbed_q_dim": q_abs.shape[-1]}


@claim("mla.rope-decoupled", kind="measured", question=Q,
       statement="RoPE 会破坏这种吸收：RoPE 按 key 自己的位置 t 旋转，从 c_t 到旋转后 key 的映射是 W_UK·R_t，每个位置"
                 "一个矩阵（位置 0 与位置 {=5} 的最大差 {matrix_diff:.2f}），没法提前并进 W_Q；硬拿不旋转的 W_UK 去吸收，"
                 "分数与真值最大差 {broken_diff:.2f}。DeepSeek-V2 的做法是把位置信息拆出去：K 的主体（由 c 解压的部分）"
                 "不加 RoPE、照常吸收，另加一段所有头共享、带 RoPE 的小 key（这里 {=8} 维，DeepSeek-V2 是 {=64} 维）"
                 "与 c 一起缓存。这样吸收后的分数与逐头解压的结果最大差 {decoupled_diff:.1e}；把所有位置整体平移 "
                 "{=100}，分数最大变化 {shift_diff:.1e}：RoPE 的相对位置性质还在。",
       expect={"matrix_diff": {">": 0.1}, "broken_diff": {">": 0.1}, "decoupled_diff": {"<": 1e-12},
               "shift_diff": {"<": 1e-10}})
def _(ctx):
    p = _layer()
    h, q_in = p["h"], p["h"][-1]
    pos = torch.arange(T)
    s = pos[-1:]  # the query's position
    c = h @ p["w_dkv"]
    q = torch.einsum("m,hmd->hd", q_in, p["w_q"])[:, None]  # (H, 1, DH)

    # RoPE applied to the decompressed, per-head key
    k_rot = _rope(torch.einsum("tc,hcd->htd", c, p["w_uk"]), pos)
    true = (_rope(q, s) @ k_rot.transpose(-2, -1))[:, 0]
    broken = torch.einsum("hc,tc->ht", torch.einsum("hd,hcd->hc", _rope(q, s)[:, 0], p["w_uk"]), c)
    rot = _rope(torch.eye(DH, dtype=torch.float64), torch.full((DH,), 5))  # R_5: x @ R_5 == rope(x, 5)
    matrix_diff = (p["w_uk"][0] - p["w_uk"][0] @ rot).abs().max().item()  # W_UK·R_0 is W_UK itself

    # decoupled: content part without RoPE (absorbed), plus a shared RoPE key k_R cached beside c
    def scores(offset, absorbed):
        pp, ss = pos + offset, s + offset
        k_r = _rope(h @ p["w_kr"], pp)  # (T, DR), one for all heads
        q_r = _rope(torch.einsum("m,hmr->hr", q_in, p["w_qr"])[:, None], ss)[:, 0]  # (H, DR)
        if absorbed:
            content = torch.einsum("hc,tc->ht", torch.einsum("hd,hcd->hc", q[:, 0], p["w_uk"]), c)
        else:
            content = torch.einsum("hd,htd->ht", q[:, 0], torch.einsum("tc,hcd->htd", c, p["w_uk"]))
        return content + q_r @ k_r.T

    ref = scores(0, absorbed=False)
    return {"matrix_diff": matrix_diff, "broken_diff": (true - broken).abs().max().item(),
            "decoupled_diff": (ref - scores(0, absorbed=True)).abs().max().item(),
            "shift_diff": (ref - scores(100, absorbed=True)).abs().max().item()}


@claim("mla.decode-intensity", question=Q,
       statement="代价是计算：吸收之后，每个缓存位置、每个头算分数要 2·(d_c + d_R) 次 FLOP，加权求和要 2·d_c 次，而这个位置"
                 "只读 d_c + d_R 个元素，{=128} 个头共用。按 DeepSeek-V2 的配置、BF16 缓存，解码注意力每读一个字节做 "
                 "{intensity.mla:.0f} 次 FLOP，同样头数的 MHA 是 {intensity.mha:.1f}、GQA-8 是 {intensity.gqa8:.0f}；"
                 "H100 SXM 的拐点（BF16 稠密算力 ÷ HBM 带宽）是 {ridge:.0f}。MLA 的解码注意力已经接近计算受限：省下的字节"
                 "换成了计算。",
       expect={"intensity_mha": 1.0, "intensity_gqa8": 16.0, "intensity_mla": {"between": [200, 300]},
               "mla_below_ridge": True})
def _(ctx):
    ridge = specs.get(ctx, "H100 SXM", "bf16_dense_flops") / specs.get(ctx, "H100 SXM", "hbm_bytes_per_s")
    per_position = {  # (FLOPs, bytes read) per cached position of one decode step, all heads
        "mha": (N_HEADS * (2 * HEAD_DIM + 2 * HEAD_DIM), 2 * N_HEADS * HEAD_DIM * BF16),
        "gqa8": (N_HEADS * (2 * HEAD_DIM + 2 * HEAD_DIM), 2 * 8 * HEAD_DIM * BF16),
        "mla": (N_HEADS * (2 * (KV_LORA + ROPE_DIM) + 2 * KV_LORA), (KV_LORA + ROPE_DIM) * BF16),
    }
    intensity = {k: f / b for k, (f, b) in per_position.items()}
    return {"intensity": intensity, "ridge": ridge, "mla_below_ridge": intensity["mla"] < ridge,
            **{f"intensity_{k}": v for k, v in intensity.items()}}
