"""FP8: the two formats, what a cast does at the top of the range, and why FP8 needs scales (per tensor, per row, per block)."""

import math

import torch

from verify.claim import claim

Q = "amp-bf16-fp16"
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
TOKENS, CHANNELS, BLOCK = 64, 1024, 128


def _format(dtype):
    """Exponent and mantissa bits, range and eps of a float format (from torch.finfo), and its rounding error."""
    f = torch.finfo(dtype)
    man = round(-math.log2(f.eps))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(100_000, generator=g) * 10
    x = x[(x.abs() >= f.tiny) & (x.abs() <= f.max)]  # the normal range: relative error is bounded there
    rel = ((x.to(dtype).float() - x).abs() / x.abs()).max().item()
    return {"exp": f.bits - 1 - man, "man": man, "max": f.max, "tiny": f.tiny, "eps": f.eps}, rel


def _cast(value, dtype):
    return str(torch.tensor(value).to(dtype).float().item())


@claim("amp.fp8-formats", question=Q,
       statement="FP8 有两种格式。按 `torch.finfo`，`torch.float8_e4m3fn` 是 {e4.exp} 位指数、{e4.man} 位尾数，最大值 "
                 "{e4.max:.0f}，最小正规数 {e4.tiny:.3g}，eps {e4.eps}；`torch.float8_e5m2` 是 {e5.exp} 位指数、{e5.man} 位"
                 "尾数，最大值 {e5.max:.0f}，最小正规数 {e5.tiny:.3g}，eps {e5.eps}。随机数存进去再取出，正规数范围内的最大相对"
                 "舍入误差 E4M3 是 {e4_rel:pct}，E5M2 是 {e5_rel:pct}。E4M3 没有 inf（fn 即 finite）：torch {version} 把 "
                 "`500.0` 转成 E4M3 得 {e4_500}，`inf` 转过去也是 {e4_inf}，超出范围就饱和到最大值，NaN 仍是 {e4_nan}；"
                 "E5M2 保留了 inf，`70000.0` 转过去得 {e5_70000}。",
       expect={"e4": {"exp": 4, "man": 3, "max": 448.0, "tiny": 2.0 ** -6, "eps": 0.125},
               "e5": {"exp": 5, "man": 2, "max": 57344.0, "tiny": 2.0 ** -14, "eps": 0.25},
               "e4_rel": {"between": [2.0 ** -5, 2.0 ** -4]}, "e5_rel": {"between": [2.0 ** -4, 2.0 ** -3]},
               "e4_500": "448.0", "e4_inf": "448.0", "e4_nan": "nan", "e5_70000": "inf"})
def _(ctx):
    (e4, e4_rel), (e5, e5_rel) = _format(E4M3), _format(E5M2)
    return {"version": torch.__version__, "e4": e4, "e5": e5, "e4_rel": e4_rel, "e5_rel": e5_rel,
            "e4_500": _cast(500.0, E4M3), "e4_inf": _cast(float("inf"), E4M3), "e4_nan": _cast(float("nan"), E4M3),
            "e5_70000": _cast(70000.0, E5M2), "e5_60000": _cast(60000.0, E5M2)}


def _fp8(x, amax):
    """Scale so that amax lands on E4M3's largest value, cast, cast back, unscale."""
    scale = torch.finfo(E4M3).max / amax
    return (x * scale).to(E4M3).float() / scale


def _per_block(x, block):
    xb = x.reshape(x.shape[0], -1, block)
    return _fp8(xb, xb.abs().amax(-1, keepdim=True)).reshape(x.shape)


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


@claim("amp.fp8-scaling", kind="measured", question=Q,
       statement="FP8 的范围太小，存之前要乘一个 scale，把 amax 映射到 {=448}。scale 的粒度决定小值能不能活下来："
                 "{=64}×{=1024} 的激活里一个 token 整体放大 {=50} 倍、{=7} 个 token 只有常规的 {=0.001}，per-tensor 一个 scale "
                 "时这 7 行的相对误差是 {tensor_small:pct}，{tensor_small_zero:pct} 的值变成 0；每行一个 scale，误差是 "
                 "{row_small:pct}，和常规行（{row_normal:pct}）一样。FP8 有指数位，一行之内的差距它能吃下不少：每行一个通道放大 "
                 "{=1000} 倍时，每行一个 scale 下其余通道的误差是 {row_1e3:pct}，按 {=1×128} 的块取 scale 是 {block_1e3:pct}；"
                 "放大 {=100000} 倍时每行一个 scale 升到 {row_1e5:pct}，块 scale 仍是 {block_1e5:pct}。",
       expect={"tensor_small": {">": 0.1}, "tensor_small_zero": {">": 0.1}, "row_small": {"<": 0.04},
               "row_1e3": {"<": 0.04}, "block_1e3": {"<": 0.04}, "row_1e5": {">": 0.08}, "block_1e5": {"<": 0.04}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(TOKENS, CHANNELS, generator=g)
    rows = torch.ones(TOKENS, 1)
    rows[0], rows[1:8] = 50.0, 1e-3        # one massive token, seven quiet ones
    x = x * rows
    small, normal = slice(1, 8), slice(8, None)
    xt = _fp8(x, x.abs().amax())
    xr = _fp8(x, x.abs().amax(1, keepdim=True))
    out = {"tensor_small": _rel(xt[small], x[small]), "tensor_small_zero": (xt[small] == 0).float().mean().item(),
           "row_small": _rel(xr[small], x[small]), "row_normal": _rel(xr[normal], x[normal]),
           "tensor_normal": _rel(xt[normal], x[normal])}
    rest = torch.ones(CHANNELS, dtype=torch.bool)
    rest[:BLOCK] = False                   # the blocks without the outlier channel
    for name, factor in (("1e3", 1e3), ("1e5", 1e5)):
        y = torch.randn(TOKENS, CHANNELS, generator=torch.Generator().manual_seed(1))
        y[:, 5] *= factor
        yr, yb = _fp8(y, y.abs().amax(1, keepdim=True)), _per_block(y, BLOCK)
        out[f"row_{name}"] = _rel(yr[:, rest], y[:, rest])
        out[f"block_{name}"] = _rel(yb[:, rest], y[:, rest])
        out[f"row_zero_{name}"] = (yr[:, rest] == 0).float().mean().item()
    return out
