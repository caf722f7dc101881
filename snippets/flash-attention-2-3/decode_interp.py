"""Flash-decoding (split-KV) in Triton's interpreter: a split kernel and a combine kernel, on CPU tensors.

One query per (batch, head). The split kernel gives each (batch x head, split) program its own range of K/V
blocks and writes that range's normalised partial output and logsumexp, as FlashAttention-2's splitkv kernel
does (``oaccum``, ``softmax_lseaccum``); the combine kernel merges them with weights exp(lse_i - lse). The
interpreter runs the programs one after another with NumPy: this checks the arithmetic and counts programs,
nothing about time.
"""

from __future__ import annotations

import math

import torch

from snippets._gpu import interp
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton.language as tl  # noqa: E402  (the pinned Triton is on the path only after activate())

Q = "flash-attention-2-3"
HEADS, KV_LEN, D, BLOCK_N = 4, 1000, 64, 64
SPLITS = (1, 4, 7)


def split_kernel(q_ptr, k_ptr, v_ptr, o_part, lse_part, count_ptr, kv_len, blocks_per_split, scale,
                 D: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program (bh, split): the query of head bh against its split's K/V blocks; partial output and lse out."""
    bh = tl.program_id(0)
    split = tl.program_id(1)
    n_split = tl.num_programs(1)
    tl.atomic_add(count_ptr, 1)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + bh * D + rd)
    m = tl.full((), -float("inf"), tl.float32)
    l_i = tl.full((), 0.0, tl.float32)
    acc = tl.full((D,), 0.0, tl.float32)
    start = split * blocks_per_split * BLOCK_N
    stop = tl.minimum(start + blocks_per_split * BLOCK_N, kv_len)
    for s0 in range(start, stop, BLOCK_N):
        rn = s0 + tl.arange(0, BLOCK_N)
        mask = rn < stop
        k = tl.load(k_ptr + bh * kv_len * D + rn[:, None] * D + rd[None, :], mask=mask[:, None], other=0.0)
        v = tl.load(v_ptr + bh * kv_len * D + rn[:, None] * D + rd[None, :], mask=mask[:, None], other=0.0)
        s = tl.where(mask, tl.sum(q[None, :] * k, axis=1) * scale, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m = m_new
    empty = l_i == 0.0  # a split past the end of the cache: contributes nothing
    out = tl.where(empty, 0.0, acc / tl.where(empty, 1.0, l_i))
    lse = tl.where(empty, -float("inf"), m + tl.log(tl.where(empty, 1.0, l_i)))
    tl.store(o_part + (bh * n_split + split) * D + rd, out)
    tl.store(lse_part + bh * n_split + split, lse)


def combine_kernel(o_part, lse_part, o_ptr, count_ptr, D: tl.constexpr, SPLITS: tl.constexpr):
    """Program bh: out = sum_i exp(lse_i - lse) * o_i, with lse = logsumexp_i(lse_i)."""
    bh = tl.program_id(0)
    tl.atomic_add(count_ptr, 1)
    rs = tl.arange(0, SPLITS)
    rd = tl.arange(0, D)
    lse_i = tl.load(lse_part + bh * SPLITS + rs)
    lse_max = tl.max(lse_i, axis=0)
    w = tl.exp(lse_i - lse_max)
    lse = lse_max + tl.log(tl.sum(w, axis=0))
    o_i = tl.load(o_part + (bh * SPLITS + rs)[:, None] * D + rd[None, :])
    tl.store(o_ptr + bh * D + rd, tl.sum(tl.exp(lse_i - lse)[:, None] * o_i, axis=0))


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@claim(
    "fa23.flash-decoding-interp", kind="measured",
    question=Q,
    statement="在 Triton 解释器里跑 flash-decoding（{heads} 个头、每头一个查询、KV 长 {kv_len}、d={d}、K/V 块 {block_n}）："
              "切成 {splits} 段时，切分 kernel 分别启动 {split_programs} 个 program（每个头每段一个），合并 kernel 各 {combine_programs} 个；"
              "合并后的输出与 float64 参考的最大差是 {max_err:.1e}（fp32，检查的是小于 {=1e-5}）。{last_splits} 段时 {n_blocks} 个 K/V 块每段分 {last_per} 个，最后 {empty_splits} 段落在 KV 之外，"
              "它写出 lse = −∞，合并时权重为 0。把各段的部分输出直接平均、不按 exp(lse_i − lse) 加权，{naive_splits} 段时误差是 {naive_err:.1e}。",
    expect={"split_programs": [4, 16, 28], "combine_programs": [4, 4, 4], "max_err": {"<": 1e-5},
            "naive_err": {">": 1e-3}, "empty_splits": 1},
    needs=["triton"],
)
def _(ctx):
    """Split-KV decoding in Triton's interpreter against a float64 reference.

    范围：Triton 解释器，4 头、KV 长 1000、d=64
    """
    g = torch.Generator().manual_seed(0)
    q = torch.randn(HEADS, D, generator=g)
    k = torch.randn(HEADS, KV_LEN, D, generator=g)
    v = torch.randn(HEADS, KV_LEN, D, generator=g)
    scale = D ** -0.5
    ref = torch.softmax((k.double() @ q.double()[:, :, None]).squeeze(-1) * scale, -1)[:, None, :] @ v.double()
    ref = ref.squeeze(1)
    split_k, combine_k = interp.kernel(ctx, split_kernel), interp.kernel(ctx, combine_kernel)
    n_blocks = math.ceil(KV_LEN / BLOCK_N)
    errs, split_programs, combine_programs, naive, empties = [], [], [], {}, 0
    for splits in SPLITS:
        per = math.ceil(n_blocks / splits)
        width = _pow2(splits)  # tl.arange needs a power of two: pad with empty splits (lse = -inf)
        o_part = torch.zeros(HEADS, width, D)
        lse_part = torch.full((HEADS, width), float("-inf"))
        count = torch.zeros(1, dtype=torch.int32)
        o_real = torch.empty(HEADS, splits, D)
        lse_real = torch.empty(HEADS, splits)
        split_k[(HEADS, splits)](q, k, v, o_real, lse_real, count, KV_LEN, per, scale, D=D, BLOCK_N=BLOCK_N)
        split_programs.append(int(count.item()))
        o_part[:, :splits], lse_part[:, :splits] = o_real, lse_real
        out = torch.empty(HEADS, D)
        count.zero_()
        combine_k[(HEADS,)](o_part, lse_part, out, count, D=D, SPLITS=width)
        combine_programs.append(int(count.item()))
        errs.append((out.double() - ref).abs().max().item())
        naive[splits] = (o_real.mean(1).double() - ref).abs().max().item()
        if splits == 7:
            empties = int(torch.isinf(lse_real).all(0).sum().item())
    return {"heads": HEADS, "kv_len": KV_LEN, "d": D, "block_n": BLOCK_N, "splits": list(SPLITS),
            "split_programs": split_programs, "combine_programs": combine_programs, "errs": errs,
            "max_err": max(errs), "naive_err": naive[4], "naive_splits": 4, "empty_splits": empties,
            "last_splits": SPLITS[-1], "n_blocks": n_blocks, "last_per": math.ceil(n_blocks / SPLITS[-1])}
