"""What the scales cost: bytes of a quantized 4096 x 4096 layer, and two int4 codes per byte."""

import torch

from verify.claim import claim

Q = "quant-granularity"


def pack_int4(q):
    """Signed int4 codes (-8..7) -> uint8, two per byte: even columns in the low nibble, odd in the high one."""
    u = (q + 8).to(torch.uint8)
    return u[:, 0::2] | (u[:, 1::2] << 4)


def unpack_int4(packed):
    lo = (packed & 0x0F).to(torch.int8) - 8
    hi = (packed >> 4).to(torch.int8) - 8
    return torch.stack((lo, hi), dim=-1).flatten(-2)


def _nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


@claim("quant.int4-pack", question=Q,
       statement="int4 没有可以直接运算的 dtype，两个码打包进一个字节：带符号的码先加 8 变成 0..15，偶数列放低 4 位、"
                 "奇数列放高 4 位。{n} 个 int4 码打包成 {packed_dtype}，占 {packed_bytes:bytes}，是 int8 存法"
                 "（{int8_bytes:bytes}）的一半；解包后与原来的码{roundtrip:?逐个相同|不全相同}。",
       expect={"packed_dtype": "torch.uint8", "roundtrip": True, "half": True})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    q = torch.randint(-8, 8, (64, 128), generator=g, dtype=torch.int8).to(ctx.device)
    packed = pack_int4(q)
    return {"n": q.numel(), "shape": list(q.shape), "packed_dtype": str(packed.dtype), "packed_bytes": _nbytes(packed),
            "int8_bytes": _nbytes(q), "half": _nbytes(packed) * 2 == _nbytes(q),
            "roundtrip": torch.equal(unpack_int4(packed), q)}


@claim("quant.scale-storage", kind="measured", question=Q,
       statement="scale 的开销按真实张量算，形状为 {shape} 的线性层（Llama-7B 一个注意力投影的大小）：FP16 权重 {fp16:bytes}；"
                 "int8 per-tensor {i8:bytes} 加一个 FP32 scale（{pt_scale:bytes}）；int8 per-channel 多 {pc_scale:bytes} 的 "
                 "FP16 scale，合每个权重 {bits_pc:.4f} 位；int4 每组 128：打包后的码 {i4:bytes}，FP16 scale "
                 "{g_scale:bytes}（每个权重的位数与上表每组 128 那一行相同）；再加每组一个 int4 零点（非对称），合每个权重 "
                 "{bits_g128_zp:.5f} 位。",
       expect={"fp16": 4096 * 4096 * 2, "i8": 4096 * 4096, "pt_scale": 4, "pc_scale": 4096 * 2,
               "i4": 4096 * 4096 // 2, "g_scale": 4096 * 32 * 2, "bits_pc": 8 + 16 / 4096, "bits_g128": 4.125,
               "bits_g128_zp": 4.15625, "asym_worst_over_step": {"<=": 1.01}})
def _(ctx):
    torch.manual_seed(0)
    w = (torch.randn(4096, 4096) * 0.02).to(ctx.device).half()
    n = w.numel()
    wf = w.float()
    # int8, per tensor: one FP32 scale
    s_t = (wf.abs().amax() / 127).float().reshape(1)
    q8_t = torch.round(wf / s_t).clamp(-127, 127).to(torch.int8)
    # int8, per output channel: one FP16 scale per row
    s_c = (wf.abs().amax(dim=1, keepdim=True) / 127).half()
    # int4, groups of 128 along the input dim: FP16 scale per group; asymmetric adds a 4-bit zero point per group
    wg = wf.reshape(4096, -1, 128)
    lo, hi = wg.amin(-1), wg.amax(-1)
    s_g = ((hi - lo) / 15).half()
    zero = torch.round(-lo / s_g.float()).clamp(0, 15).to(torch.int8) - 8  # stored like a code
    q4 = (torch.round(wg / s_g.float()[..., None]) + zero.float()[..., None] + 8).clamp(0, 15) - 8
    packed = pack_int4(q4.reshape(4096, 4096).to(torch.int8))
    zero_packed = pack_int4(zero)
    back = ((unpack_int4(packed).reshape(4096, -1, 128).float() - unpack_int4(zero_packed).float()[..., None])
            * s_g.float()[..., None])
    # a rounded zero point can push the top of a group half a step past code 15: clamped, at most one step off
    worst = ((back - wg).abs() / s_g.float()[..., None]).max().item()
    del wg, q4, back
    return {"shape": list(w.shape), "fp16": _nbytes(w), "i8": _nbytes(q8_t), "pt_scale": _nbytes(s_t),
            "pc_scale": _nbytes(s_c), "bits_pc": (_nbytes(q8_t) + _nbytes(s_c)) * 8 / n,
            "i4": _nbytes(packed), "g_scale": _nbytes(s_g), "bits_g128": (_nbytes(packed) + _nbytes(s_g)) * 8 / n,
            "bits_g128_zp": (_nbytes(packed) + _nbytes(s_g) + _nbytes(zero_packed)) * 8 / n,
            "asym_worst_over_step": worst}
