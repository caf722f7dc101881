"""Where a scale may sit so that the matmul stays an integer matmul, and what the integers accumulate in."""

import torch

from verify.claim import claim

Q = "quant-granularity"


def _q8(x, dim):
    """Symmetric int8 along ``dim`` (the scale is shared across that dim): (int8 codes, scales)."""
    s = x.abs().amax(dim=dim, keepdim=True) / 127
    return torch.clamp(torch.round(x / s), -127, 127).to(torch.int8), s


def _data(device, tokens=64, k=1024, n=256):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, k, generator=g).to(device)
    w = (torch.randn(n, k, generator=g) * 0.02).to(device)
    return x, w


@claim("quant.int32-accumulate", kind="measured", question=Q,
       statement="int8 的乘积要用 int32 累加：K = {k} 时，随机 int8 矩阵乘的精确结果最大到 {max_abs:int}，超过 int16 的上限 "
                 "{int16_max}。在 CPU 上对两个 int8 张量直接 `@`，PyTorch 得到的仍是 {plain_dtype}，结果按 256 回绕，{wrong_frac:.1%}"
                 " 的元素是错的；`torch._int_mm` 输出 {int_mm_dtype}，{int_mm_exact:?与精确结果逐元素相同|与精确结果不同}。在 CPU 上它对只有 "
                 "{one_row_m} 行的输入{one_row_ok:?也能算|会报错}。",
       expect={"plain_dtype": "torch.int8", "int_mm_dtype": "torch.int32", "int_mm_exact": True,
               "max_abs": {">": 32767}, "wrong_frac": {">": 0.5}, "one_row_ok": True, "wraps_mod_256": True})
def _(ctx):
    # On the CPU on purpose, also on a GPU machine: the GPU's limits are the next claim.
    g = torch.Generator().manual_seed(0)
    k = 4096
    a = torch.randint(-127, 128, (32, k), generator=g, dtype=torch.int8)
    b = torch.randint(-127, 128, (k, 32), generator=g, dtype=torch.int8)
    exact = a.double() @ b.double()  # every partial sum is an integer below 2**53: exact in FP64
    out = {"k": k, "max_abs": exact.abs().max().item(), "int16_max": torch.iinfo(torch.int16).max}
    plain = a @ b
    out.update(plain_dtype=str(plain.dtype), wrong_frac=(plain.double() != exact).float().mean().item(),
               wraps_mod_256=torch.equal(plain, exact.long().to(torch.int8)))
    try:
        out.update(one_row_m=1, one_row_ok=torch._int_mm(a[:1], b).shape[0] == 1)
    except RuntimeError as exc:
        out.update(one_row_m=1, one_row_ok=False, one_row_message=str(exc)[:160])
    mm = torch._int_mm(a, b)
    out.update(int_mm_dtype=str(mm.dtype), int_mm_exact=torch.equal(mm.double(), exact))
    return out


@claim("quant.cuda-int-mm-rows", question=Q, needs=["cuda"],
       statement="GPU 上的整数矩阵乘有形状限制：`torch._int_mm` 要求第一个矩阵多于 16 行，对 {=1} 行的输入（一次只解码一个 "
                 "token）抛出 RuntimeError。",
       raises=("RuntimeError", "greater than 16"))
def _(ctx):
    """GPU 上 `torch._int_mm` 对 1×64 的 int8 矩阵乘 64×64 的 int8 矩阵（只有一行，如 batch 1 的解码）是否报错。"""
    a = torch.randint(-127, 128, (1, 64), dtype=torch.int8, device="cuda")
    b = torch.randint(-127, 128, (64, 64), dtype=torch.int8, device="cuda")
    ctx.observe(m=a.shape[0])
    torch._int_mm(a, b)


@claim("quant.scales-factor-out", kind="measured", question=Q,
       statement="scale 放在哪一维，决定矩阵乘还能不能用整数算。per-token 的激活 scale（每行一个）和 per-channel 的权重 "
                 "scale（每个输出通道一个）都在求和之外：`Y = (s_x s_wᵀ) ⊙ (X_q W_qᵀ)`，一次 int8 矩阵乘（int32 累加）"
                 "加一次逐元素缩放，与先反量化再做 FP32 矩阵乘最多相差 {factored_rel:.1e}（相对）。group-wise 的权重 scale "
                 "沿求和的 K 维变化，提不出来：K = {k}、每组 {group} 时，每个输出要算 {partials} 段整数部分和，各乘该组的 "
                 "scale 再相加，结果同样一致（{grouped_rel:.1e}）。",
       expect={"factored_rel": {"<": 1e-5}, "grouped_rel": {"<": 1e-5}, "partials": 8})
def _(ctx):
    x, w = _data(ctx.device)
    xq, sx = _q8(x, dim=1)   # one scale per token (row of X)
    wq, sw = _q8(w, dim=1)   # one scale per output channel (row of W)
    ref = (xq.float() * sx) @ (wq.float() * sw).t()
    acc = torch._int_mm(xq, wq.t())
    factored = acc.float() * sx * sw.t()
    group = 128
    k = x.shape[1]
    wg = w.reshape(w.shape[0], k // group, group)
    sg = wg.abs().amax(-1, keepdim=True) / 127
    wq_g = torch.clamp(torch.round(wg / sg), -127, 127).to(torch.int8)
    ref_g = (xq.float() * sx) @ (wq_g.float() * sg).reshape(w.shape).t()
    grouped = torch.zeros_like(ref_g)
    for j in range(k // group):
        part = torch._int_mm(xq[:, j * group:(j + 1) * group].contiguous(), wq_g[:, j].t())
        grouped += part.float() * sg[:, j].reshape(1, -1)
    grouped *= sx

    def rel(a, b):
        return ((a - b).abs().max() / b.abs().max()).item()

    return {"factored_rel": rel(factored, ref), "k": k, "group": group, "partials": k // group,
            "grouped_rel": rel(grouped, ref_g)}


@claim("quant.activation-outlier-channels", kind="measured", question=Q,
       statement="按大模型激活的典型形态构造：离群值固定在少数几个通道（列）上，每个 token 都有。给 {tokens}×{channels} 的"
                 "激活在 {n_outliers} 个通道上乘以 {factor:.0f}，按非离群通道算 int8 的相对误差：per-tensor 是 {e.tensor:pct}，"
                 "per-token 是 {e.token:pct}，仍是按通道量化（每列一个 scale，{e.channel:pct}）的 {token_over_channel:x}。"
                 "可每列一个 scale 正落在矩阵乘求和的 K 维上，提不到求和外。",
       expect={"token_better_than_tensor": True, "token_over_channel": {">": 10.0}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    tokens, channels, factor = 128, 1024, 50.0
    x = torch.randn(tokens, channels, generator=g).to(ctx.device)
    outliers = [7, 300, 901]
    x[:, outliers] *= factor
    normal = torch.ones(channels, dtype=torch.bool, device=ctx.device)
    normal[outliers] = False

    def err(dim):
        if dim is None:
            s = x.abs().amax() / 127
        else:
            s = x.abs().amax(dim=dim, keepdim=True) / 127
        d = torch.clamp(torch.round(x / s), -127, 127) * s
        return ((d - x)[:, normal].norm() / x[:, normal].norm()).item()

    e = {"tensor": err(None), "token": err(1), "channel": err(0)}
    return {"tokens": tokens, "channels": channels, "n_outliers": len(outliers), "factor": factor, "e": e,
            "token_better_than_tensor": e["token"] < e["tensor"], "token_over_channel": e["token"] / e["channel"]}


@claim("quant.asymmetric-nonnegative", kind="measured", question=Q,
       statement="非负的数据（例如 ReLU 之后的激活）用对称量化会浪费一半的码：int8 对称量化只用到 {sym_codes} 个不同的码，"
                 "加零点的非对称量化用到 {asym_codes} 个，相对误差从 {sym_err:pct} 降到 {asym_err:pct}。以 0 为中心的高斯权重上，"
                 "非对称量化的误差是对称的 {weight_ratio:.2f}，省不了多少，所以权重通常用对称量化，省掉零点。",
       expect={"asym_codes": {">": 150}, "improvement": {">": 1.5},
               "weight_ratio": {">": 0.7}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.relu(torch.randn(256, 256, generator=g)).to(ctx.device)
    s = x.abs().amax() / 127
    q_sym = torch.clamp(torch.round(x / s), -127, 127)
    lo, hi = x.amin(), x.amax()
    sa = (hi - lo) / 255
    z = torch.round(-lo / sa)
    q_asym = torch.clamp(torch.round(x / sa) + z, 0, 255)

    def rel(d, ref=x):
        return ((d - ref).norm() / ref.norm()).item()

    sym_err, asym_err = rel(q_sym * s), rel((q_asym - z) * sa)
    w = torch.randn(256, 256, generator=g).to(ctx.device) * 0.02
    sw = w.abs().amax() / 127
    saw = (w.amax() - w.amin()) / 255
    zw = torch.round(-w.amin() / saw)
    w_sym = torch.clamp(torch.round(w / sw), -127, 127) * sw
    w_asym = (torch.clamp(torch.round(w / saw) + zw, 0, 255) - zw) * saw
    return {"weight_ratio": rel(w_asym, w) / rel(w_sym, w),"sym_codes": q_sym.unique().numel(), "asym_codes": q_asym.unique().numel(), "sym_err": sym_err,
            "asym_err": asym_err, "improvement": sym_err / asym_err}
