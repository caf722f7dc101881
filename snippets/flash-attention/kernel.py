"""What SDPA runs on a CPU, what it returns, and whether the result is exact."""

import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

from snippets._workloads.memprof import peak_bytes
from verify.claim import claim

Q = "flash-attention"
B = 1
H = 4
N = 512
D = 64


def qkv(n=N, heads=H, seed=0, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, heads, n, D, generator=g, dtype=dtype).to(device) for _ in range(3))


def naive_attention(q, k, v):
    """Attention as the formula: the (N, N) scores and their softmax are real tensors."""
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    return torch.softmax(scores, -1) @ v


def tiled_attention(q, k, v, br=64, bc=64):
    """The FlashAttention forward pass, written with torch ops: Q in blocks of ``br`` rows, K/V in blocks of ``bc``.

    Per Q block it keeps the running max ``m``, the running sum ``l`` and the unnormalised output ``acc``;
    no tensor larger than (br, bc) per head is ever made from the scores.
    """
    n, scale = q.shape[-2], q.shape[-1] ** -0.5
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=q.dtype)
    for i in range(0, n, br):
        qi = q[..., i:i + br, :]
        m = torch.full(qi.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
        l = torch.zeros_like(m)
        acc = torch.zeros_like(qi)
        for j in range(0, n, bc):
            s = qi @ k[..., j:j + bc, :].transpose(-1, -2) * scale  # (br, bc) scores of this tile
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            correction = torch.exp(m - m_new)
            l = l * correction + p.sum(-1, keepdim=True)
            acc = acc * correction + p @ v[..., j:j + bc, :]
            m = m_new
        out[..., i:i + br, :] = acc / l
        lse[..., i:i + br] = (m + l.log()).squeeze(-1)
    return out, lse


def sdpa_ops(fn):
    """The aten::_scaled_dot_product_* operators (and _safe_softmax) that ``fn`` ran."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return [e.name for e in prof.events()
            if e.name.startswith("aten::_scaled_dot_product") or e.name == "aten::_safe_softmax"]


@claim("flash.cpu-kernel", question=Q,
       statement="FlashAttention 不只是 GPU 上的东西：CPU 上对 4 维 float32 的 q、k、v 调用 "
                 "`F.scaled_dot_product_attention`，实际执行的算子是 {kernel}，它返回两样东西：形状 {out_shape} "
                 "的输出，和形状 {lse_shape}、类型 {lse_dtype} 的 `logsumexp`（每个查询行一个数）。",
       expect={"kernel": "aten::_scaled_dot_product_flash_attention_for_cpu", "out_shape": [B, H, N, D],
               "lse_shape": [B, H, N], "lse_dtype": "torch.float32"})
def _(ctx):
    q, k, v = qkv()  # CPU on purpose: the CPU kernel is the subject
    ops = sdpa_ops(lambda: F.scaled_dot_product_attention(q, k, v))
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)
    return {"kernel": ops[0] if ops else None, "ops": ops, "out_shape": list(out.shape),
            "lse_shape": list(lse.shape), "lse_dtype": str(lse.dtype)}


@claim("flash.logsumexp", kind="measured", question=Q,
       statement="这个 `logsumexp` 就是 online softmax 的状态 `m + log(l)`：它与对完整分数矩阵求的 "
                 "`torch.logsumexp(q @ k.T * scale, -1)` 最多差 {lse_diff:.1e}；有了它，反向时 `exp(s - lse)` "
                 "直接给出概率，不用再求一遍最大值和和。",
       expect={"lse_diff": {"<": 1e-4}, "probs_from_lse_diff": {"<": 1e-6}})
def _(ctx):
    q, k, v = qkv()
    _, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)
    scores = q @ k.transpose(-1, -2) * D ** -0.5
    return {"lse_diff": (lse - torch.logsumexp(scores, -1)).abs().max().item(),
            "probs_from_lse_diff": (torch.exp(scores - lse[..., None]) - torch.softmax(scores, -1)).abs().max().item()}


@claim("flash.cpu-fallback", question=Q,
       statement="融合 kernel 有条件，不满足时 SDPA 静默退回 math 实现：在 CPU 上，训练时常见的 `dropout_p=0.1` 走 "
                 "{ops.dropout}，三维的 (B, N, D) 输入走 {ops.three_dim}，最后一维不连续的 q 走 {ops.strided}；"
                 "math 实现里 `_safe_softmax` 作用在形状 {math_softmax_shape} 的张量上，也就是完整的 (B, H, N, N) 分数矩阵。"
                 "去掉这些条件后走 {ops.plain}。",
       expect={"ops": {"plain": "aten::_scaled_dot_product_flash_attention_for_cpu",
                       "dropout": "aten::_scaled_dot_product_attention_math",
                       "three_dim": "aten::_scaled_dot_product_attention_math",
                       "strided": "aten::_scaled_dot_product_attention_math"},
               "math_softmax_shape": [B, H, 128, 128]})
def _(ctx):
    q, k, v = qkv(n=128)  # CPU on purpose: these are the CPU dispatcher's rules
    strided_q = q.transpose(-1, -2).contiguous().transpose(-1, -2)  # same values, stride 1 on dim -2
    cases = {
        "plain": lambda: F.scaled_dot_product_attention(q, k, v),
        "dropout": lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1),
        "three_dim": lambda: F.scaled_dot_product_attention(q[0], k[0], v[0]),
        "strided": lambda: F.scaled_dot_product_attention(strided_q, k, v),
    }
    ops = {}
    for name, fn in cases.items():
        names = sdpa_ops(fn)
        ops[name] = names[0] if names else None
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        cases["dropout"]()
    shapes = [e.input_shapes[0] for e in prof.events() if e.name == "aten::_safe_softmax" and e.input_shapes]
    return {"ops": ops, "math_softmax_shape": list(shapes[0]) if shapes else None,
            "strided_q_stride": strided_q.stride()}


@claim("flash.force-flash-raises", question=Q,
       statement="在 CPU 上把后端限定为 flash（`with sdpa_kernel(SDPBackend.FLASH_ATTENTION)`）时，同样的 `dropout_p=0.1` 不再退回，"
                 "而是抛出 RuntimeError（“No available kernel”），之前的警告写明了原因：“{reason}”。",
       raises=("RuntimeError", "No available kernel"))
def _(ctx):
    q, k, v = qkv(n=128)  # CPU on purpose, as in flash.cpu-fallback
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
        finally:
            reasons = [str(w.message).split(" (Triggered")[0] for w in caught if "dropout" in str(w.message)]
            ctx.observe(reason=reasons[0] if reasons else None)


@claim("flash.exact", kind="measured", question=Q,
       statement="FlashAttention 是精确算法，不是近似：以 float64 的手写 attention 为准，float32 的 SDPA 最大误差 "
                 "{err_sdpa:.1e}，float32 的手写 attention 是 {err_naive:.1e}，同一个量级；真正的近似方法差得远，"
                 "每个查询只保留分数最高的 {=64} 个 key（N={=512} 的八分之一，稀疏注意力的做法），误差是 {err_topk:.2f}，是 SDPA 的 "
                 "{topk_over_sdpa:x}。但“精确”不等于逐位相同：SDPA 和手写版的求和顺序不同，两者"
                 "{bitwise_equal:?逐位相同|并不逐位相同}（`torch.equal`），最多差 {sdpa_vs_naive:.1e}。",
       expect={"err_sdpa": {"<": 1e-5}, "err_naive": {"<": 1e-5}, "err_topk": {">": 0.01},
               "topk_over_sdpa": {">": 1000}, "bitwise_equal": False})
def _(ctx):
    q, k, v = qkv()  # CPU on purpose: float32 on a GPU may use TF32 or reduced-precision paths
    reference = naive_attention(q.double(), k.double(), v.double())
    sdpa = F.scaled_dot_product_attention(q, k, v)
    naive = naive_attention(q, k, v)
    topk = N // 8
    scores = q @ k.transpose(-1, -2) * D ** -0.5
    kept = scores.topk(topk, -1).indices
    sparse = torch.full_like(scores, float("-inf")).scatter(-1, kept, scores.gather(-1, kept))
    approx = torch.softmax(sparse, -1) @ v
    err = {name: (t.double() - reference).abs().max().item() for name, t in
           (("sdpa", sdpa), ("naive", naive), ("topk", approx))}
    return {"err_sdpa": err["sdpa"], "err_naive": err["naive"], "err_topk": err["topk"], "topk": topk, "topk_over_sdpa": err["topk"] / err["sdpa"],
            "bitwise_equal": torch.equal(sdpa, naive), "sdpa_vs_naive": (sdpa - naive).abs().max().item()}


@claim("flash.grads-match", kind="measured", question=Q,
       statement="反向同样精确：SDPA 走 {backward_op}，用保存的 `logsumexp` 重算概率，q、k、v 的梯度与 float64 "
                 "手写 attention 的梯度最多差 {grad_err:.1e}。",
       expect={"backward_op": "aten::_scaled_dot_product_flash_attention_for_cpu_backward", "grad_err": {"<": 1e-4}})
def _(ctx):
    q, k, v = (t.requires_grad_() for t in qkv(n=256))
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    g = torch.Generator().manual_seed(5)
    grad_out = torch.randn(B, H, 256, D, generator=g)
    out = F.scaled_dot_product_attention(q, k, v)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out.backward(grad_out)
    names = [e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")]
    naive_attention(q64, k64, v64).backward(grad_out.double())
    err = max((a.grad.double() - b.grad).abs().max().item() for a, b in ((q, q64), (k, k64), (v, v64)))
    return {"backward_op": names[0] if names else None, "grad_err": err}


@claim("flash.tiled-by-hand", kind="measured", question=Q,
       statement="算法本身十几行就能写出来：Q 按 {=64} 行一块、K/V 按 {=64} 行一块，每个 Q 块维护 `m`、`l` 和未归一化的"
                 "输出累加器，每来一个 K/V 块，就把旧的 `l` 和累加器都乘上 `exp(m_old - m_new)` 再加上新块的贡献，最后除以 `l`。"
                 "这样写出的结果与 SDPA 最多差 {vs_sdpa:.1e}，`m + log(l)` 与 SDPA 的 `logsumexp` 最多差 {lse_diff:.1e}；"
                 "N={=1024} 时它运行中的内存峰值是 {peak.tiled:bytes}，手写的整块 attention 是 {peak.naive:bytes}"
                 "（一份 N×N 分数矩阵就有 {scores_bytes:bytes}）。",
       expect={"vs_sdpa": {"<": 1e-5}, "lse_diff": {"<": 1e-4}, "tiled_below_one_score_matrix": True,
               "naive_at_least_two_score_matrices": True})
def _(ctx):
    q, k, v = qkv(n=1024)
    br = bc = 64
    out, lse = tiled_attention(q, k, v, br, bc)
    ref_out, ref_lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)
    peak = {"tiled": peak_bytes(lambda: tiled_attention(q, k, v, br, bc)),
            "naive": peak_bytes(lambda: naive_attention(q, k, v))}
    scores_bytes = B * H * 1024 * 1024 * 4
    return {"br": br, "bc": bc, "n": 1024, "vs_sdpa": (out - ref_out).abs().max().item(),
            "lse_diff": (lse - ref_lse).abs().max().item(), "peak": peak, "scores_bytes": scores_bytes,
            "tiled_below_one_score_matrix": peak["tiled"] < scores_bytes,
            "naive_at_least_two_score_matrices": peak["naive"] >= 2 * scores_bytes}
