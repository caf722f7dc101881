"""A small top-k MoE layer on the CPU: dispatch against a per-token loop, how the k gate weights are
formed (Mixtral renormalises, Switch does not), the Switch auxiliary load-balancing loss trained for a
few steps, dropped tokens at a capacity factor, and DeepSeek-V3's bias-only (aux-loss-free) balancing.

Everything is a count or an exact comparison: fixed seeds, one thread, no timings.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F
from torch import nn

from verify.claim import claim

Q = "moe-expert-parallel"

D, FFN, E, K, T = 16, 32, 8, 2, 512  # width, expert MLP width, experts, top-k, tokens per batch
ALPHA = 0.01  # weight of the auxiliary loss
STEPS = 60  # training steps of the router experiment
GAMMA, BIAS_STEPS = 0.005, 200  # bias step and steps of the aux-loss-free experiment
FACTORS = (1.0, 1.25, 2.0, 4.0)  # capacity factors
_KEY = {1.0: "x1", 1.25: "x1_25", 2.0: "x2", 4.0: "x4"}  # observed-value keys (a dot would walk into a dict)


class Expert(nn.Module):
    """A SwiGLU MLP, the shape of a Mixtral / DeepSeek expert."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D, FFN, bias=False)
        self.w3 = nn.Linear(D, FFN, bias=False)
        self.w2 = nn.Linear(FFN, D, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    """Router (a linear layer), softmax over the experts, top-k, then (Mixtral) renormalise the k weights."""

    def __init__(self, renormalize=True):
        super().__init__()
        self.gate = nn.Linear(D, E, bias=False)
        self.experts = nn.ModuleList(Expert() for _ in range(E))
        self.renormalize = renormalize

    def route(self, x):
        probs = self.gate(x).softmax(-1)
        w, idx = probs.topk(K, dim=-1)
        if self.renormalize:
            w = w / w.sum(-1, keepdim=True)
        return probs, w, idx

    def forward(self, x):
        """Dispatch: each expert runs once on the tokens routed to it; the outputs are added back weighted."""
        probs, w, idx = self.route(x)
        out = torch.zeros_like(x)
        for e in range(E):
            tok, slot = torch.where(idx == e)
            if tok.numel():
                out.index_add_(0, tok, self.experts[e](x[tok]) * w[tok, slot, None])
        return out, probs, idx


def loop_reference(moe, x):
    """The same layer token by token: for each token, run its k experts and add them up."""
    _, w, idx = moe.route(x)
    rows = []
    for t in range(x.shape[0]):
        y = torch.zeros(D)
        for j in range(K):
            y = y + w[t, j] * moe.experts[int(idx[t, j])](x[t:t + 1])[0]
        rows.append(y)
    return torch.stack(rows)


def aux_loss(probs, idx):
    """Switch / Megatron: N · Σ f_i · P_i, f_i the share of the T·k assignments, P_i the mean router probability."""
    f = torch.bincount(idx.flatten(), minlength=E).float() / idx.numel()
    return E * (f * probs.mean(0)).sum()


def aux_loss_hf_mixtral(probs, idx):
    """The same loss as transformers' Mixtral writes it: f is per top-k slot (each row sums to 1), not divided by k."""
    f = F.one_hot(idx, E).float().mean(0)  # (K, E)
    return (f * probs.mean(0)[None]).sum() * E


def counts(idx):
    return torch.bincount(idx.flatten(), minlength=E).tolist()


def _skew():
    """The direction all tokens share; router row 0 is pointed along it, so expert 0 starts out popular."""
    return torch.randn(D, generator=torch.Generator().manual_seed(1))


def _batch(i, mu):
    return torch.randn(T, D, generator=torch.Generator().manual_seed(100 + i)) + mu


def _skewed_moe(seed=0):
    torch.manual_seed(seed)
    moe = MoE()
    with torch.no_grad():
        moe.gate.weight[0] += 0.5 * _skew()
    return moe


@functools.cache
def _train(alpha):
    """Train router and experts on a regression task for STEPS steps, with the aux loss weighted by alpha."""
    torch.set_num_threads(1)
    mu = _skew()
    moe = _skewed_moe()
    torch.manual_seed(1)
    teacher = nn.Sequential(nn.Linear(D, 64), nn.SiLU(), nn.Linear(64, D))
    held_out = _batch(10_000, mu)
    with torch.no_grad():
        _, p0, i0 = moe(held_out)
    opt = torch.optim.Adam(moe.parameters(), lr=1e-2)
    for step in range(STEPS):
        x = _batch(step, mu)
        with torch.no_grad():
            y = teacher(x)
        out, probs, idx = moe(x)
        loss = F.mse_loss(out, y) + alpha * aux_loss(probs, idx)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        _, p1, i1 = moe(held_out)
    return {"before": counts(i0), "after": counts(i1), "aux_before": aux_loss(p0, i0).item(),
            "aux_after": aux_loss(p1, i1).item(), "idx_after": i1, "probs_after": p1, "moe": moe, "x": held_out}


def _ratio(c):
    return max(c) / max(min(c), 1)


@claim("moe.dispatch-equals-loop", kind="measured", question=Q,
       statement="一个 {=8} 专家、top-{=2} 的 MoE 层（专家是 SwiGLU 小 MLP），{=512} 个 token：按专家分组、每个专家对"
                 "分到它的 token 算一次再加权加回去的 dispatch 写法，与逐 token 跑它的两个专家的循环参考实现最大差 "
                 "{max_diff:.1e}。专家一共只算了 {rows} 行（token × k），所有专家都算一遍要 {dense_rows} 行：每个 token "
                 "只用到 {active:pct} 的专家参数。",
       expect={"max_diff": {"<": 1e-5}, "rows": 1024, "dense_rows": 4096, "active": 0.25})
def _(ctx):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    moe = MoE()
    x = torch.randn(T, D)
    with torch.no_grad():
        out, _, idx = moe(x)
        ref = loop_reference(moe, x)
    return {"max_diff": (out - ref).abs().max().item(), "rows": sum(counts(idx)), "dense_rows": T * E,
            "active": K / E}


@claim("moe.topk-weights", kind="measured", question=Q,
       statement="k 个权重怎么来，各家不同。Mixtral 的写法（softmax 后取 top-{=2} 再除以它们的和）与 Megatron 默认的"
                 "写法（先在 logits 上取 top-k，只对这 k 个做 softmax）数学上相同，实测最大差 {renorm_vs_post:.1e}，"
                 "两个权重之和与 1 最多差 {renorm_sum_err:.1e}；不重新归一化时（Qwen1.5-MoE 的 `norm_topk_prob=False`，"
                 "Switch 的 top-1 也直接用概率），这 {=512} 个 token 的两个权重之和平均只有 {raw_sum_mean:.2f}"
                 "（最小 {raw_sum_min:.2f}），"
                 "层的输出与重新归一化的相差最多 {out_diff:.2f}。",
       expect={"renorm_vs_post": {"<": 1e-6}, "renorm_sum_err": {"<": 1e-6}, "raw_sum_mean": {"<": 0.9},
               "out_diff": {">": 0.01}})
def _(ctx):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    moe = MoE()
    x = torch.randn(T, D)
    with torch.no_grad():
        logits = moe.gate(x)
        w_hf, i_hf = logits.softmax(-1).topk(K, -1)
        w_hf = w_hf / w_hf.sum(-1, keepdim=True)
        top_logits, i_post = logits.topk(K, -1)
        w_post = top_logits.softmax(-1)
        raw = logits.softmax(-1).topk(K, -1).values.sum(-1)
        out_renorm, _, _ = moe(x)
        moe.renormalize = False
        out_raw, _, _ = moe(x)
    assert torch.equal(i_hf, i_post)
    return {"renorm_vs_post": (w_hf - w_post).abs().max().item(), "raw_sum_mean": raw.mean().item(),
            "renorm_sum_err": (w_hf.sum(-1) - 1).abs().max().item(),
            "raw_sum_min": raw.min().item(), "out_diff": (out_renorm - out_raw).abs().max().item()}


@claim("moe.top1-renorm-kills-grad", kind="measured", question=Q,
       statement="k = 1 时重新归一化会让路由器学不到东西：唯一的权重恒为 1。先在 logits 上取 top-1、再对这一个做 "
                 "softmax（Megatron 默认的写法）时，主损失对路由器权重的梯度范数是 {grad_post}；softmax 后取 top-1 "
                 "再除以自己（Mixtral 的写法套到 k = 1）只剩舍入误差 {grad_renorm:.0e}；直接用 softmax 概率当权重"
                 "（Switch 的做法）时是 {grad_raw:.2e}。",
       expect={"grad_post": 0.0, "grad_renorm": {"<": 1e-6}, "grad_raw": {">": 1e-4}})
def _(ctx):
    torch.set_num_threads(1)
    out = {}
    for name in ("post", "renorm", "raw"):
        torch.manual_seed(0)
        moe = MoE()
        x = torch.randn(T, D)
        logits = moe.gate(x)
        if name == "post":
            top, idx = logits.topk(1, dim=-1)
            w = top.softmax(-1)
        else:
            w, idx = logits.softmax(-1).topk(1, dim=-1)
            if name == "renorm":
                w = w / w.sum(-1, keepdim=True)
        y = torch.zeros_like(x)
        for e in range(E):
            tok = torch.where(idx[:, 0] == e)[0]
            if tok.numel():
                y = y.index_add(0, tok, moe.experts[e](x[tok]) * w[tok])
        y.square().mean().backward()
        out[f"grad_{name}"] = moe.gate.weight.grad.norm().item()
    return out


@claim("moe.aux-loss-balances", kind="measured", question=Q, timeout=60,
       statement="把路由器的第 0 行朝所有 token 共有的方向偏一点，训练前 {=8} 个专家在一批 {=512} 个 token（共 "
                 "{=1024} 次分配）上分到 {before}。只用任务损失训练 {=60} 步后是 {no_aux}：冷门专家更冷，"
                 "{dead_no_aux} 个专家一次都没分到，分得最多的两个专家拿走了 {top2_no_aux:pct} 的分配；加上系数 {=0.01} 的辅助损失 N·Σf·P，"
                 "同样的步数后是 {with_aux}，最多与最少之比 {with_aux_ratio:.2f}，辅助损失从 {aux_before:.2f} "
                 "降到 {aux_after:.3f}。",
       expect={"dead_no_aux": {">=": 1}, "top2_no_aux": {">": 0.6}, "with_aux_ratio": {"<": 2.5}, "aux_after": {"<": 1.5},
               "aux_before": {">": 2.0}})
def _(ctx):
    a = _train(0.0)
    b = _train(ALPHA)
    return {"before": a["before"], "no_aux": a["after"], "with_aux": b["after"],
            "dead_no_aux": a["after"].count(0), "top2_no_aux": sum(sorted(a["after"])[-2:]) / (T * K),
            "with_aux_ratio": _ratio(b["after"]),
            "aux_before": b["aux_before"], "aux_after": b["aux_after"]}


@claim("moe.aux-loss-scale", question=Q,
       statement="同一个损失两种写法差一个 k：完全均匀的路由（每个专家分到 {=1/8} 的分配、平均概率也是 {=1/8}）下，"
                 "Switch / Megatron 的写法（f 是 T·k 次分配中的份额）等于 {uniform}，transformers 里 Mixtral 的 "
                 "`load_balancing_loss_func`（f 按 top-k 的每一位分别算，不除以 k）等于 {uniform_hf}；"
                 "在上面训练好的路由器上两者之比是 {ratio_trained:.3f}。调辅助损失系数时要知道用的是哪一种。",
       expect={"uniform": 1.0, "uniform_hf": 2.0, "ratio_trained": {"approx": [2.0, 1e-5]}})
def _(ctx):
    probs = torch.full((T, E), 1.0 / E)
    idx = torch.stack([torch.arange(T) % E, (torch.arange(T) + 1) % E], dim=1)
    trained = _train(ALPHA)
    return {"uniform": aux_loss(probs, idx).item(), "uniform_hf": aux_loss_hf_mixtral(probs, idx).item(),
            "ratio_trained": (aux_loss_hf_mixtral(trained["probs_after"], trained["idx_after"])
                              / aux_loss(trained["probs_after"], trained["idx_after"])).item()}


def _capacity(tokens, cf):
    return math.ceil(tokens * K / E * cf)


def _drop(idx, probs, cap, policy):
    """Boolean (T, K): which assignments an expert of capacity ``cap`` keeps.

    ``position``: in token order, the first ``cap`` (transformers' Switch router, a cumsum of priorities);
    ``probs``: the ``cap`` with the highest router probability (Megatron's default drop_policy).
    """
    keep = torch.zeros(idx.shape, dtype=torch.bool)
    for e in range(E):
        tok, slot = torch.where(idx == e)
        if policy == "probs":
            order = probs[tok, e].argsort(descending=True, stable=True)
            tok, slot = tok[order], slot[order]
        keep[tok[:cap], slot[:cap]] = True
    return keep


@claim("moe.capacity-drops", kind="measured", question=Q, timeout=60,
       statement="容量 = ceil(T·k/E·cf)。{=512} 个 token、k={=2}、E={=8} 时，capacity factor {=1.0}、{=1.25}、{=2.0}、"
                 "{=4.0} 的容量是 {cap.x1}、{cap.x1_25}、{cap.x2}、{cap.x4}。用加了辅助损失、已经大致均衡的路由器，"
                 "{=1024} 次分配里丢掉 {bal.x1}、{bal.x1_25}、{bal.x2}、{bal.x4} 次；用只训练任务损失、塌缩了的路由器，"
                 "丢掉 {skew.x1}、{skew.x1_25}、{skew.x2}、{skew.x4} 次。按容量补齐的缓冲区（E×容量行，"
                 "要算也要经 all-to-all 发出去）里空着的行，均衡路由器下是 {pad.x1}、{pad.x1_25}、{pad.x2}、{pad.x4} 行。",
       expect={"cap": {"x1": 128, "x1_25": 160, "x2": 256, "x4": 512}, "skew_at_4": 0, "bal_at_4": 0,
               "pad_at_4": 3072, "skew_at_2": {">": 100}, "pad_grows": True})
def _(ctx):
    out = {"cap": {}, "bal": {}, "skew": {}, "pad": {}}
    bal, skew = _train(ALPHA), _train(0.0)
    for cf in FACTORS:
        cap = _capacity(T, cf)
        key = _KEY[cf]
        out["cap"][key] = cap
        kb = _drop(bal["idx_after"], bal["probs_after"], cap, "position")
        ks = _drop(skew["idx_after"], skew["probs_after"], cap, "position")
        out["bal"][key] = int((~kb).sum())
        out["skew"][key] = int((~ks).sum())
        out["pad"][key] = E * cap - int(kb.sum())
    pads = [out["pad"][_KEY[cf]] for cf in FACTORS]
    out.update(skew_at_4=out["skew"]["x4"], bal_at_4=out["bal"]["x4"], pad_at_4=out["pad"]["x4"],
               skew_at_2=out["skew"]["x2"], pad_grows=pads == sorted(pads))
    return out


@claim("moe.drop-policy", kind="measured", question=Q, timeout=60,
       statement="丢哪些由策略决定，数量不变：capacity factor {=1.0} 时，按位置丢（transformers 的 Switch 路由器，"
                 "序列靠后的先丢）和按概率丢（Megatron 默认的 `drop_policy=\"probs\"`，每个专家留概率最高的）"
                 "分别丢掉 {dropped_position} 次和 {dropped_probs} 次，但其中只有 {same} 次是同一个分配。两个分配都被丢的 token"
                 "（按位置丢时有 {both_dropped} 个），MoE 输出{zero_out:?恰为全零|不为零}，这一层对它只剩残差。",
       expect={"same_count": True, "zero_out": True, "both_dropped": {">": 0}})
def _(ctx):
    torch.set_num_threads(1)
    bal = _train(ALPHA)
    cap = _capacity(T, 1.0)
    kp = _drop(bal["idx_after"], bal["probs_after"], cap, "position")
    kq = _drop(bal["idx_after"], bal["probs_after"], cap, "probs")
    # the trained layer honouring the position keep mask: a dropped assignment contributes nothing
    moe, x, idx = bal["moe"], bal["x"], bal["idx_after"]
    with torch.no_grad():
        _, w, _ = moe.route(x)
        out = torch.zeros_like(x)
        for e in range(E):
            tok, slot = torch.where((idx == e) & kp)
            if tok.numel():
                out.index_add_(0, tok, moe.experts[e](x[tok]) * w[tok, slot, None])
    gone = ~kp.any(1)
    return {"dropped_position": int((~kp).sum()), "dropped_probs": int((~kq).sum()),
            "same_count": int((~kp).sum()) == int((~kq).sum()), "same": int(((~kp) & (~kq)).sum()),
            "both_dropped": int(gone.sum()), "zero_out": bool(gone.any()) and bool((out[gone] == 0).all())}


@claim("moe.bias-balancing", kind="measured", question=Q,
       statement="DeepSeek-V3 的无辅助损失均衡：每个专家一个偏置，只加在选专家用的打分上（sigmoid 打分 + 偏置后取 top-k），"
                 "门控权重仍用原始打分（归一化后）；偏置不走梯度，每步按负载调：超载的减 γ、欠载的加 γ。同样偏向专家 0 "
                 "的路由器（不训练），γ={=0.005}、{=200} 步后每个专家的负载从 {before} 变成 {after}，最多与最少之比从 "
                 "{ratio_before:.0f} 降到 {ratio_after:.2f}；有 {changed:pct} 的 token 换了专家。其余 {kept_rows} 个 token 选的专家"
                 "没变；门控权重若取加了偏置的打分，"
                 "这些 token 的权重最多会差 {biased_diff:.1e}。",
       expect={"ratio_before": {">": 10}, "ratio_after": {"<": 2.0}, "kept_rows": {">": 0}, "biased_diff": {">": 1e-4}})
def _(ctx):
    torch.set_num_threads(1)
    mu = _skew()
    w_router = _skewed_moe().gate.weight.detach()
    bias = torch.zeros(E)

    def route(x, b):
        s = torch.sigmoid(x @ w_router.T)
        idx = (s + b).topk(K, dim=-1).indices
        g = s.gather(1, idx)
        return idx, g / g.sum(-1, keepdim=True), s

    held_out = _batch(10_000, mu)
    i0, g0, _ = route(held_out, bias.clone())
    for step in range(BIAS_STEPS):
        idx, _, _ = route(_batch(step, mu), bias)
        load = torch.bincount(idx.flatten(), minlength=E).float()
        bias += GAMMA * torch.sign(load.mean() - load)
    i1, g1, s1 = route(held_out, bias)
    kept = (i0.sort(-1).values == i1.sort(-1).values).all(-1)  # tokens whose experts the bias did not change
    g_biased = (s1 + bias).gather(1, i1)  # what a router that mixed the bias into the gate would give
    g_biased = g_biased / g_biased.sum(-1, keepdim=True)
    by_expert = lambda g, i: g.gather(1, i.argsort(-1))  # noqa: E731  the k weights in expert order
    changed = (i0.sort(-1).values != i1.sort(-1).values).any(-1).float().mean().item()
    return {"before": counts(i0), "after": counts(i1), "ratio_before": _ratio(counts(i0)),
            "ratio_after": _ratio(counts(i1)), "changed": changed, "kept_rows": int(kept.sum()),
            "same_weights": torch.equal(by_expert(g1, i1)[kept], by_expert(g0, i0)[kept]),
            "biased_diff": (g_biased[kept] - g1[kept]).abs().max().item()}
