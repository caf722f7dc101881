"""Per-tensor, per-channel and group-wise scales for the same weight, with and without an outlier."""

import torch

from verify.claim import claim

Q = "quant-granularity"
OUT, IN = 256, 4096     # a weight W[out_features, in_features], as nn.Linear stores it
OUTLIER = 50.0          # how much larger the outlier channel is than the others


def qmax(bits):
    """Largest code of a symmetric signed quantizer: 127 for int8, 7 for int4 (-128 / -8 stay unused)."""
    return 2 ** (bits - 1) - 1


def scales(w, bits, granularity):
    """One scale per tensor, per output channel (row) or per group of ``granularity`` input elements."""
    if granularity == "tensor":
        return w.abs().amax().reshape(1, 1) / qmax(bits)
    if granularity == "channel":
        return w.abs().amax(dim=1, keepdim=True) / qmax(bits)
    group = int(granularity)
    return w.reshape(w.shape[0], -1, group).abs().amax(dim=-1) / qmax(bits)


def quantize(w, bits, granularity):
    """Symmetric round-to-nearest: (integer codes, scales, dequantized weight)."""
    s = scales(w, bits, granularity)
    per_element = s.repeat_interleave(w.shape[1] // s.shape[1], dim=1) if s.shape[1] > 1 else s
    inv = 1.0 / per_element  # multiply by the inverse, as torch's fake_quantize kernels do
    q = torch.clamp(torch.round(w * inv), -qmax(bits), qmax(bits))
    return q, s, q * per_element


def rel_err(approx, exact, mask=None):
    if mask is not None:
        approx, exact = approx[mask], exact[mask]
    return ((approx - exact).norm() / exact.norm()).item()


def weight(device, outlier=None):
    """A Gaussian weight (std 0.02); ``outlier`` = "row" or "column" multiplies channel 7 by OUTLIER."""
    g = torch.Generator().manual_seed(0)
    w = (torch.randn(OUT, IN, generator=g) * 0.02).to(device)
    normal = torch.ones_like(w, dtype=torch.bool)
    if outlier == "row":
        w[7] *= OUTLIER
        normal[7] = False
    elif outlier == "column":
        w[:, 7] *= OUTLIER
        normal[:, 7] = False
    return w, normal


def _zero_frac(q, w, normal):
    """Share of the normal (non-outlier), non-zero weights whose code is 0."""
    m = normal & (w != 0)
    return (q[m] == 0).float().mean().item()


@claim("quant.symmetric-rtn", question=Q,
       statement="对称量化只要一个 scale：`s = max|w| / 127`，`q = clamp(round(w / s), -127, 127)`，反量化是 `q * s`。"
                 "对 {shape} 的权重，手写的结果与 `torch.fake_quantize_per_tensor_affine` 逐元素{same_tensor:?相同|不同}；"
                 "每行一个 scale 时与 `torch.fake_quantize_per_channel_affine` {same_channel:?相同|不同}；group-wise 就是把"
                 "每行切成长 {group} 的小段、对 reshape 成每行 {group} 个元素的张量做 per-channel，结果{same_group:?也相同|不同}。每个元素的误差"
                 "都不超过半个量化步长（再加上 FP32 里求 `1/s`、乘 `1/s`、乘 `s` 三次舍入）：最大误差是 `s/2` 的 {worst_over_half_step:.6f}。",
       expect={"same_tensor": True, "same_channel": True, "same_group": True,
               "worst_over_half_step": {"<=": 1.00005}})
def _(ctx):
    w, _ = weight(ctx.device)
    group = 128
    q_t, s_t, d_t = quantize(w, 8, "tensor")
    _, s_c, d_c = quantize(w, 8, "channel")
    _, s_g, d_g = quantize(w, 8, str(group))
    zeros_c = torch.zeros(OUT, dtype=torch.int32, device=ctx.device)
    ref_t = torch.fake_quantize_per_tensor_affine(w, s_t.item(), 0, -127, 127)
    ref_c = torch.fake_quantize_per_channel_affine(w, s_c.flatten(), zeros_c, 0, -127, 127)
    wg = w.reshape(-1, group)
    zeros_g = torch.zeros(wg.shape[0], dtype=torch.int32, device=ctx.device)
    ref_g = torch.fake_quantize_per_channel_affine(wg, s_g.flatten(), zeros_g, 0, -127, 127).reshape(OUT, IN)
    return {"shape": list(w.shape), "group": group, "same_tensor": torch.equal(d_t, ref_t),
            "same_channel": torch.equal(d_c, ref_c), "same_group": torch.equal(d_g, ref_g),
            "worst_over_half_step": ((d_t - w).abs().max() / (s_t / 2)).item(),
            "codes_used": [int(q_t.min().item()), int(q_t.max().item())]}


@claim("quant.no-outlier", kind="measured", question=Q,
       statement="没有离群值时，粒度的影响不大：{shape} 的高斯权重，int8 的相对误差 per-tensor {e8.tensor:pct}、per-channel "
                 "{e8.channel:pct}、每组 128 {e8.g128:pct}；int4 是 {e4.tensor:pct}、{e4.channel:pct}、{e4.g128:pct}。"
                 "per-tensor 只比 per-channel 差 {ratio8:x}（int8）：各行的最大绝对值本来就差不多，最大的一行是最小的一行的 "
                 "{row_spread:x}。",
       expect={"ratio8": {"<": 2.0}, "ratio4": {"<": 2.0}})
def _(ctx):
    w, _ = weight(ctx.device)
    e8 = {k: rel_err(quantize(w, 8, g)[2], w) for k, g in (("tensor", "tensor"), ("channel", "channel"), ("g128", "128"))}
    e4 = {k: rel_err(quantize(w, 4, g)[2], w) for k, g in (("tensor", "tensor"), ("channel", "channel"), ("g128", "128"))}
    row_max = w.abs().amax(dim=1)
    return {"shape": list(w.shape), "e8": e8, "e4": e4, "ratio8": e8["tensor"] / e8["channel"],
            "row_spread": (row_max.max() / row_max.min()).item(),
            "ratio4": e4["tensor"] / e4["channel"]}


@claim("quant.outlier-row", kind="measured", question=Q,
       statement="离群值在一个输出通道上（W 的第 7 行放大 {outlier:.0f} 倍）时：per-tensor 的 scale 被这一行撑大 "
                 "{scale_growth:x}，int8 下其余各行有 {pt_zero:pct} 的权重被舍入成 0，相对误差 {pt_err:pct}；per-channel "
                 "每行各用自己的 scale，其余各行的误差是 {pc_err:pct}，和没有离群值时（{pc_clean:pct}）完全一样。",
       expect={"pc_equals_clean": True, "pt_err": {">": 0.1}, "scale_growth": {">": 10.0}})
def _(ctx):
    w, normal = weight(ctx.device, "row")
    clean, _ = weight(ctx.device)
    q_t, s_t, d_t = quantize(w, 8, "tensor")
    _, s_clean, _ = quantize(clean, 8, "tensor")
    d_c = quantize(w, 8, "channel")[2]
    dc_clean = quantize(clean, 8, "channel")[2]
    pc_err, pc_clean = rel_err(d_c, w, normal), rel_err(dc_clean, clean, normal)
    return {"outlier": OUTLIER, "scale_growth": (s_t / s_clean).item(), "pt_zero": _zero_frac(q_t, w, normal),
            "pt_err": rel_err(d_t, w, normal), "pc_err": pc_err, "pc_clean": pc_clean, "pc_equals_clean": pc_err == pc_clean}


@claim("quant.outlier-column", kind="measured", question=Q,
       statement="离群值在一个输入通道上（W 的第 7 列放大 {outlier:.0f} 倍）时，per-channel 救不了：每一行都含有这一列，"
                 "每行的 scale 都被撑大。普通权重的 int8 相对误差 per-tensor {e8.tensor:pct}、per-channel {e8.channel:pct}"
                 "（没有离群值时 {clean8:pct}）；int4 per-channel 下 {zero4_channel:pct} 的普通权重被舍入成 0，误差 "
                 "{e4.channel:pct}。group-wise 只牵连含这一列的那一组（每行 {groups_per_row} 组中的一组）：每组 128 时 int8 "
                 "误差 {e8.g128:pct}、int4 {e4.g128:pct}，每组 32 时 int4 {e4.g32:pct}。",
       expect={"channel_degraded": {">": 5.0}, "g128_better": True, "g32_better": True,
               "zero4_channel": {">": 0.5}})
def _(ctx):
    w, normal = weight(ctx.device, "column")
    clean, _ = weight(ctx.device)
    grans = (("tensor", "tensor"), ("channel", "channel"), ("g128", "128"), ("g32", "32"))
    e8 = {k: rel_err(quantize(w, 8, g)[2], w, normal) for k, g in grans}
    e4 = {k: rel_err(quantize(w, 4, g)[2], w, normal) for k, g in grans}
    clean8 = rel_err(quantize(clean, 8, "channel")[2], clean, normal)
    q4c = quantize(w, 4, "channel")[0]
    return {"outlier": OUTLIER, "e8": e8, "e4": e4, "clean8": clean8, "channel_degraded": e8["channel"] / clean8,
            "zero4_channel": _zero_frac(q4c, w, normal), "groups_per_row": IN // 128,
            "g128_better": e8["g128"] < e8["channel"] and e4["g128"] < e4["channel"],
            "g32_better": e4["g32"] < e4["g128"]}


GROUPS = [32, 64, 128, 256, 1024]


@claim("quant.group-size-tradeoff", question=Q,
       statement="组越小误差越小，但 scale 越多：对 {shape} 的高斯权重做 int4 量化（FP16 的 scale），从 per-channel（每行 "
                 "{in_features} 个元素一个 scale）一路缩到每组 32，相对误差随组变小{monotone_err:?单调下降|并不单调}，每个权重"
                 "摊到的位数随之上升；各组大小的数值见下表。",
       expect={"monotone_err": True, "bits": {"g32": 4.5, "g64": 4.25, "g128": 4.125, "g256": 4.0625,
                                              "g1024": 4.015625, "channel": 4 + 16 / 4096}})
def _(ctx):
    w, _ = weight(ctx.device)
    err, bits = {}, {}
    for name, gran in [(f"g{g}", str(g)) for g in GROUPS] + [("channel", "channel")]:
        q, s, d = quantize(w, 4, gran)
        err[name] = rel_err(d, w)
        bits[name] = (q.numel() * 4 + s.numel() * 16) / q.numel()  # 4-bit codes + one FP16 scale per group
    order = [err[f"g{g}"] for g in GROUPS] + [err["channel"]]
    return {"shape": list(w.shape), "in_features": IN, "err": err, "bits": bits, "groups": GROUPS,
            "monotone_err": all(a < b for a, b in zip(order, order[1:]))}
