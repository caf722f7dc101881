"""Greedy speculative decoding on a tiny random decoder (float64, CPU): the tokens it emits are the target's own
greedy tokens, how many target forward passes it takes instead of one per token, and what a looser verification
(accepting a draft that is only in the target's top 2) does to the output.

The target is a two-layer causal transformer with random weights; the draft is the same network with its weights
rounded to 4 bits per output channel (a cheap copy that mostly agrees). No KV cache: a forward pass takes the whole
sequence and returns logits at every position, so one pass checks all drafted tokens at once, as a serving engine
does with the cache. Counts, not times: the machine is shared and a CPU time says nothing about a GPU's.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from snippets._workloads.overhead import single_thread
from verify.claim import claim

Q = "speculative-decoding"
VOCAB, DIM, HEADS, LAYERS, MAX_LEN = 64, 64, 4, 2, 160
GAMMA, NEW_TOKENS, PROMPTS, PROMPT_LEN = 4, 48, 4, 8
DRAFT_BITS = 4


def make_target(seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)

    def w(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale / shape[-1] ** 0.5

    return {"emb": w(VOCAB, DIM, scale=DIM ** 0.5), "pos": w(MAX_LEN, DIM, scale=DIM ** 0.5), "out": w(VOCAB, DIM, scale=4.0),
            "layers": [{"qkv": w(3 * DIM, DIM), "o": w(DIM, DIM), "up": w(4 * DIM, DIM), "down": w(DIM, 4 * DIM)}
                       for _ in range(LAYERS)]}


def fake_quant(t: torch.Tensor, bits: int) -> torch.Tensor:
    """Symmetric per-row rounding to ``bits`` bits: the weights a cheap draft copy of the target would hold."""
    levels = 2 ** (bits - 1) - 1
    scale = t.abs().amax(-1, keepdim=True) / levels
    return (t / scale).round() * scale


def make_draft(target: dict, bits: int = DRAFT_BITS) -> dict:
    return {"emb": target["emb"], "pos": target["pos"], "out": fake_quant(target["out"], bits),
            "layers": [{k: fake_quant(v, bits) for k, v in layer.items()} for layer in target["layers"]]}


def forward(model: dict, tokens: torch.Tensor) -> torch.Tensor:
    """Logits (T, VOCAB) at every position of ``tokens`` (T,): pre-norm causal attention and MLP blocks."""
    t = tokens.shape[0]
    x = model["emb"][tokens] + model["pos"][:t]
    for layer in model["layers"]:
        h = F.layer_norm(x, (DIM,))
        q, k, v = (h @ layer["qkv"].T).view(t, 3, HEADS, DIM // HEADS).permute(1, 2, 0, 3)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + a.transpose(0, 1).reshape(t, DIM) @ layer["o"].T
        x = x + F.gelu(F.layer_norm(x, (DIM,)) @ layer["up"].T) @ layer["down"].T
    return F.layer_norm(x, (DIM,)) @ model["out"].T


class Counted:
    """A model whose forward passes are counted."""

    def __init__(self, model: dict):
        self.model, self.calls = model, 0

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return forward(self.model, tokens)


def greedy(target: Counted, prompt: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain greedy decoding: one target pass per token. Also returns the logits each step chose from."""
    seq, rows = prompt, []
    for _ in range(n):
        rows.append(target(seq)[-1])
        seq = torch.cat((seq, rows[-1].argmax().view(1)))
    return seq, torch.stack(rows)


def speculative_greedy(target: Counted, draft: Counted, prompt: torch.Tensor, n: int, gamma: int = GAMMA,
                       top: int = 1) -> tuple[torch.Tensor, list[int]]:
    """Greedy speculative decoding: the draft proposes ``gamma`` greedy tokens, one target pass over prompt +
    drafts gives the target's greedy choice at every drafted position; the drafts are kept up to the first one the
    target would not have chosen (``top=2``: the first one outside the target's top 2, a looser check), and the
    target's own token follows. Returns the tokens and how many were emitted per target pass."""
    seq, per_pass = prompt, []
    while seq.shape[0] - prompt.shape[0] < n:
        ctx = seq
        for _ in range(gamma):
            ctx = torch.cat((ctx, draft(ctx)[-1].argmax().view(1)))
        drafts = ctx[seq.shape[0]:]
        logits = target(ctx)[seq.shape[0] - 1:]  # the target's view at each drafted position, plus one more
        ok = (logits[:gamma].topk(top, -1).indices == drafts[:, None]).any(-1)
        keep = int(ok.long().cumprod(0).sum())
        seq = torch.cat((seq, drafts[:keep], logits[keep].argmax().view(1)))
        per_pass.append(keep + 1)
    return seq[:prompt.shape[0] + n], per_pass


@functools.cache
def runs() -> list[dict]:
    """Each prompt decoded three ways: plain greedy, greedy speculative, and speculative with the top-2 check."""
    out = []
    with single_thread():  # a tiny model: a second OpenMP thread on a shared machine only waits
        target = make_target(0)
        draft = make_draft(target)
        gen = torch.Generator().manual_seed(1)
        for _ in range(PROMPTS):
            prompt = torch.randint(0, VOCAB, (PROMPT_LEN,), generator=gen)
            plain = Counted(target)
            ref, rows = greedy(plain, prompt, NEW_TOKENS)
            top2 = rows.topk(2, -1).values
            # the same positions' logits from one pass over the finished sequence (how a verify pass sees them)
            batched = forward(target, ref)[PROMPT_LEN - 1:-1]
            row = {"plain_passes": plain.calls, "gap": float((top2[:, 0] - top2[:, 1]).min()),
                   "diff": float((batched - rows).abs().max())}
            for name, top in (("exact", 1), ("loose", 2)):
                t, d = Counted(target), Counted(draft)
                tokens, per_pass = speculative_greedy(t, d, prompt, NEW_TOKENS, top=top)
                same = torch.equal(tokens, ref)
                first = int((tokens != ref).nonzero()[0]) - PROMPT_LEN + 1 if not same else None  # 1-based
                row[name] = {"same": same, "first_diff": first, "target_passes": t.calls, "draft_passes": d.calls,
                             "per_pass": per_pass}
            out.append(row)
    return out


@claim("specdec.greedy-same-tokens", kind="measured", question=Q,
       statement="greedy 版本：草稿模型（目标权重按输出通道舍入到 {bits} 位的副本，嵌入层不变）每轮贪心提议 γ = {gamma} 个 token，目标模型一次前向给出"
                 "每个位置自己的 argmax，保留到第一个不一致处，再接上目标自己的那个 token。{prompts} 个提示词各生成 {new_tokens} 个 token，与目标逐个 "
                 "token 贪心解码的结果{same:?逐个相同|并不相同}。这靠的是验证时比较的 logits 与逐个解码时几乎一样：同一位置在整段一次前向里和"
                 "逐步前向里的 logits 最多差 {diff:.1e}（float64），而每步第一、第二名之差最小也有 {gap:.1e}，舍入翻转不了 argmax。",
       expect={"same": True, "gap_exceeds_diff": True, "diff": {"<": 1e-10}})
def _(ctx):
    """范围：两层随机小 Transformer，4 位草稿"""
    rows = runs()
    gap, diff = min(r["gap"] for r in rows), max(r["diff"] for r in rows)
    return {"bits": DRAFT_BITS, "gamma": GAMMA, "prompts": PROMPTS, "new_tokens": NEW_TOKENS,
            "same": all(r["exact"]["same"] for r in rows), "gap": gap, "diff": diff, "gap_exceeds_diff": gap > 1000 * diff}


@claim("specdec.greedy-target-passes", kind="measured", question=Q,
       statement="目标模型的前向次数：逐 token 贪心 {plain} 次，投机解码 {spec} 次，平均每次前向留下 {per_pass:.2f} 个 token"
                 "（最后一轮超出 {new_tokens} 个的部分截掉不算；每轮 1 到 γ+1 = {most} 个，至少有目标自己的那一个，所以前向次数"
                 "{at_most:?从不多于|可能多于}逐 token 解码）。代价是草稿模型"
                 "多跑 {draft} 次前向（每轮 γ 次），外加验证时一次前向要算 γ+1 个位置；省不省时间取决于这两项有多便宜，本页不测时间。",
       expect={"plain": 192, "at_most": True, "draft_is_gamma_per_round": True, "spec": {"<": 192}})
def _(ctx):
    """范围：两层随机小 Transformer，4 位草稿"""
    rows = runs()
    spec = sum(r["exact"]["target_passes"] for r in rows)
    per_pass = [k for r in rows for k in r["exact"]["per_pass"]]
    return {"plain": sum(r["plain_passes"] for r in rows), "spec": spec, "most": GAMMA + 1, "new_tokens": NEW_TOKENS,
            "draft": sum(r["exact"]["draft_passes"] for r in rows),
            "per_pass": PROMPTS * NEW_TOKENS / spec,
            "at_most": all(r["exact"]["target_passes"] <= r["plain_passes"] for r in rows)
            and all(1 <= k <= GAMMA + 1 for k in per_pass),
            "draft_is_gamma_per_round": all(r["exact"]["draft_passes"] == GAMMA * r["exact"]["target_passes"] for r in rows)}


@claim("specdec.greedy-loose-verify", kind="measured", question=Q,
       statement="greedy 的“无损”只在逐个精确比对时成立。把验证放宽成“草稿 token 在目标的前两名里就接受”，目标前向少到 {loose_passes} 次"
                 "（精确比对是 {exact_passes} 次），但 {prompts} 个提示词的输出与目标贪心结果{all_same:?全都相同|不再全部相同}，"
                 "有 {differ} 个不同，最早在第 {first} 个生成的 token 就分叉。",
       expect={"all_same": False, "differ": {">=": 1}, "fewer_passes": True})
def _(ctx):
    """范围：两层随机小 Transformer，4 位草稿"""
    rows = runs()
    loose = sum(r["loose"]["target_passes"] for r in rows)
    exact = sum(r["exact"]["target_passes"] for r in rows)
    firsts = [r["loose"]["first_diff"] for r in rows if not r["loose"]["same"]]
    return {"prompts": len(rows), "all_same": not firsts, "differ": len(firsts), "first": min(firsts) if firsts else None,
            "loose_passes": loose, "exact_passes": exact, "fewer_passes": loose <= exact}
