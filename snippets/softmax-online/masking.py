"""A row whose every position is masked: NaN, a uniform row or zeros, depending on who computes it."""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from verify.claim import claim

Q = "softmax-online"
NEG_INF = float("-inf")


def _show(t):
    return [round(v, 4) if v == v else "nan" for v in t.tolist()]


def safe_softmax(x):
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def online_softmax(x, block, guard):
    """Online softmax; with ``guard``, a row that has seen only -inf keeps l = 0 and comes out as zeros."""
    m = torch.full(x.shape[:-1], NEG_INF, dtype=x.dtype, device=x.device)
    l = torch.zeros_like(m)
    for j in range(0, x.shape[-1], block):
        b = x[..., j:j + block]
        m_new = torch.maximum(m, b.amax(-1))
        if guard:
            # subtract 0 instead of -inf where the row has no finite score yet: exp(-inf - 0) = 0, not nan
            base = torch.where(m_new == NEG_INF, torch.zeros_like(m_new), m_new)
        else:
            base = m_new
        l = l * torch.exp(m - base) + torch.exp(b - base[..., None]).sum(-1)
        m = m_new
    if guard:
        base = torch.where(m == NEG_INF, torch.zeros_like(m), m)
        l = torch.where(l == 0, torch.ones_like(l), l)
    else:
        base = m
    return torch.exp(x - base[..., None]) / l[..., None]


def _qkv_and_mask(device):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, 4, 8, generator=g).to(device) for _ in range(3))
    keep = torch.ones(4, 4, dtype=torch.bool, device=device)
    keep[1] = False  # query 1 may attend to nothing (a padding query, say)
    return q, k, v, keep


@claim("softmax.masked-row", question=Q,
       statement="一整行都被 mask 时，结果取决于 mask 用什么值：用 `-inf` 填，`torch.softmax` 得到 {torch_inf}，"
                 "手写的 safe softmax 和不设防的 online softmax 也都是 {safe_inf}，因为最大值本身是 `-inf`，"
                 "`-inf - (-inf)` 是 NaN；用常见的 `-1e9` 填，得到的是均匀分布 {torch_finite}，"
                 "这个位置会把所有 V 平均一遍，而不是输出 0。",
       expect={"torch_inf": ["nan", "nan", "nan", "nan"], "safe_inf": ["nan", "nan", "nan", "nan"],
               "online_inf": ["nan", "nan", "nan", "nan"], "torch_finite": [0.25, 0.25, 0.25, 0.25]})
def _(ctx):
    row = torch.zeros(1, 4, device=ctx.device)
    everything = torch.ones(1, 4, dtype=torch.bool, device=ctx.device)
    inf_row = row.masked_fill(everything, NEG_INF)
    finite_row = row.masked_fill(everything, -1e9)
    return {"torch_inf": _show(torch.softmax(inf_row, -1)[0]), "safe_inf": _show(safe_softmax(inf_row)[0]),
            "online_inf": _show(online_softmax(inf_row, 2, guard=False)[0]),
            "torch_finite": _show(torch.softmax(finite_row, -1)[0])}


@claim("softmax.half-mask-overflows", question=Q,
       statement="`-1e9` 在 FP16 里根本放不下：对 FP16 的分数调用 `masked_fill(mask, -1e9)` 直接抛出 RuntimeError，"
                 "半精度代码要改用 `torch.finfo(torch.float16).min`（{half_min:.0f}）或 `-inf`。",
       raises=("RuntimeError", "without overflow"))
def _(ctx):
    scores = torch.zeros(1, 4, dtype=torch.float16, device=ctx.device)
    ctx.observe(half_min=torch.finfo(torch.float16).min)
    scores.masked_fill(torch.ones(1, 4, dtype=torch.bool, device=ctx.device), -1e9)


@claim("softmax.sdpa-doc-reference-nan", kind="measured", question=Q,
       statement="SDPA 文档给出的参考实现（把 mask 为 False 的位置加上 `-inf`，再 softmax）对同一行{reference_row_nan:?给出 NaN|给出的不是 NaN}，"
                 "其余各行与 SDPA 最多差 {other_rows_diff:.1e}：全被 mask 的行输出什么，文档没有规定，换一个后端或版本可能不同，"
                 "自己的代码不要依赖它。",
       expect={"reference_row_nan": True, "other_rows_diff": {"<": 1e-5}})
def _(ctx):
    q, k, v, keep = _qkv_and_mask("cpu")
    # the reference implementation in the docstring of torch.nn.functional.scaled_dot_product_attention
    scale = 1 / q.size(-1) ** 0.5
    bias = torch.zeros(keep.shape, dtype=q.dtype).masked_fill_(keep.logical_not(), float("-inf"))
    weight = torch.softmax(q @ k.transpose(-2, -1) * scale + bias, dim=-1)
    reference = weight @ v
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    others = [0, 2, 3]
    return {"reference_row_nan": bool(reference[0, 0, 1].isnan().all()),
            "other_rows_diff": (reference[0, 0, others] - sdpa[0, 0, others]).abs().max().item()}


@claim("softmax.sdpa-masked-row", kind="measured", question=Q,
       statement="`scaled_dot_product_attention` 的实现在这里输出 0：在 CPU 上给它一个第 1 行全为 False 的布尔 "
                 "mask，默认选中的融合 kernel（{kernel}）输出的这一行{flash_row_zero:?全是 0|不全是 0}，"
                 "math 后端{math_row_zero:?也全是 0|却不全是 0}，其余各行与手写 attention 最多差 {other_rows_diff:.1e}。这是 torch 2.5 起 math 与 CPU flash 实现的行为，"
                 "不是文档写下的规则。",
       expect={"kernel": "aten::_scaled_dot_product_flash_attention_for_cpu", "flash_row_zero": True,
               "math_row_zero": True, "other_rows_diff": {"<": 1e-5}, "any_nan": False})
def _(ctx):
    # CPU on purpose: the statement is about the CPU kernels.
    q, k, v, keep = _qkv_and_mask("cpu")
    with torch.profiler.profile() as prof:
        fused = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    kernels = [e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")]
    with sdpa_kernel(SDPBackend.MATH):
        math_out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    scores = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).masked_fill(~keep, NEG_INF)
    reference = torch.softmax(scores, -1) @ v
    others = [0, 2, 3]
    return {"kernel": kernels[0] if kernels else None,
            "flash_row_zero": bool((fused[0, 0, 1] == 0).all()), "math_row_zero": bool((math_out[0, 0, 1] == 0).all()),
            "other_rows_diff": (fused[0, 0, others] - reference[0, 0, others]).abs().max().item(),
            "any_nan": bool(fused.isnan().any() or math_out.isnan().any())}


@claim("online-softmax.masked-guard", kind="measured", question=Q,
       statement="融合 kernel 里的 online softmax 要为此设防：最大值仍是 `-inf` 时不拿它做减数，最后 `l` 为 0 的行把 "
                 "`l` 当 1。加上这两处判断，手写的 online softmax 对全被 mask 的行输出 {guarded_row}，"
                 "整个 attention 的输出与 SDPA 相同（最大差 {vs_sdpa:.1e}）；没被 mask 的行不受这两处判断影响"
                 "（与不设防的版本{unmasked_unchanged:?逐位相等|并不相等}）。",
       expect={"guarded_row": [0.0, 0.0, 0.0, 0.0], "vs_sdpa": {"<": 1e-5}, "unmasked_unchanged": True})
def _(ctx):
    q, k, v, keep = _qkv_and_mask("cpu")  # compared with the CPU kernel of softmax.sdpa-masked-row
    scores = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).masked_fill(~keep, NEG_INF)
    guarded = online_softmax(scores, 2, guard=True)
    plain = online_softmax(scores, 2, guard=False)
    out = guarded @ v
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    rows = [0, 2, 3]
    return {"guarded_row": _show(guarded[0, 0, 1]), "vs_sdpa": (out - sdpa).abs().max().item(),
            "unmasked_unchanged": torch.equal(guarded[0, 0, rows], plain[0, 0, rows])}
