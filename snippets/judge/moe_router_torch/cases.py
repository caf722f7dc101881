"""Cases for moe-router-torch: named edge cases, then random shapes drawn from the seed.

Every row's logits differ pairwise by at least 1e-3 (a row that does not is drawn again), so the top k and
their order are one answer.
"""

import torch


def _logits(g, tokens, experts, scale=1.0, shift=0.0):
    rows = []
    while len(rows) < tokens:
        row = torch.randn(experts, generator=g) * scale
        if experts < 2 or bool((row.sort().values.diff() > 1e-3).all()):
            rows.append(row + shift)
    return torch.stack(rows)


def cases(seed):
    g = torch.Generator().manual_seed(seed)
    out = [
        ("一般的 8 个专家取 2", (_logits(g, 4, 8), 2)),
        ("k=1（权重恒为 1）", (_logits(g, 5, 8), 1)),
        ("一个 token", (_logits(g, 1, 6), 3)),
        ("大 logits（+1000，直接 exp 会溢出）", (_logits(g, 3, 8, shift=1000.0), 2)),
        ("得分很分散（×20）", (_logits(g, 4, 16, scale=20.0), 4)),
        ("64 个专家取 8", (_logits(g, 32, 64), 8)),
        ("非连续输入（转置视图）", (_logits(g, 8, 5).t().contiguous().t(), 2)),
        ("k 等于专家数（重归一化后就是 softmax 排序）", (_logits(g, 3, 4), 4)),
    ]
    for n in range(4):
        tokens = int(torch.randint(1, 20, (1,), generator=g))
        experts = int(torch.randint(2, 33, (1,), generator=g))
        k = int(torch.randint(1, min(experts, 8) + 1, (1,), generator=g))
        out.append((f"随机 #{n} ({tokens}, {experts}) k={k}", (_logits(g, tokens, experts, scale=2.0), k)))
    return out
