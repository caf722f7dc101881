"""Cases for softmax-backward-torch: named edge cases, then random shapes drawn from the seed; y is a softmax."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    def softmax(logits):
        return torch.softmax(logits, dim=1)

    masked = randn(3, 16)
    masked[:, 5:] = float("-inf")
    out = [
        ("单个元素（y = 1）", (randn(1, 1), softmax(randn(1, 1)))),
        ("单列（每行 y = 1）", (randn(5, 1), softmax(randn(5, 1)))),
        ("一行全相等（y 均匀）", (randn(2, 7), softmax(torch.zeros(2, 7)))),
        ("饱和（接近 one-hot）", (randn(4, 32), softmax(randn(4, 32, scale=30.0)))),
        ("带被遮住的位置（y = 0）", (randn(3, 16), softmax(masked))),
        ("方阵 8×8", (randn(8, 8), softmax(randn(8, 8, scale=3.0)))),
        ("长行 4096", (randn(2, 4096), softmax(randn(2, 4096, scale=5.0)))),
        ("非连续输入（转置视图）", (randn(16, 5).t(), torch.softmax(randn(16, 5, scale=2.0), dim=0).t())),
    ]
    for k in range(4):
        rows = int(torch.randint(1, 20, (1,), generator=g))
        cols = int(torch.randint(2, 600, (1,), generator=g))
        out.append((f"随机 #{k} ({rows}, {cols})", (randn(rows, cols, scale=3.0), softmax(randn(rows, cols, scale=4.0)))))
    return out
