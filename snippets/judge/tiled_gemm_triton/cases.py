"""Cases for tiled-gemm-triton: sizes on and off the 16-element tile, a persistent grid with more tiles than
programs, transposed views, then random sizes from the seed (each at most 48, so the interpreter stays quick)."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    out = [
        ("1×1 乘 1×1", (randn(1, 1), randn(1, 1))),
        ("方阵 32×32（整块）", (randn(32, 32), randn(32, 32))),
        ("K=20 不是块的倍数", (randn(16, 20), randn(20, 16))),
        ("M、N 都不是块的倍数 (40×24)·(24×40)", (randn(40, 24), randn(24, 40))),
        ("瘦长 (48×3)·(3×5)", (randn(48, 3), randn(3, 5))),
        ("转置视图输入", (randn(24, 33).t(), randn(17, 24).t())),
    ]
    for k in range(3):
        m, kk, n = (int(v) for v in torch.randint(1, 49, (3,), generator=g))
        out.append((f"随机 #{k} ({m}×{kk})·({kk}×{n})", (randn(m, kk), randn(kk, n))))
    return out
