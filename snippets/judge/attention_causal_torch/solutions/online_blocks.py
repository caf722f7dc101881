import math

import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Key blocks one at a time with a running max, sum and output, as FlashAttention does (no seq x seq matrix)."""
    seq, dim, block = q.shape[-2], q.shape[-1], 16
    rows = torch.arange(seq).unsqueeze(1)
    m = torch.full(q.shape[:-1] + (1,), float("-inf"))
    s = torch.zeros(q.shape[:-1] + (1,))
    acc = torch.zeros(q.shape)
    for start in range(0, seq, block):
        kb, vb = k[..., start:start + block, :], v[..., start:start + block, :]
        scores = q @ kb.transpose(-2, -1) * (1.0 / math.sqrt(dim))
        cols = torch.arange(start, start + kb.shape[-2]).unsqueeze(0)
        scores = scores.masked_fill(cols > rows, float("-inf"))
        m_new = torch.maximum(m, scores.max(dim=-1, keepdim=True).values)
        p = torch.exp(scores - m_new)  # row i always sees key 0, so m_new is finite from the first block on
        alpha = torch.exp(m - m_new)
        s = s * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ vb
        m = m_new
    return acc / s
