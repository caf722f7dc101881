"""Cases for flash-attention-triton: fewer keys than a block, several key blocks, a head size not a power of
two, more keys than queries, a batch, scores large enough to overflow exp, then random shapes from the seed."""

import torch


def cases(seed):
    g = torch.Generator().manual_seed(seed)

    def qkv(*shape, n_k=None, scale=1.0):
        kv = (*shape[:-2], n_k or shape[-2], shape[-1])
        return (torch.randn(*shape, generator=g) * scale, torch.randn(*kv, generator=g) * scale,
                torch.randn(*kv, generator=g))

    out = [
        ("5 个位置（不满一块）", qkv(5, 8)),
        ("40 个位置，3 个键块", qkv(40, 8, scale=2.0)),
        ("头维 12（不是 2 的幂）", qkv(20, 12, scale=2.0)),
        ("键比查询多 (8 个查询，50 个键)", qkv(8, 16, n_k=50, scale=2.0)),
        ("batch×heads=3", qkv(3, 20, 16)),
        ("得分很大（exp 会溢出）", qkv(24, 16, scale=8.0)),
    ]
    for k in range(2):
        s, d = int(torch.randint(1, 49, (1,), generator=g)), int(torch.randint(1, 33, (1,), generator=g))
        out.append((f"随机 #{k} ({s}, {d})", qkv(2, s, d, scale=2.0)))
    return out
