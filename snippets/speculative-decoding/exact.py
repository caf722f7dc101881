"""Speculative sampling's rejection rule computed exactly, in rational arithmetic: the acceptance probability,
the residual distribution, the output distribution of one step, and what two wrong rules give instead.

No sampling here: every probability is a ``Fraction`` and every equality is exact. ``sampling.py`` checks the
same rule a second way, by drawing tokens and testing the histogram.
"""

from __future__ import annotations

from fractions import Fraction

from verify.claim import claim

Q = "speculative-decoding"

# Three (target p, draft q) pairs over a vocabulary of five tokens, as integer weights (normalised below):
# a draft close to the target; a draft that proposes only its own argmax (one-hot q, a greedy draft);
# a draft that never proposes two of the tokens the target can emit.
PAIRS = {
    "close": ([30, 25, 20, 15, 10], [35, 15, 25, 5, 20]),
    "one_hot": ([30, 25, 20, 15, 10], [0, 1, 0, 0, 0]),
    "missing_tokens": ([30, 25, 20, 15, 10], [50, 0, 30, 0, 20]),
}


def normalise(weights):
    total = sum(weights)
    return [Fraction(w, total) for w in weights]


def acceptance(p, q):
    """Probability that the drafted token is kept: sum over x of q(x)·min(1, p(x)/q(x)) = sum of min(p, q)."""
    return sum(min(a, b) for a, b in zip(p, q))


def total_variation(p, q):
    return sum(abs(a - b) for a, b in zip(p, q)) / 2


def residual(p, q):
    """Where a rejected draft is resampled from: max(0, p − q), normalised."""
    r = [max(Fraction(0), a - b) for a, b in zip(p, q)]
    return [x / sum(r) for x in r]


def output(p, q, rule="residual"):
    """The distribution of the token one step emits: draft x ~ q, keep it with probability min(1, p(x)/q(x)),
    else draw from the residual (``rule="residual"``, the correct rule) or from p itself (``rule="target"``,
    a common mistake). ``rule="inverted"`` keeps x with min(1, q(x)/p(x)), the ratio upside down."""
    if rule == "inverted":
        keep = [min(Fraction(1), b / a) if a else Fraction(1) for a, b in zip(p, q)]
    else:
        keep = [min(Fraction(1), a / b) if b else Fraction(0) for a, b in zip(p, q)]
    kept = [b * k for b, k in zip(q, keep)]
    rejected = 1 - sum(kept)
    if not rejected:
        return kept
    fallback = p if rule == "target" else residual(p, q)
    return [k + rejected * f for k, f in zip(kept, fallback)]


@claim("specdec.accept-is-one-minus-tv", question=Q,
       statement="草稿 token x 从 q 里抽出，以 min(1, p(x)/q(x)) 的概率保留，所以一个草稿 token 被接受的概率是 "
                 "α = Σ q(x)·min(1, p(x)/q(x)) = Σ min(p(x), q(x))，恰好等于 1 − TV(p, q)（总变差距离）。用分数精确计算三组 "
                 "(p, q)：接近的草稿 α = {alpha.close}，只提议自己 argmax 的草稿（one-hot q）α = {alpha.one_hot}（就是 p 在那个 "
                 "token 上的概率），有两个 token 从不提议的草稿 α = {alpha.missing_tokens}；三组的 α 与 1 − TV "
                 "{equal_tv:?都精确相等|并不都相等}。",
       expect={"alpha": {"close": "4/5", "one_hot": "1/4", "missing_tokens": "3/5"}, "equal_tv": True})
def _(ctx):
    """范围：5 token 分布，分数精确"""
    alpha, equal = {}, True
    for name, (pw, qw) in PAIRS.items():
        p, q = normalise(pw), normalise(qw)
        a = sum(b * min(Fraction(1), x / b) for x, b in zip(p, q) if b)  # the definition, token by token
        alpha[name] = str(a)
        equal &= a == acceptance(p, q) == 1 - total_variation(p, q)
    return {"alpha": alpha, "equal_tv": equal}


@claim("specdec.output-is-target", question=Q,
       statement="被拒绝时从残差分布 norm(max(0, p − q)) 重抽。一步输出某个 token 的概率 = 被接受的部分 min(p, q) + 被拒绝的"
                 "概率 (1 − α) 乘残差；而 (1 − α) 正好是 Σ max(0, p − q)，归一化分母约掉，剩下 min(p, q) + max(0, p − q) = p。"
                 "用分数精确计算，上面三组 (p, q) 的输出分布与 p {exact:?逐项精确相等|并不相等}，与草稿 q 好坏无关，草稿差只让 α 变小；"
                 "残差只在 p > q 的 token 上非零：接近的草稿那组是 {support_close} 个 token。",
       expect={"exact": True, "support_close": 2, "rejected_is_mass": True})
def _(ctx):
    """范围：5 token 分布，分数精确"""
    exact = mass = True
    for pw, qw in PAIRS.values():
        p, q = normalise(pw), normalise(qw)
        exact &= output(p, q) == p
        mass &= 1 - acceptance(p, q) == sum(max(Fraction(0), a - b) for a, b in zip(p, q))
    p, q = (normalise(w) for w in PAIRS["close"])
    return {"exact": exact, "rejected_is_mass": mass,
            "support_close": sum(1 for r in residual(p, q) if r), "output_close": [str(x) for x in output(p, q)]}


# A pair where a token with p > q is over-sampled, not under-sampled, when a rejection redraws from p: q(0) is
# close to p(0), so it already gets almost all of p(0) and the redraw adds (1 − α)·p(0) on top.
COUNTER = ([50, 30, 20], [49, 1, 50])


@claim("specdec.wrong-rules-exact", question=Q,
       statement="两种常见的写错，同样精确计算（接近的草稿那组）：被拒绝时直接从 p 重抽而不是从残差，输出分布与 p 的总变差距离是 "
                 "{tv.target}：p < q 的 token 已经拿满了 p，拒绝时又按 p 分到一份，{over:?全部被多抽|并非全部被多抽}；多出的概率从 "
                 "p > q 的 token 那里扣掉（这一组里它们{under:?都被少抽|并非都被少抽}）。单个 p > q 的 token 只在 q(x) < α·p(x) 时少抽"
                 "（四组分布里{under_iff:?逐个如此|并非逐个如此}）：p = ({=50}, {=30}, {=20})/100、q = ({=49}, {=1}, {=50})/100 时 "
                 "token 0 的 p > q，输出却是 {counter_out0}，比 p 的 1/2 多。把接受概率写反成 min(1, q/p)，距离是 {tv.inverted}。"
                 "正确规则的距离是 {tv.residual}。",
       expect={"tv": {"residual": "0", "target": "3/25", "inverted": "1/5"}, "over": True, "under": True,
               "under_iff": True, "counter_out0": "16/25"})
def _(ctx):
    """范围：5 与 3 token 分布，分数精确"""
    p, q = (normalise(w) for w in PAIRS["close"])
    tv = {rule: str(total_variation(output(p, q, rule), p)) for rule in ("residual", "target", "inverted")}
    under = all(o < a for o, a, b in zip(output(p, q, "target"), p, q) if a > b)
    over, under_iff = True, True
    for pw, qw in (*PAIRS.values(), COUNTER):
        pp, qq = normalise(pw), normalise(qw)
        out, alpha = output(pp, qq, "target"), acceptance(pp, qq)
        over &= all(o > a for o, a, b in zip(out, pp, qq) if a < b)
        under_iff &= all((o < a) == (b < alpha * a) for o, a, b in zip(out, pp, qq) if a > b)
    counter = output(*(normalise(w) for w in COUNTER), "target")
    return {"tv": tv, "over": over, "under": under, "under_iff": under_iff, "counter_out0": str(counter[0])}
