"""Cases for autograd-function-torch: named edge cases, then random shapes drawn from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    extremes = torch.tensor([-1000.0, -100.0, -30.0, 0.0, 30.0, 100.0, 1000.0])
    out = [
        ("x = 0（σ = 1/2）", (torch.zeros(3), torch.tensor([1.5, -2.0, 0.25]))),
        ("一维 16 个元素", (randn(16, scale=3.0), randn(16))),
        ("dy 全为 1", (randn(4, 9, scale=2.0), torch.ones(4, 9))),
        ("很大的正数和负数（exp 会溢出）", (extremes, randn(7))),
        ("导数过零点附近（x ≈ -1.28）", (torch.linspace(-1.4, -1.1, 13), randn(13))),
        ("标量（0 维）", (torch.tensor(0.7), torch.tensor(-1.3))),
        ("三维 (2, 3, 5)", (randn(2, 3, 5, scale=4.0), randn(2, 3, 5))),
        ("非连续输入（转置视图）", (randn(6, 4).t(), randn(6, 4).t())),
    ]
    for k in range(4):
        rows = int(torch.randint(1, 16, (1,), generator=g))
        cols = int(torch.randint(1, 300, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {cols})", (randn(rows, cols, scale=4.0), randn(rows, cols))))
    return out
