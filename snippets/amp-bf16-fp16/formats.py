"""FP16 and BF16 as bit formats: range, precision, subnormals, and what FP32 has in common with BF16."""

import math

import torch

from verify.claim import claim

Q = "amp-bf16-fp16"


def _layout(dtype):
    """(exponent bits, mantissa bits) of a float format, read back from torch.finfo."""
    f = torch.finfo(dtype)
    mantissa = round(-math.log2(f.eps))
    return f.bits - 1 - mantissa, mantissa


@claim("amp.format-layout", question=Q,
       statement="两种格式都是 16 位，差别在指数和尾数怎么分：按 `torch.finfo` 推算，FP16 是 {fp16_exp} 位指数、"
                 "{fp16_man} 位尾数，最大值 {fp16_max:.0f}，最小正规数 {fp16_tiny:.3g}，eps（1 到下一个可表示数的距离）"
                 "{fp16_eps:.3g}；BF16 是 {bf16_exp} 位指数、{bf16_man} 位尾数，最大值 {bf16_max:.3g}，最小正规数 "
                 "{bf16_tiny:.3g}，eps {bf16_eps:.3g}。BF16 的指数位和 FP32（{fp32_exp} 位）一样多，最小正规数与 FP32 "
                 "{same_tiny_as_fp32:?相同|不同}；代价是 eps 比 FP16 大 {eps_ratio:x}。",
       expect={"fp16_exp": 5, "fp16_man": 10, "bf16_exp": 8, "bf16_man": 7, "fp32_exp": 8,
               "fp16_max": 65504.0, "fp16_tiny": 2.0 ** -14, "fp16_eps": 2.0 ** -10,
               "bf16_max": (2 - 2.0 ** -7) * 2.0 ** 127, "bf16_tiny": 2.0 ** -126, "bf16_eps": 2.0 ** -7,
               "same_tiny_as_fp32": True, "eps_ratio": 8.0})
def _(ctx):
    h, b, s = (torch.finfo(d) for d in (torch.float16, torch.bfloat16, torch.float32))
    (he, hm), (be, bm), (se, _) = (_layout(d) for d in (torch.float16, torch.bfloat16, torch.float32))
    return {"fp16_exp": he, "fp16_man": hm, "bf16_exp": be, "bf16_man": bm, "fp32_exp": se,
            "fp16_max": h.max, "fp16_tiny": h.tiny, "fp16_eps": h.eps,
            "bf16_max": b.max, "bf16_tiny": b.tiny, "bf16_eps": b.eps, "fp32_max": s.max,
            "same_tiny_as_fp32": b.tiny == s.tiny, "eps_ratio": b.eps / h.eps}


@claim("amp.bf16-is-fp32-top-half", question=Q,
       statement="BF16 就是 FP32 的高 16 位：把 {n} 个随机 BF16 数转成 FP32，低 16 位{low_half_zero:?全是 0|不全是 0}，"
                 "高 16 位与 BF16 的位模式{top_half_equal:?逐一相同|不全相同}。FP16 则不是：同样转成 FP32 后，"
                 "高 16 位与 FP16 的位模式相同的只占 {fp16_top_equal:pct}，指数要重新对齐。所以 FP32 与 BF16 之间的转换只是"
                 "舍入尾数、补零，指数不用重新对齐。",
       expect={"low_half_zero": True, "top_half_equal": True, "fp16_top_equal": {"<": 0.01}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4096, generator=g) * 10
    b = x.bfloat16()
    bits32 = b.float().view(torch.int32)
    h = x.half()
    h_bits32 = h.float().view(torch.int32)
    return {"n": x.numel(), "low_half_zero": bool(((bits32 & 0xFFFF) == 0).all()),
            "top_half_equal": bool(((bits32 >> 16).to(torch.int16) == b.view(torch.int16)).all()),
            "fp16_top_equal": ((h_bits32 >> 16).to(torch.int16) == h.view(torch.int16)).float().mean().item()}


@claim("amp.bf16-top-of-range", question=Q,
       statement="但“转 BF16 不会溢出”只在 FP32 范围的顶端以下成立：BF16 的最大值是 {bf16_max:.5g}，比 FP32 的 {fp32_max:.5g} 小，"
                 "`3.40e38` 转成 BF16 是 {top}，FP32 的最大值转过去也是 {fp32_max_as_bf16}；按就近舍入、平局取偶，从 {halfway:.5g} 起（转成 BF16 是 {at_halfway}）"
                 "都会变成 inf，比它略小的数{just_below_halfway_is_max:?舍入到 BF16 的最大值|不会舍入到最大值}。",
       expect={"top": "inf", "fp32_max_as_bf16": "inf", "at_halfway": "inf", "just_below_halfway_is_max": True,
               "bf16_max": {"<": 3.4e38}})
def _(ctx):
    b, s = torch.finfo(torch.bfloat16), torch.finfo(torch.float32)
    # the halfway point between BF16's largest finite value and the next step (which would be 2^128)
    halfway = (b.max + 2.0 ** 128) / 2
    below = torch.tensor(halfway * (1 - 2 ** -20)).bfloat16().item()
    return {"bf16_max": b.max, "fp32_max": s.max, "top": str(torch.tensor(3.40e38).bfloat16().item()),
            "fp32_max_as_bf16": str(torch.tensor(s.max).bfloat16().item()), "halfway": halfway,
            "at_halfway": str(torch.tensor(halfway).bfloat16().item()),
            "just_below_halfway_is_max": below == b.max}


@claim("amp.fp16-overflow", question=Q,
       statement="FP16 的问题先出在上限：`70000.0` 转成 FP16 就是 {fp16_70000}，FP16 里 `300 * 300` 得 {fp16_square}；"
                 "同样的值在 BF16 里是 {bf16_70000:.0f} 和 {bf16_square:.0f}，没有溢出，只是被舍入到 BF16 的间距上。",
       expect={"fp16_70000": "inf", "fp16_square": "inf", "bf16_70000": 70144.0, "bf16_square": 90112.0})
def _(ctx):
    v = torch.tensor(70000.0, device=ctx.device)
    a = torch.tensor(300.0, device=ctx.device)
    return {"fp16_70000": str(v.half().item()), "fp16_square": str((a.half() * a.half()).item()),
            "bf16_70000": v.bfloat16().item(), "bf16_square": (a.bfloat16() * a.bfloat16()).item()}


@claim("amp.fp16-subnormal", question=Q,
       statement="下限要分两步看：`finfo(torch.float16).tiny` 是最小的正规数 {tiny:.3g}，比它小的值进入次正规数，"
                 "先丢精度、后变 0。`1e-6` 存成 FP16 是 {h_1e6:.4g}（相对误差 {rel_1e6:pct}），`1e-7` 是 {h_1e7:.4g}"
                 "（相对误差 {rel_1e7:pct}）；最小的正数是 2^-24 = {smallest:.3g}，`2e-8` 存进去是 {h_2e8}。"
                 "BF16 的正规数一直延伸到 {bf16_tiny:.3g}，`1e-6` 存成 {b_1e6:.4g}，`1e-30` 存成 {b_1e30:.4g}。",
       expect={"tiny": 2.0 ** -14, "h_1e6": {"between": [1.0e-6, 1.02e-6]}, "rel_1e6": {"between": [0.005, 0.02]},
               "rel_1e7": {"between": [0.1, 0.3]}, "smallest": 2.0 ** -24, "h_2e8": 0.0,
               "bf16_tiny": 2.0 ** -126, "b_1e30": {"approx": [1e-30, 0.01]}})
def _(ctx):
    def h(v):
        return torch.tensor(v, device=ctx.device).half().item()

    def b(v):
        return torch.tensor(v, device=ctx.device).bfloat16().item()

    smallest = torch.nextafter(torch.tensor(0.0, dtype=torch.float16), torch.tensor(1.0, dtype=torch.float16)).item()
    return {"tiny": torch.finfo(torch.float16).tiny, "h_1e6": h(1e-6), "rel_1e6": abs(h(1e-6) - 1e-6) / 1e-6,
            "h_1e7": h(1e-7), "rel_1e7": abs(h(1e-7) - 1e-7) / 1e-7, "smallest": smallest, "h_2e8": h(2e-8),
            "bf16_tiny": torch.finfo(torch.bfloat16).tiny, "b_1e6": b(1e-6), "b_1e30": b(1e-30)}


@claim("amp.precision", question=Q,
       statement="精度的差别：把 {n} 个随机数存成半精度，最大相对舍入误差 FP16 是 {fp16_rel:.3g}，BF16 是 {bf16_rel:.3g}"
                 "（都是各自 eps 的一半以内）。整数也一样：BF16 里 `257` 变成 {bf16_257:.0f}，FP16 里 `2049` 变成 "
                 "{fp16_2049:.0f}；`1 + 1e-3` 在 BF16 里就是 {bf16_one_plus:.0f}，在 FP16 里是 {fp16_one_plus:.6g}。",
       expect={"fp16_rel": {"between": [2.0 ** -12, 2.0 ** -11]}, "bf16_rel": {"between": [2.0 ** -9, 2.0 ** -8]},
               "bf16_257": 256.0, "fp16_2049": 2048.0, "bf16_one_plus": 1.0, "fp16_one_plus": 1.0 + 2.0 ** -10})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(100_000, generator=g).to(ctx.device)
    x = x[x.abs() > 1e-3]  # FP16 subnormals would lose relative precision: stay in the normal range

    def rel(d):
        return ((x.to(d).float() - x).abs() / x.abs()).max().item()

    one = torch.tensor(1.0, device=ctx.device)
    return {"n": x.numel(), "fp16_rel": rel(torch.float16), "bf16_rel": rel(torch.bfloat16),
            "bf16_257": torch.tensor(257.0).bfloat16().item(), "fp16_2049": torch.tensor(2049.0).half().item(),
            "bf16_one_plus": (one.bfloat16() + 1e-3).item(), "fp16_one_plus": (one.half() + 1e-3).item()}
