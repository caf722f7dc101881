"""Speculative sampling checked by drawing tokens: one step's output histogram against the target p (chi-square),
the acceptance rate against sum(min(p, q)), tokens per round against (1 − α^(γ+1))/(1 − α), and the first tokens
of a whole generation (two bigram models, several rounds) against the target's own joint distribution.

The (p, q) pairs are the ones ``exact.py`` computes with fractions, read from that file. Every test states its
false-alarm rate: a correct rule fails a p-value bound of 1e-3 once in a thousand draws, a z-score bound of 5
about once in 1.7 million.
"""

from __future__ import annotations

import ast
from pathlib import Path

import torch

from verify.claim import claim

Q = "speculative-decoding"
P_MIN = 1e-3  # a correct rule's p-value falls below this once in a thousand draws
Z_MAX = 5.0  # |z| > 5 happens about once in 1.7 million draws of a correct estimate


def pairs(folder: Path) -> dict:
    """The (p, q) weights of "exact.py", read as a literal (importing that file would declare its claims again)."""
    tree = ast.parse((folder / "exact.py").read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAIRS")
    return {k: (_dist(p), _dist(q)) for k, (p, q) in ast.literal_eval(node.value).items()}


def _dist(weights):
    w = torch.tensor(weights, dtype=torch.float64)
    return w / w.sum()


def chi_square(counts, probs) -> dict:
    """Pearson's test of observed counts against probabilities; the p-value from the chi-square survival function
    (the regularised upper incomplete gamma function). Cells of probability 0 must be empty and are dropped."""
    counts = torch.as_tensor(counts, dtype=torch.float64)
    probs = torch.as_tensor(probs, dtype=torch.float64)
    if bool((counts[probs == 0] > 0).any()):
        return {"stat": float("inf"), "df": 0, "p": 0.0}
    n = counts.sum()
    keep = probs > 0
    expected = n * probs[keep]
    stat = float(((counts[keep] - expected) ** 2 / expected).sum())
    df = int(keep.sum()) - 1
    p = float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)))
    return {"stat": stat, "df": df, "p": p}


def one_step(p, q, n, gen, rule="residual"):
    """n independent draws of one speculative step, vectorised: x ~ q, keep it if u < p(x)/q(x), else draw from
    the residual norm(max(0, p − q)) (or from p with ``rule="target"``; ``rule="inverted"`` keeps x if u < q(x)/p(x))."""
    x = torch.multinomial(q, n, replacement=True, generator=gen)
    u = torch.rand(n, generator=gen, dtype=torch.float64)
    ratio = q[x] / p[x] if rule == "inverted" else p[x] / q[x]
    keep = u < ratio
    fallback = p if rule == "target" else (p - q).clamp(min=0)
    redraw = torch.multinomial(fallback / fallback.sum(), n, replacement=True, generator=gen)
    return torch.where(keep, x, redraw), keep


@claim("specdec.sampled-output", kind="measured", question=Q,
       statement="同一个规则再用抽样检验一次：三组 (p, q) 各跑 {n} 步，输出 token 的直方图对 p 做卡方检验，p 值分别是 "
                 "{p_close:.3f}、{p_one_hot:.3f}、{p_missing_tokens:.3f}，都不低于 {=0.001}（每个检验误判正确规则的概率是千分之一）；"
                 "被接受的比例与 Σ min(p, q) 的偏差最大 {z_max:.1f} 个标准误。同样的检验对两种写错的规则（接近的草稿那组，被拒后从 p "
                 "重抽、接受概率写反）给出的卡方统计量是 {wrong_stat.target:.0f} 和 {wrong_stat.inverted:.0f}（自由度 {df}），"
                 "p 值都低于 {=1e-12}：这个检验分得出对错。",
       expect={"p_close": {">": P_MIN}, "p_one_hot": {">": P_MIN}, "p_missing_tokens": {">": P_MIN},
               "z_max": {"<": Z_MAX}, "wrong_p_target": {"<": 1e-12}, "wrong_p_inverted": {"<": 1e-12}, "df": 4})
def _(ctx):
    """范围：5 token 分布，20 万次抽样"""
    n = 200_000
    gen = torch.Generator().manual_seed(0)
    result, z = {"n": n}, []
    for name, (p, q) in pairs(ctx.snippet_dir()).items():
        out, keep = one_step(p, q, n, gen)
        result[f"p_{name}"] = chi_square(torch.bincount(out, minlength=len(p)), p)["p"]
        alpha = float(torch.minimum(p, q).sum())
        z.append(abs(float(keep.double().mean()) - alpha) / (alpha * (1 - alpha) / n) ** 0.5)
    p, q = pairs(ctx.snippet_dir())["close"]
    wrong = {rule: chi_square(torch.bincount(one_step(p, q, n, gen, rule)[0], minlength=len(p)), p)
             for rule in ("target", "inverted")}
    return {**result, "z_max": max(z), "df": wrong["target"]["df"], "wrong_stat": {k: w["stat"] for k, w in wrong.items()},
            **{f"wrong_p_{k}": w["p"] for k, w in wrong.items()}}


class Uniforms:
    """Uniform draws from a seeded torch generator, handed out one at a time to the token-by-token loops below."""

    def __init__(self, seed: int, chunk: int = 1 << 16):
        self.gen = torch.Generator().manual_seed(seed)
        self.chunk, self.buf = chunk, iter(())

    def __call__(self) -> float:
        try:
            return next(self.buf)
        except StopIteration:
            self.buf = iter(torch.rand(self.chunk, generator=self.gen, dtype=torch.float64).tolist())
            return next(self.buf)


def draw(weights, rand) -> int:
    """One token from non-negative weights (not necessarily normalised), by the inverse CDF."""
    r = rand() * sum(weights)
    for i, w in enumerate(weights):
        r -= w
        if r < 0 and w > 0:
            return i
    return max(i for i, w in enumerate(weights) if w > 0)


def speculative_round(prefix, target, draft, gamma, rand, on_reject="residual"):
    """One round of speculative sampling: the draft proposes ``gamma`` tokens one by one, the target gives its
    distribution at all gamma + 1 positions (one forward pass on a real model), and the drafts are checked in
    order. Returns the tokens this round emits: the accepted drafts, then one token from the target (the
    residual after a rejection, or a free extra token when every draft was accepted)."""
    ctx, drafts, qs = list(prefix), [], []
    for _ in range(gamma):
        q = draft(ctx)
        x = draw(q, rand)
        drafts.append(x)
        qs.append(q)
        ctx.append(x)
    ps = [target(list(prefix) + drafts[:i]) for i in range(gamma + 1)]
    for i, x in enumerate(drafts):
        p, q = ps[i], qs[i]
        if rand() < p[x] / q[x]:
            continue
        fallback = p if on_reject == "target" else [max(0.0, a - b) for a, b in zip(p, q)]
        return drafts[:i] + [draw(fallback, rand)]
    return drafts + [draw(ps[gamma], rand)]


def generate(prefix, target, draft, gamma, n_tokens, rand, on_reject="residual"):
    """Rounds until at least ``n_tokens`` new tokens; returns the first ``n_tokens`` and the number of rounds."""
    out, rounds = [], 0
    while len(out) < n_tokens:
        out += speculative_round(list(prefix) + out, target, draft, gamma, rand, on_reject)
        rounds += 1
    return out[:n_tokens], rounds


@claim("specdec.tokens-per-round", kind="measured", question=Q,
       statement="每轮（一次目标模型前向）产出的 token 数：草稿每个 token 以同一个概率 α 被接受、相互独立时，是 1 到 γ+1 的截断几何分布，"
                 "期望 (1 − α^(γ+1)) / (1 − α)，全部接受时多出的那一个来自目标模型自己。与上下文无关的 (p, q)，每种配置跑 {rounds} 轮："
                 "α = {=0.8}、γ = {=4} 时公式 {formula_a08_g4:.3f}、抽样均值 {mean.a08_g4:.3f}；γ = {=8} 时 {formula_a08_g8:.3f} 对 "
                 "{mean.a08_g8:.3f}；α = {=0.6}、γ = {=4} 时 {formula_a06_g4:.3f} 对 {mean.a06_g4:.3f}。偏差最大 {z_max:.1f} 个标准误，"
                 "每轮 token 数的分布对截断几何分布做卡方检验，最小 p 值 {p_min:.2f}；γ 从 4 加到 8 只多 {gain_g8:.2f} 个，上限是 1/(1 − α) = {limit_a08:.0f}。",
       expect={"formula_a08_g4": {"approx": [3.3616, 1e-9]}, "formula_a08_g8": {"approx": [4.3289, 1e-4]},
               "formula_a06_g4": {"approx": [2.3056, 1e-9]},
               "z_max": {"<": Z_MAX}, "p_min": {">": P_MIN}, "limit_a08": {"approx": [5.0, 1e-9]}})
def _(ctx):
    """范围：5 token 分布，α 取 0.8/0.6"""
    weights = pairs(ctx.snippet_dir())
    configs = {"a08_g4": ("close", 4), "a08_g8": ("close", 8), "a06_g4": ("missing_tokens", 4)}
    rand = Uniforms(1)
    rounds = 20_000
    formula, mean, z, p_min, limit = {}, {}, [], 1.0, {}
    for key, (pair, gamma) in configs.items():
        p, q = (t.tolist() for t in weights[pair])
        alpha = sum(min(a, b) for a, b in zip(p, q))
        counts = [len(speculative_round([], lambda _c, p=p: p, lambda _c, q=q: q, gamma, rand)) for _ in range(rounds)]
        hist = torch.bincount(torch.tensor(counts), minlength=gamma + 2)[1:]
        law = [alpha ** (k - 1) * (1 - alpha) for k in range(1, gamma + 1)] + [alpha ** gamma]
        formula[key], limit[key] = (1 - alpha ** (gamma + 1)) / (1 - alpha), 1 / (1 - alpha)
        t = torch.tensor(counts, dtype=torch.float64)
        mean[key] = float(t.mean())
        z.append(abs(mean[key] - formula[key]) / (float(t.std()) / rounds ** 0.5))
        p_min = min(p_min, chi_square(hist, law)["p"])
    return {"rounds": rounds, **{f"formula_{k}": v for k, v in formula.items()}, "mean": mean, "z_max": max(z), "p_min": p_min,
            "gain_g8": formula["a08_g8"] - formula["a08_g4"], "limit_a08": limit["a08_g4"]}


# Two bigram models over four tokens: row i is the next-token distribution after token i (integer weights).
TARGET = [[4, 3, 2, 1], [1, 4, 3, 2], [2, 1, 4, 3], [3, 2, 1, 4]]
DRAFT = [[2, 2, 3, 3], [1, 2, 4, 3], [3, 3, 2, 2], [2, 1, 3, 4]]
START, LENGTH = 0, 3


def _bigram(table):
    rows = [[w / sum(r) for w in r] for r in table]
    return lambda ctx: rows[ctx[-1]]


@claim("specdec.whole-generation", kind="measured", question=Q,
       statement="整段生成也一样：两个四个 token 的二元模型（草稿与目标的转移表不同），γ = {=3}，每次生成前 {length} 个 token "
                 "（经过一轮或几轮，含全部接受时的额外 token），跑 {n} 次。这 {length} 个 token 的 {cells} 种组合的频数对目标模型逐 token 采样的"
                 "联合分布做卡方检验，p 值 {p_value:.3f}；被拒后从 p 重抽的写法卡方统计量是 {wrong_stat:.0f}（自由度 {df}），"
                 "p 值低于 {=1e-12}。平均每次生成用 {rounds:.2f} 轮，"
                 "即 {rounds:.2f} 次目标前向，逐 token 采样要 {length} 次。",
       expect={"p_value": {">": P_MIN}, "wrong_p": {"<": 1e-12}, "rounds": {"between": [1.0, 3.0]}, "cells": 64})
def _(ctx):
    """范围：4 token 二元模型，γ = 3"""
    target, draft = _bigram(TARGET), _bigram(DRAFT)
    joint = torch.zeros(4, 4, 4, dtype=torch.float64)
    for a in range(4):
        for b in range(4):
            for c in range(4):
                joint[a, b, c] = target([START])[a] * target([a])[b] * target([b])[c]
    n, rand, result = 30_000, Uniforms(2), {}
    for rule in ("residual", "target"):
        counts, rounds = torch.zeros(64, dtype=torch.float64), 0
        for _ in range(n):
            (a, b, c), r = generate([START], target, draft, 3, LENGTH, rand, rule)
            counts[16 * a + 4 * b + c] += 1
            rounds += r
        result[rule] = (chi_square(counts, joint.flatten()), rounds / n)
    return {"n": n, "length": LENGTH, "cells": 4 ** LENGTH, "df": result["residual"][0]["df"],
            "p_value": result["residual"][0]["p"], "wrong_p": result["target"][0]["p"], "wrong_stat": result["target"][0]["stat"],
            "rounds": result["residual"][1]}
