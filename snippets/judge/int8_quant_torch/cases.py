"""Cases for int8-quant-torch: named edge cases, then random weights drawn from the seed.

Random rows are built as (k + u) * s with integer k in [-126, 126], u in [-0.45, 0.45] and one element
±127 * s, so that w / scale sits at least 0.05 from a rounding tie whatever order a solution computes it in.
"""

import torch


def _rows(g, rows, cols, log_scale=0.0):
    s = torch.exp(torch.randn(rows, 1, generator=g) + log_scale)
    k = torch.randint(-126, 127, (rows, cols), generator=g).float()
    u = torch.rand(rows, cols, generator=g) * 0.9 - 0.45
    w = (k + u) * s
    col = torch.randint(0, cols, (rows,), generator=g)
    sign = torch.where(torch.rand(rows, generator=g) < 0.5, -1.0, 1.0)
    w[torch.arange(rows), col] = sign * 127 * s[:, 0]
    return w


def cases(seed):
    g = torch.Generator().manual_seed(seed)
    zero = _rows(g, 4, 16)
    zero[2] = 0.0
    ties = torch.tensor([[127.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.25, -126.5, 64.75],
                         [63.5, 0.25, 0.75, -0.25, 1.25, -63.5, 10.0, 0.0, 31.75, -2.0]])  # scale 1 and 0.5
    outlier = _rows(g, 5, 32)
    outlier[3] *= 100.0
    out = [
        ("一般的 (4, 16)", (_rows(g, 4, 16),)),
        ("一行全零（该行 scale 取 1）", (zero,)),
        ("恰好在 .5 上（scale 是 2 的幂，四舍六入五成双）", (ties,)),
        ("一行的离群通道（大 100 倍）", (outlier,)),
        ("行的最大绝对值来自负数", (-_rows(g, 3, 8).abs(),)),
        ("in_features=1", (_rows(g, 6, 1),)),
        ("很小的权重（约 1e-20）", (_rows(g, 3, 24, log_scale=-46.0),)),
        ("很大的权重（约 1e20）", (_rows(g, 3, 24, log_scale=46.0),)),
        ("非连续输入（列优先存放的视图）", (_rows(g, 6, 20).t().contiguous().t(),)),
    ]
    for n in range(4):
        rows = int(torch.randint(1, 17, (1,), generator=g))
        cols = int(torch.randint(1, 200, (1,), generator=g))
        out.append((f"随机 #{n} ({rows}, {cols})", (_rows(g, rows, cols),)))
    return out
