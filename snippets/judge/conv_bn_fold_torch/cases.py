"""Cases for conv-bn-fold-torch: named edge cases, then random shapes drawn from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    def layer(shape, bias=True, eps=1e-5, var=None):
        cout = shape[0]
        gamma, beta, mean = randn(cout) + 1.0, randn(cout), randn(cout)
        var = torch.rand(cout, generator=g) * 2.0 + 0.1 if var is None else var
        return (randn(*shape), randn(cout) if bias else None, mean, var, gamma, beta, eps)

    out = [
        ("3×3 卷积，输入输出通道都是 4，eps=0.1", layer((4, 4, 3, 3), eps=0.1)),
        ("没有 bias（conv_b 为 None）", layer((6, 3, 3, 3), bias=False)),
        ("方差为 0（只剩 eps）", layer((5, 2, 3, 3), var=torch.zeros(5))),
        ("方差很小（eps 起作用）", layer((4, 3, 1, 1), var=torch.full((4,), 1e-5))),
        ("1×1 卷积 (8, 16, 1, 1)", layer((8, 16, 1, 1))),
        ("depthwise 卷积 (6, 1, 3, 3)", layer((6, 1, 3, 3))),
        ("Conv1d 权重 (4, 3, 5)", layer((4, 3, 5))),
        ("非连续权重（转置视图）", (randn(3, 4, 3, 3).transpose(0, 1),) + layer((4, 3, 3, 3))[1:]),
    ]
    for n in range(4):
        cout, cin = int(torch.randint(1, 33, (1,), generator=g)), int(torch.randint(1, 33, (1,), generator=g))
        kh = int(torch.randint(1, 6, (1,), generator=g))
        out.append((f"随机 #{n} ({cout}, {cin}, {kh}, {kh})", layer((cout, cin, kh, kh))))
    return out
