"""Cases for bn-backward-torch: named edge cases, then random batches drawn from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    c = 6
    gamma = randn(c)
    flat = randn(8, c)
    flat[:, 2] = 0.75  # one channel with variance 0: only eps keeps 1/sqrt(var + eps) finite
    signed = randn(c)
    signed[0], signed[1] = 0.0, -2.0
    out = [
        ("某通道全相同（方差为 0，eps 决定结果）", (randn(8, c), flat, gamma, 1e-5)),
        ("最小批 N=2", (randn(2, c), randn(2, c), gamma, 1e-5)),
        ("大 eps", (randn(16, c), randn(16, c), gamma, 0.5)),
        ("均值远大于标准差（偏移 100）", (randn(32, c), randn(32, c) + 100.0, gamma, 1e-5)),
        ("gamma 有 0 和负数", (randn(16, c), randn(16, c, scale=3.0), signed, 1e-5)),
        ("单通道 C=1", (randn(64, 1), randn(64, 1), randn(1), 1e-5)),
        ("大批 N=1024", (randn(1024, c), randn(1024, c, scale=2.0), gamma, 1e-5)),
        ("非连续输入（转置视图）", (randn(c, 12).t(), randn(c, 12).t(), gamma, 1e-5)),
        ("N=1（方差为 0）", (randn(1, c), randn(1, c), gamma, 1e-5)),
    ]
    for k in range(4):
        n = int(torch.randint(2, 200, (1,), generator=g))
        ch = int(torch.randint(1, 33, (1,), generator=g))
        out.append((f"随机 #{k} ({n}, {ch})", (randn(n, ch), randn(n, ch, scale=4.0) + randn(ch), randn(ch), 1e-5)))
    return out
