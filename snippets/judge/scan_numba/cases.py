"""Cases for scan-numba: named edge cases around the block size (64 in the solutions), then random lengths drawn
from the seed (small: the simulator runs every CUDA thread as a Python thread)."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(n):
        return torch.randn(n, generator=g)

    out = [
        ("一个元素", (randn(1),)),
        ("正好一块 64", (randn(64),)),
        ("多出一个元素 65", (randn(65),)),
        ("全是 1，长度 200", (torch.ones(200),)),
        ("长度 1000", (randn(1000),)),
        ("长度 1025（上限，超过 1024：一个块装不下）", (randn(1025),)),
    ]
    for k in range(2):
        n = int(torch.randint(2, 400, (1,), generator=g))
        out.append((f"随机 #{k} 长度 {n}", (randn(n),)))
    return out
