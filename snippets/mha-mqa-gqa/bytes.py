"""What a decode step's attention reads from HBM when the kernel reads the shared K/V heads, when
K/V are MHA-shaped, and when GQA's K/V are first copied up to MHA's shape (repeat_kv): a byte
model for the GPU, with the bandwidth from the published spec table."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "mha-mqa-gqa"

GPU = "H100 SXM"
FP16 = 2


def _bytes(hq, hkv, batch, ctx, dh, elem=FP16):
    """Bytes one decode step's attention moves for one layer: K and V, read or copied."""
    kv = lambda heads: 2 * batch * heads * ctx * dh * elem  # noqa: E731  K and V of `heads` heads
    return {"gqa": kv(hkv),  # the kernel reads each shared K/V head once
            "mha": kv(hq),  # K/V stored (or handed over) with one head per query head
            "repeat": kv(hkv) + kv(hq) + kv(hq)}  # read GQA's K/V, write the MHA-shaped copy, read the copy


@claim("gqa.repeat-kv-hbm", question=Q,
       statement="按字节估 GPU 上的代价（Llama-2-70B 一层的形状：{=64} 个查询头、{=8} 个 KV 头、head_dim {=128}、FP16，"
                 "batch {=8}、上下文 {=4096}，解码一步）：kernel 直接读共享的 KV 头，读 {bytes.gqa:bytes}；K/V 是 MHA 的形状"
                 "时读 {bytes.mha:bytes}；先 `repeat_kv` 再算，要读一遍 GQA 的 K/V、写出 MHA 形状的副本、再把副本读一遍，"
                 "共 {bytes.repeat:bytes}。按 H100 SXM 的 HBM 带宽，三者的下界是 {us.gqa:.0f}、{us.mha:.0f}、{us.repeat:.0f} µs："
                 "复制的做法是 MHA 的 {repeat_over_mha:x}、直接读的 {repeat_over_gqa:x}；换成下面 CPU 计时的 {=8} 个查询头"
                 "配 {=2} 个 KV 头，是 MHA 的 {repeat_over_mha_g4:x}。",
       expect={"bytes": {"gqa": 2 * 8 * 8 * 4096 * 128 * 2, "mha": 2 * 8 * 64 * 4096 * 128 * 2,
                         "repeat": 2 * 8 * (8 + 64 + 64) * 4096 * 128 * 2},
               "repeat_over_mha": 2.125, "repeat_over_gqa": 17.0, "repeat_over_mha_g4": 2.25})
def _(ctx):
    bw = specs.get(ctx, GPU, "hbm_bytes_per_s")
    b = _bytes(hq=64, hkv=8, batch=8, ctx=4096, dh=128)
    g4 = _bytes(hq=8, hkv=2, batch=1, ctx=8192, dh=128)
    return {"bytes": b, "us": {k: v / bw * 1e6 for k, v in b.items()},
            "repeat_over_mha": b["repeat"] / b["mha"], "repeat_over_gqa": b["repeat"] / b["gqa"],
            "repeat_over_mha_g4": g4["repeat"] / g4["mha"]}
