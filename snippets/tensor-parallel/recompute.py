"""Tensor-parallel all-reduces of one pre-LN block under activation recomputation, on two gloo processes
on the CPU: no recomputation, the whole block wrapped in ``torch.utils.checkpoint`` (full recompute: the
reentrant variant replays the whole forward, the non-reentrant default stops once the saved tensors are
back) and only the core attention wrapped (Megatron-LM's default selective recompute, ``core_attn``).

A TorchDispatchMode (CommLog) records each c10d collective in the forward and in the backward; a
checkpoint replays its forward inside the backward, so a replayed g shows up there.
Counts only, one thread per rank, fixed seeds.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "tensor-parallel"

S, B, H, HEADS, FFN = 8, 2, 16, 4, 64  # (sequence, batch, hidden) as in Megatron-LM, fp32
DH = H // HEADS
MODES = ("none", "full", "full_nonreentrant", "selective")


class _Copy(torch.autograd.Function):
    """f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g)
        return g


class _Reduce(torch.autograd.Function):
    """g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def _core(qkv, heads):
    """Causal attention of this rank's heads from their fused q, k, v: no communication."""
    s, b, _ = qkv.shape

    def split(t):
        return t.reshape(s, b, heads, DH).permute(1, 2, 0, 3)

    q, k, v = qkv.chunk(3, dim=-1)
    o = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    return o.permute(2, 0, 1, 3).reshape(s, b, heads * DH)


def _block(x, w, selective=False):
    """f before each column-parallel projection, g after each row-parallel one; ``selective`` wraps only
    the core attention in a checkpoint."""
    heads = HEADS // WORLD
    qkv = _Copy.apply(F.layer_norm(x, (H,))) @ w["wqkv"].t()
    a = checkpoint(_core, qkv, heads, use_reentrant=False) if selective else _core(qkv, heads)
    h1 = x + _Reduce.apply(a @ w["wo"].t())
    m = F.gelu(_Copy.apply(F.layer_norm(h1, (H,))) @ w["w1"].t()) @ w["w2"].t()
    return h1 + _Reduce.apply(m)


def rank_recompute(rank, store, outdir):
    init_rank(rank, store)
    g = torch.Generator().manual_seed(0)
    hd, fd = H // WORLD, FFN // WORLD  # this rank's share of the heads' width and of the MLP width
    w = {"wqkv": torch.randn(3 * hd, H, generator=g), "wo": torch.randn(H, hd, generator=g),
         "w1": torch.randn(fd, H, generator=g), "w2": torch.randn(H, fd, generator=g)}
    w = {k: (v * 0.3).requires_grad_() for k, v in w.items()}
    x0 = torch.randn(S, B, H, generator=g)
    out, grads = {}, {}
    for mode in MODES:
        x = x0.clone().requires_grad_()
        fwd, bwd = CommLog(), CommLog()
        with fwd:
            if mode.startswith("full"):
                y = checkpoint(_block, x, w, use_reentrant=mode == "full")
            else:
                y = _block(x, w, selective=mode == "selective")
        with bwd:
            y.square().sum().backward()
        out[mode] = {"fwd": sum(op == "allreduce_" for op, _ in fwd.ops),
                     "bwd": sum(op == "allreduce_" for op, _ in bwd.ops),
                     "other": sorted({op for op, _ in fwd.ops + bwd.ops} - {"allreduce_"})}
        grads[mode] = x.grad
    out["grad_diff"] = max((grads[m] - grads["none"]).abs().max().item() for m in MODES[1:])
    finish_rank(rank, outdir, out)


@claim("tp.recompute-collectives", question=Q, timeout=150, min_torch="2.1",
       statement="同一个块（注意力 + MLP，两个 g、两个 f）在两个 gloo 进程上数 all-reduce：不重计算时前向 {none.fwd} 次、"
                 "反向 {none.bwd} 次；整块包进 checkpoint、反向时把前向完整重放一遍（use_reentrant=True，Megatron 的全量"
                 "重计算也是整段重跑）时前向 {full.fwd} 次、反向 {full.bwd} 次，两个 g 又做了一遍。PyTorch 默认的非重入 "
                 "checkpoint 重放到需要的张量都算出来就停，最后一个 g 之后再没有反向要用的张量，反向是 {full_nonreentrant.bwd} 次。"
                 "只把 core attention 包进去（Megatron 默认的选择性重计算）时反向仍是 {selective.bwd} 次。"
                 "几种做法的输入梯度一致（最大差 {grad_diff:.1e}）。",
       expect={"none": {"fwd": 2, "bwd": 2, "other": []}, "full": {"fwd": 2, "bwd": 4, "other": []},
               "full_nonreentrant": {"fwd": 2, "bwd": 3, "other": []},
               "selective": {"fwd": 2, "bwd": 2, "other": []}, "grad_diff": {"<": 1e-4}})
def _(ctx):
    """范围：一个 pre-LN 块、TP 2 路、gloo"""
    r0, r1 = run_ranks(rank_recompute, ctx)
    assert all(r0[m] == r1[m] for m in MODES), (r0, r1)
    return {m: r0[m] for m in MODES} | {"grad_diff": max(r0["grad_diff"], r1["grad_diff"])}
