"""Cases for softmax-torch: named edge cases, then random shapes drawn from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    masked = randn(3, 16)
    masked[:, 5:] = float("-inf")
    out = [
        ("单个元素", (randn(1, 1),)),
        ("一行全相等", (torch.full((2, 7), 3.0),)),
        ("大输入（会溢出）", (randn(4, 32) + 1000.0,)),
        ("每行量级不同", (torch.stack([randn(32), randn(32) - 200.0, randn(32) + 80.0]),)),
        ("带 -inf（被遮住的位置）", (masked,)),
        ("长行 4096", (randn(2, 4096, scale=5.0),)),
        ("方阵 8×8", (randn(8, 8, scale=4.0),)),
        ("非连续输入（转置视图）", (randn(16, 5).t(),)),
    ]
    for k in range(4):
        rows = int(torch.randint(1, 20, (1,), generator=g))
        cols = int(torch.randint(1, 600, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {cols})", (randn(rows, cols, scale=10.0),)))
    return out
