"""Cases for transpose-numba: named edge cases, then random shapes drawn from the seed (small: the simulator runs
every CUDA thread of a 32×8 block as a Python thread)."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    out = [
        ("一个元素 (1, 1)", (randn(1, 1),)),
        ("一行 (1, 40)", (randn(1, 40),)),
        ("一列 (40, 1)", (randn(40, 1),)),
        ("正好一块 (32, 32)", (randn(32, 32),)),
        ("都不是 32 的倍数 (33, 45)", (randn(33, 45),)),
    ]
    for k in range(2):
        rows = int(torch.randint(1, 41, (1,), generator=g))
        cols = int(torch.randint(1, 41, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {cols})", (randn(rows, cols),)))
    return out
