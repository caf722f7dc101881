"""Online softmax: one pass for (max, sum), merging partial states, and attention in one pass."""

import torch

from verify.claim import claim

Q = "softmax-online"
NEG_INF = float("-inf")


def online_state(x, block):
    """One pass over the last dim in blocks: running max ``m`` and sum ``l`` of exp(x - m)."""
    m = torch.full(x.shape[:-1], NEG_INF, dtype=x.dtype, device=x.device)
    l = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for j in range(0, x.shape[-1], block):
        b = x[..., j:j + block]
        m_new = torch.maximum(m, b.amax(-1))
        # the old sum was taken against the old max: rescale it to the new one
        l = l * torch.exp(m - m_new) + torch.exp(b - m_new[..., None]).sum(-1)
        m = m_new
    return m, l


def online_state_no_rescale(x, block):
    """The classic bug: the old sum is kept as it is when the max grows."""
    m = torch.full(x.shape[:-1], NEG_INF, dtype=x.dtype, device=x.device)
    l = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for j in range(0, x.shape[-1], block):
        b = x[..., j:j + block]
        m = torch.maximum(m, b.amax(-1))
        l = l + torch.exp(b - m[..., None]).sum(-1)
    return m, l


def merge(a, b):
    """Combine the states of two disjoint parts of a row into the state of both."""
    (ma, la), (mb, lb) = a, b
    m = torch.maximum(ma, mb)
    return m, la * torch.exp(ma - m) + lb * torch.exp(mb - m)


def online_softmax(x, block):
    m, l = online_state(x, block)
    return torch.exp(x - m[..., None]) / l[..., None]


class Counted:
    """A row read block by block, counting how many elements were read in all."""

    def __init__(self, x, block):
        self.x, self.block, self.reads = x, block, 0

    def blocks(self):
        for j in range(0, self.x.shape[-1], self.block):
            b = self.x[..., j:j + self.block]
            self.reads += b.numel()
            yield j, b


def _rows():
    g = torch.Generator().manual_seed(0)
    return torch.randn(32, 4096, generator=g) * 3


@claim("online-softmax.one-pass-state", kind="measured", question=Q,
       statement="online softmax 只读一遍输入就得到两个数：按 {=128} 个一块扫过长 {=4096} 的行，维护当前最大值 `m` "
                 "和以 `m` 为基准的和 `l`，每遇到更大的最大值就把旧的 `l` 乘上 `exp(m_old - m_new)`。扫完后 `m` "
                 "与 `x.max()` {m_exact:?完全相等|并不相等}，`m + log(l)` 与 `torch.logsumexp` 最多差 {lse_diff:.1e}，"
                 "再用 `exp(x - m) / l` 写出的概率与 `torch.softmax` 最多差 {prob_diff:.1e}。",
       expect={"m_exact": True, "lse_diff": {"<": 1e-5}, "prob_diff": {"<": 1e-6}})
def _(ctx):
    x = _rows().to(ctx.device)
    block = 128
    m, l = online_state(x, block)
    return {"block": block, "n": x.shape[-1], "m_exact": torch.equal(m, x.amax(-1)),
            "lse_diff": (m + l.log() - torch.logsumexp(x, -1)).abs().max().item(),
            "prob_diff": (online_softmax(x, block) - torch.softmax(x, -1)).abs().max().item()}


@claim("online-softmax.block-size", kind="measured", question=Q,
       statement="块多大都不影响结果：块大小取 {=1、7、128、4096} 时，`m` {m_identical:?全都相同|并不都相同}，`l` 之间的最大相对差是 "
                 "{l_rel_diff:.1e}，只差浮点舍入；块大小为 1 就是逐元素的流式写法。",
       expect={"m_identical": True, "l_rel_diff": {"<": 1e-5}})
def _(ctx):
    x = _rows()[:4].to(ctx.device)
    blocks = [1, 7, 128, 4096]
    states = [online_state(x, b) for b in blocks]
    ls = torch.stack([l for _, l in states])
    return {"blocks": blocks, "m_identical": all(torch.equal(states[0][0], m) for m, _ in states),
            "l_rel_diff": ((ls - ls[-1]).abs() / ls[-1]).max().item()}


@claim("online-softmax.merge", kind="measured", question=Q,
       statement="两段各自算出的 `(m, l)` 可以合并：`m = max(m1, m2)`，`l = l1·exp(m1 - m) + l2·exp(m2 - m)`。"
                 "把一行切成 {=8} 段分别求状态，顺序合并、两两树形合并、倒序合并得到的 `m` "
                 "{m_same:?都和整行一次算的相同|与整行一次算的不同}，`l` 与整行的最大相对差是 {l_rel_diff:.1e}；这就是 split-K、Flash-Decoding "
                 "能把一行的 KV 分给多个线程块并行、最后再归并的依据。",
       expect={"m_same": True, "l_rel_diff": {"<": 1e-5}})
def _(ctx):
    x = _rows().to(ctx.device)
    parts = 8
    whole = online_state(x, 128)
    states = [online_state(p, 128) for p in x.chunk(parts, -1)]
    sequential = states[0]
    for s in states[1:]:
        sequential = merge(sequential, s)
    tree = states
    while len(tree) > 1:
        tree = [merge(tree[i], tree[i + 1]) for i in range(0, len(tree), 2)]
    reverse = states[-1]
    for s in reversed(states[:-1]):
        reverse = merge(s, reverse)
    merged = {"sequential": sequential, "tree": tree[0], "reverse": reverse}
    return {"parts": parts, "m_same": all(torch.equal(m, whole[0]) for m, _ in merged.values()),
            "l_rel_diff": max(((l - whole[1]).abs() / whole[1]).max().item() for _, l in merged.values())}


@claim("online-softmax.missing-rescale", question=Q,
       statement="漏掉 `exp(m_old - m_new)` 这个修正因子是手写时最常见的错，而且很难测出来：最大值落在第一块时，"
                 "后面的块不会改变 `m`，漏了修正的 `l` 与正确的 `l` {same_when_max_first:?完全相等|并不相等}；把同一行倒过来、"
                 "让最大值出现在最后一块，漏了修正的 `l` 是正确值的 {l_ratio:x}，最大那一项的概率从 {p_good:.3f} "
                 "变成 {p_bad:.3f}。",
       expect={"same_when_max_first": True, "l_ratio": {">": 2}, "p_good": {">": 0.99}, "p_bad": {"<": 0.5}})
def _(ctx):
    first = torch.tensor([[20.0, 1.0, 0.5, 2.0, 1.0, 1.5, 3.0, 0.0]], device=ctx.device)
    last = first.flip(-1)  # the same values, the max now in the last block
    _, good_first = online_state(first, 2)
    _, bad_first = online_state_no_rescale(first, 2)
    m, good = online_state(last, 2)
    _, bad = online_state_no_rescale(last, 2)
    top = last[0].argmax()
    return {"same_when_max_first": torch.equal(good_first, bad_first), "l_ratio": (bad / good).item(),
            "p_good": (torch.exp(last[0, top] - m) / good).item(), "p_bad": (torch.exp(last[0, top] - m) / bad).item()}


@claim("online-softmax.passes", question=Q,
       statement="数一数读了几遍输入（按块读，每块计数）：safe softmax 先求最大值、再求和、再写结果，读 {passes.safe} 遍；"
                 "online softmax 把前两遍合成一遍，但要写出归一化的概率还得再读一遍，共 {passes.online} 遍；"
                 "只有在 attention 里把概率直接乘上 V 累加（输出也随最大值修正），才是 {passes.online_times_v} 遍，"
                 "最后对累加结果除一次 `l`。三种写法的结果{same:?一致|不一致}。",
       expect={"passes": {"safe": 3, "online": 2, "online_times_v": 1}, "same": True})
def _(ctx):
    g = torch.Generator().manual_seed(1)
    s = torch.randn(1024, generator=g).to(ctx.device) * 3  # scores of one query row
    v = torch.randn(1024, 64, generator=g).to(ctx.device)
    block = 128

    rd = Counted(s, block)  # safe: three passes
    m = max(b.max() for _, b in rd.blocks())
    l = sum(torch.exp(b - m).sum() for _, b in rd.blocks())
    p_safe = torch.cat([torch.exp(b - m) / l for _, b in rd.blocks()])
    safe_passes = rd.reads // s.numel()

    rd = Counted(s, block)  # online: (m, l) in one pass, then the normalised output
    m, l = torch.tensor(NEG_INF, device=s.device), torch.tensor(0.0, device=s.device)
    for _, b in rd.blocks():
        m_new = torch.maximum(m, b.max())
        l = l * torch.exp(m - m_new) + torch.exp(b - m_new).sum()
        m = m_new
    p_online = torch.cat([torch.exp(b - m) / l for _, b in rd.blocks()])
    online_passes = rd.reads // s.numel()

    rd = Counted(s, block)  # online softmax times V: one pass, the output rescaled with the max
    m, l = torch.tensor(NEG_INF, device=s.device), torch.tensor(0.0, device=s.device)
    acc = torch.zeros(64, device=s.device)
    for j, b in rd.blocks():
        m_new = torch.maximum(m, b.max())
        scale = torch.exp(m - m_new)
        p = torch.exp(b - m_new)
        l = l * scale + p.sum()
        acc = acc * scale + p @ v[j:j + block]
        m = m_new
    o_online = acc / l
    fused_passes = rd.reads // s.numel()

    reference = torch.softmax(s, -1)
    same = (torch.allclose(p_safe, reference, atol=1e-7) and torch.allclose(p_online, reference, atol=1e-7)
            and torch.allclose(o_online, reference @ v, atol=1e-5))
    return {"passes": {"safe": safe_passes, "online": online_passes, "online_times_v": fused_passes},
            "same": same, "max_err_output": (o_online - reference @ v).abs().max().item()}
