"""Reference for flash-attention-triton, in float64 (the judge passes float64 copies of the inputs)."""

import math


def reference(q, k, v):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    p = (s - s.max(dim=-1, keepdim=True).values).exp()
    return (p / p.sum(dim=-1, keepdim=True)) @ v
