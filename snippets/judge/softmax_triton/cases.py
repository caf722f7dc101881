"""Cases for softmax-triton: the edge cases of a blocked kernel (column counts around a power of two, one
column, rows longer than a block, a transposed view), large and masked inputs, then random shapes from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(rows, cols, scale=1.0, shift=0.0):
        return torch.randn(rows, cols, generator=g) * scale + shift

    masked = randn(3, 40)
    masked[:, 9:] = float("-inf")
    out = [
        ("一列", (randn(3, 1),)),
        ("7 列（不是 2 的幂）", (torch.full((2, 7), 3.0),)),
        ("大输入（会溢出）", (randn(4, 32, shift=1000.0),)),
        ("每行量级不同", (torch.cat([randn(1, 24), randn(1, 24, shift=-200.0), randn(1, 24, shift=80.0)]),)),
        ("带 -inf（被遮住的位置）", (masked,)),
    ]
    out += [(f"{n} 列（2 的幂附近）", (randn(3, n, scale=4.0),)) for n in (127, 128, 129)]
    out += [
        ("长行 4096", (randn(2, 4096, scale=5.0),)),
        ("非连续输入（转置视图）", (randn(16, 5).t(),)),
    ]
    for k in range(3):
        rows = int(torch.randint(1, 12, (1,), generator=g))
        cols = int(torch.randint(1, 600, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {cols})", (randn(rows, cols, scale=10.0),)))
    return out
