"""Cases for rmsnorm-torch: named edge cases, then random shapes drawn from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    d = 64
    w = randn(d)
    out = [
        ("一维输入 d=8", (randn(8), randn(8), 1e-6)),
        ("一行全零（eps 决定结果）", (torch.zeros(2, d), w, 1e-5)),
        ("很小的值（eps 起作用）", (randn(3, d, scale=1e-4), w, 1e-6)),
        ("大 eps", (randn(4, d), w, 1.0)),
        ("很大的值", (randn(2, d, scale=1e4), w, 1e-6)),
        ("三维 (2, 3, 64)", (randn(2, 3, d), w, 1e-6)),
        ("长行 d=4096", (randn(2, 4096), randn(4096), 1e-6)),
        ("非连续输入（转置视图）", (randn(d, 5).t(), w, 1e-6)),
    ]
    for k in range(4):
        rows = int(torch.randint(1, 9, (1,), generator=g))
        dim = int(torch.randint(1, 300, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {dim})", (randn(rows, dim, scale=3.0), randn(dim), 1e-6)))
    return out
