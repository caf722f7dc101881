"""Online softmax over key blocks, but the accumulator is not rescaled when the running max grows."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _flash_forward(q_ptr, k_ptr, v_ptr, o_ptr, n_q, n_k, dim, scale,
                   sqb, sqs, skb, sks, svb, svs, sob, sos,
                   BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(1)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + b * sqb + rm[:, None] * sqs + rd[None, :], mask=(rm[:, None] < n_q) & (rd[None, :] < dim),
                other=0.0)
    m = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, n_k, BN):
        rn = start + tl.arange(0, BN)
        kv_mask = (rn[:, None] < n_k) & (rd[None, :] < dim)
        k = tl.load(k_ptr + b * skb + rn[:, None] * sks + rd[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + b * svb + rn[:, None] * svs + rd[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(rn[None, :] < n_k, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc + tl.dot(p, v)
        m = m_new
    tl.store(o_ptr + b * sob + rm[:, None] * sos + rd[None, :], acc / l_i[:, None],
             mask=(rm[:, None] < n_q) & (rd[None, :] < dim))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    batched = q.dim() == 3
    n_q, dim, n_k = q.shape[-2], q.shape[-1], k.shape[-2]
    o = torch.empty(q.shape, dtype=torch.float32)
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    batch = q.shape[0] if batched else 1

    def sb(t):
        return t.stride(0) if batched else 0

    _flash_forward[(triton.cdiv(n_q, 16), batch)](
        q, k, v, o, n_q, n_k, dim, 1.0 / math.sqrt(dim), sb(q), q.stride(-2), sb(k), k.stride(-2), sb(v), v.stride(-2),
        sb(o), o.stride(-2), BM=16, BN=16, D=max(16, triton.next_power_of_2(dim)))
    return o
