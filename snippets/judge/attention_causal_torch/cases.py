"""Cases for attention-causal-torch: named edge cases, then random shapes drawn from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    def qkv(b, h, s, d, scale=1.0):
        return randn(b, h, s, d, scale=scale), randn(b, h, s, d, scale=scale), randn(b, h, s, d)

    same = randn(1, 2, 6, 8)
    out = [
        ("一个位置 seq=1", qkv(1, 1, 1, 8)),
        ("两批两头 (2, 2, 8, 16)", qkv(2, 2, 8, 16)),
        ("q 和 k 相同", (same, same.clone(), randn(1, 2, 6, 8))),
        ("得分大（要先减最大值）", qkv(1, 2, 12, 16, scale=3.0)),
        ("dim=1", qkv(1, 1, 5, 1)),
        ("长序列 (1, 1, 128, 64)", qkv(1, 1, 128, 64)),
        ("非连续输入（(b, s, h, d) 转置成 (b, h, s, d)）",
         tuple(randn(2, 7, 3, 8).transpose(1, 2) for _ in range(3))),
    ]
    for n in range(4):
        b, h = (int(torch.randint(1, 3, (1,), generator=g)), int(torch.randint(1, 5, (1,), generator=g)))
        s, d = (int(torch.randint(1, 40, (1,), generator=g)), int(torch.randint(1, 65, (1,), generator=g)))
        out.append((f"随机 #{n} ({b}, {h}, {s}, {d})", qkv(b, h, s, d)))
    return out
