"""Cases for row-sum-numba: named edge cases, then random shapes drawn from the seed (small: the simulator runs
every CUDA thread as a Python thread)."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    out = [
        ("一个元素 (1, 1)", (randn(1, 1),)),
        ("列数 7：不到一个块，也不是 2 的幂", (randn(3, 7),)),
        ("列数正好是块大小 64", (randn(2, 64),)),
        ("列数 100：不是块大小的倍数", (randn(2, 100),)),
        ("全是 1 (2, 130)", (torch.ones(2, 130),)),
        ("长行 1000", (randn(2, 1000),)),
    ]
    for k in range(3):
        rows = int(torch.randint(1, 5, (1,), generator=g))
        cols = int(torch.randint(1, 300, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {cols})", (randn(rows, cols),)))
    return out
