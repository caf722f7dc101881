"""Cases for layernorm-triton: a row of a power of two and one not, small values where eps matters, a constant
row, a transposed view, a mean far above the spread, then random shapes from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    def params(n):
        return randn(n, scale=0.5) + 1.0, randn(n, scale=0.1)

    out = [
        ("n=8（2 的幂）", (randn(3, 8), *params(8), 1e-6)),
        ("n=7（不是 2 的幂）", (randn(3, 7), *params(7), 1e-6)),
        ("很小的值（eps 起作用）", (randn(2, 32, scale=1e-3), *params(32), 1e-5)),
        ("一行全相等（方差为 0）", (torch.full((2, 12), 2.5), *params(12), 1e-5)),
        ("大 eps", (randn(4, 20), *params(20), 1.0)),
        ("长行 n=1000", (randn(2, 1000, scale=3.0), *params(1000), 1e-5)),
        ("非连续输入（转置视图）", (randn(24, 5).t(), *params(24), 1e-5)),
        ("均值远大于标准差（偏移 100）", (randn(4, 64) + 100.0, *params(64), 1e-5)),
    ]
    for k in range(3):
        rows = int(torch.randint(1, 9, (1,), generator=g))
        n = int(torch.randint(2, 300, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {n})", (randn(rows, n, scale=2.0), *params(n), 1e-5)))
    return out
