"""MHA, GQA and MQA: what changes with the number of K/V heads (weights, cache bytes), how query
heads are mapped to K/V heads, and what SDPA accepts."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from verify.claim import claim

Q = "mha-mqa-gqa"

# SDPBackend values as torch._fused_sdp_choice returns them.
_BACKENDS = {0: "MATH", 1: "FLASH_ATTENTION", 2: "EFFICIENT_ATTENTION", 3: "CUDNN_ATTENTION", 4: "OVERRIDEABLE",
             -1: "ERROR"}


def _qkv(device, hq=8, hkv=2, t=16, dh=32, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, hq, t, dh, generator=g, dtype=dtype)
    k = torch.randn(1, hkv, t, dh, generator=g, dtype=dtype)
    v = torch.randn(1, hkv, t, dh, generator=g, dtype=dtype)
    return q.to(device), k.to(device), v.to(device)


@claim("gqa.projection-params", question=Q,
       statement="宽 {d_model}、{hq} 个查询头（head_dim {dh}）的一层注意力，K/V 头数取 {hkv.mha}、{hkv.gqa}、{hkv.mqa}"
                 "（MHA、GQA、MQA）时，`W_k` 的输出维是 {wk_out.mha}、{wk_out.gqa}、{wk_out.mqa}，整层 "
                 "`W_q`+`W_k`+`W_v`+`W_o` 的参数分别是 {params.mha:,}、{params.gqa:,}、{params.mqa:,}：少掉的只是 "
                 "`W_k`、`W_v`，`W_q` 和 `W_o` 一个参数没少。",
       expect={"params": {"mha": 4 * 4096 * 4096, "gqa": 2 * 4096 * 4096 + 2 * 4096 * 1024,
                          "mqa": 2 * 4096 * 4096 + 2 * 4096 * 128},
               "wk_out": {"mha": 4096, "gqa": 1024, "mqa": 128}, "wq_same": True})
def _(ctx):
    d, hq, dh = 4096, 32, 128
    hkv = {"mha": 32, "gqa": 8, "mqa": 1}
    params, wk_out, wq = {}, {}, set()
    for name, h in hkv.items():
        with torch.device("meta"):
            wq_, wk, wv, wo = (nn.Linear(d, hq * dh, bias=False), nn.Linear(d, h * dh, bias=False),
                               nn.Linear(d, h * dh, bias=False), nn.Linear(hq * dh, d, bias=False))
        params[name] = sum(m.weight.numel() for m in (wq_, wk, wv, wo))
        wk_out[name] = wk.out_features
        wq.add(wq_.weight.numel() + wo.weight.numel())
    return {"d_model": d, "hq": hq, "dh": dh, "hkv": hkv, "params": params, "wk_out": wk_out, "wq_same": len(wq) == 1}


@claim("gqa.cache-bytes", question=Q,
       statement="按 Llama-2-70B 的形状（{layers} 层、{hq} 个查询头、head_dim {dh}、FP16）在 meta 设备上建出每层的 K、V "
                 "缓存张量，每个 token 的 KV cache 是：MHA {per_token.mha:bytes}，GQA（{hkv.gqa} 个 KV 头，Llama-2-70B 实际用的配置）"
                 "{per_token.gqa:bytes}，MQA {per_token.mqa:bytes}；一条 {=4096} token 的序列在 GQA 下是 "
                 "{seq_gqa:bytes}，MHA 下是 {seq_mha:bytes}，是前者的 {ratio_mha_gqa} 倍，正好等于查询头数与 KV 头数之比。",
       expect={"per_token": {"mha": 2 * 80 * 64 * 128 * 2, "gqa": 2 * 80 * 8 * 128 * 2, "mqa": 2 * 80 * 1 * 128 * 2},
               "ratio_mha_gqa": 8, "seq_gqa": 4096 * 2 * 80 * 8 * 128 * 2})
def _(ctx):
    layers, hq, dh = 80, 64, 128
    hkv = {"mha": 64, "gqa": 8, "mqa": 1}
    per_token = {}
    for name, h in hkv.items():
        cache = [torch.empty(1, h, 4096, dh, dtype=torch.float16, device="meta") for _ in range(2 * layers)]
        per_token[name] = sum(t.untyped_storage().nbytes() for t in cache) // 4096
    return {"layers": layers, "hq": hq, "dh": dh, "hkv": hkv, "per_token": per_token,
            "seq_gqa": per_token["gqa"] * 4096, "seq_mha": per_token["mha"] * 4096,
            "ratio_mha_gqa": per_token["mha"] // per_token["gqa"]}


@claim("gqa.group-mapping", question=Q,
       statement="分组是连续的：{hq} 个查询头、{hkv} 个 KV 头时，第 h 个查询头用第 h // {group} 个 KV 头，"
                 "逐头对照 SDPA 的结果得到的对应表是 {mapping}。",
       expect={"mapping": [0, 0, 0, 0, 1, 1, 1, 1], "group": 4})
def _(ctx):
    q, k, v = _qkv(ctx.device)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    mapping = []
    for h in range(q.shape[1]):
        errs = [(out[:, h] - F.scaled_dot_product_attention(q[:, h:h + 1], k[:, j:j + 1], v[:, j:j + 1])[:, 0])
                .abs().max().item() for j in range(k.shape[1])]
        mapping.append(min(range(len(errs)), key=errs.__getitem__))
    return {"mapping": mapping, "hq": q.shape[1], "hkv": k.shape[1], "group": q.shape[1] // k.shape[1]}


@claim("gqa.interleave-not-tile", kind="measured", question=Q,
       statement="所以想把 GQA 的 K/V 展开成 MHA 的形状，要用 `repeat_interleave(4, dim=1)`（头序 0,0,0,0,1,1,1,1）："
                 "与 `enable_gqa=True` 的最大差是 {interleave_diff:.1e}；误用 `repeat(1, 4, 1, 1)`（头序 0,1,0,1,…）"
                 "不报错，形状也对，结果却差了 {tile_diff:.2f}。",
       expect={"interleave_diff": {"<": 1e-5}, "tile_diff": {">": 0.1}})
def _(ctx):
    q, k, v = _qkv(ctx.device)
    ref = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    inter = F.scaled_dot_product_attention(q, k.repeat_interleave(4, dim=1), v.repeat_interleave(4, dim=1))
    tile = F.scaled_dot_product_attention(q, k.repeat(1, 4, 1, 1), v.repeat(1, 4, 1, 1))
    return {"interleave_diff": (ref - inter).abs().max().item(), "tile_diff": (ref - tile).abs().max().item(),
            "interleave_bitwise": torch.equal(ref, inter)}


@claim("gqa.needs-flag", question=Q,
       statement="不传 `enable_gqa=True` 时，{hq} 个查询头配 {hkv} 个 KV 头的 SDPA 直接报错：形状按普通广播对齐，"
                 "{hq} 和 {hkv} 对不上。",
       raises=("RuntimeError", "The size of tensor a (8) must match the size of tensor b (2) at non-singleton dimension 1"))
def _(ctx):
    q, k, v = _qkv(ctx.device)
    ctx.observe(hq=q.shape[1], hkv=k.shape[1])
    F.scaled_dot_product_attention(q, k, v)


@claim("gqa.indivisible", question=Q,
       statement="查询头数必须能被 KV 头数整除：{hq} 个查询头配 {hkv} 个 KV 头，即使传了 `enable_gqa=True` 也报错。",
       raises=("RuntimeError", "Number of heads in key and value must divide the number of heads in"))
def _(ctx):
    q, k, v = _qkv(ctx.device, hkv=3)
    ctx.observe(hq=q.shape[1], hkv=k.shape[1])
    F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


@claim("gqa.mqa-broadcast-math", kind="measured", question=Q,
       statement="MQA 是个例外：只有 1 个 KV 头时，不传 `enable_gqa` 也能算，结果与传了的一样（最大差 {diff:.1e}），"
                 "因为头维按广播对齐；但 CPU 上 SDPA 为它挑的后端是 {backend_plain}，传了 `enable_gqa=True` 才是 "
                 "{backend_flag}。",
       expect={"diff": {"<": 1e-5}, "backend_plain": "MATH", "backend_flag": "FLASH_ATTENTION"})
def _(ctx):
    q, k, v = _qkv("cpu", hkv=1)  # CPU on purpose: the backend choice is the CPU one
    plain = F.scaled_dot_product_attention(q, k, v)
    flag = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return {"diff": (plain - flag).abs().max().item(),
            "backend_plain": _BACKENDS[torch._fused_sdp_choice(q, k, v)],
            "backend_flag": _BACKENDS[torch._fused_sdp_choice(q, k, v, enable_gqa=True)]}


@claim("gqa.cpu-flash-native", question=Q,
       statement="CPU 上带 `enable_gqa=True` 的 SDPA 走的是 {backend} 内核，profiler 里只有 {kernel} 这一个计算算子，"
                 "{has_repeat:?却出现了|没有} `repeat` 类算子：K/V 不被复制，查询头按组直接读共享的 KV 头。",
       expect={"backend": "FLASH_ATTENTION", "kernel": "aten::_scaled_dot_product_flash_attention_for_cpu",
               "has_repeat": False})
def _(ctx):
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    q, k, v = _qkv("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    names = [e.name for e in prof.events()]
    kernels = [n for n in names if "scaled_dot_product" in n and n != "aten::scaled_dot_product_attention"]
    return {"backend": _BACKENDS[torch._fused_sdp_choice(q, k, v, enable_gqa=True)], "kernel": kernels[0] if kernels else "",
            "has_repeat": any("repeat" in n for n in names), "ops": sorted(set(names))}


@claim("gqa.cuda-flash-gqa", question=Q, needs=["cuda"],
       statement="在 GPU 上，FP16 的 GQA 输入（{hq} 个查询头、{hkv} 个 KV 头）带 `enable_gqa=True` 时 SDPA 选的是融合内核 "
                 "{backend}，不是 math，与展开 K/V 后的结果最大差 {diff:.1e}。",
       expect={"backend": {"in": ["FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"]}, "diff": {"<": 1e-2}})
def _(ctx):
    """GPU 上 FP16、8 个查询头配 2 个 KV 头、长度 256、head_dim 64 时，带 enable_gqa=True 的 SDPA 所选的后端及其与展开 K/V 后结果的最大差。"""
    q, k, v = _qkv("cuda", t=256, dh=64, dtype=torch.float16)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    ref = F.scaled_dot_product_attention(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1))
    return {"backend": _BACKENDS[torch._fused_sdp_choice(q, k, v, enable_gqa=True)], "hq": q.shape[1], "hkv": k.shape[1],
            "diff": (out - ref).abs().max().item()}
