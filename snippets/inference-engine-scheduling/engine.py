"""An inference engine's loop on a tiny random decoder: one preallocated KV cache of fixed slots (a static
cache), requests joining and leaving it step by step (continuous batching), prompts prefilled whole or in
chunks, checked against each request recomputed alone; and the tokens and FLOPs each way, counted.
CPU, fp32, fixed seeds, no timings."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from verify.claim import claim

Q = "inference-engine-scheduling"

VOCAB, D, HEADS, LAYERS, FFN = 96, 64, 4, 2, 128
DH = D // HEADS
SLOTS, TMAX = 3, 64  # the static cache: 3 request slots of 64 positions each, allocated once
TOL = 1e-4  # fp32 logits of size ~1: batched, chunked and whole-sequence matmuls sum in other orders


def rotate(x, pos):
    """RoPE of x (B, H, T, DH) at per-row positions pos (B, T): each request sits at its own position."""
    inv = 1.0 / (10000 ** (torch.arange(0, DH, 2, dtype=torch.float32) / DH))
    ang = pos.to(torch.float32)[:, None, :, None] * inv  # (B, 1, T, DH/2)
    c, s = ang.cos(), ang.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


class StaticCache:
    """K and V of every layer as (SLOTS, TMAX, HEADS, DH), allocated once; a slot is reused as it is,
    the previous request's entries left in place: the position mask keeps a request from reading them."""

    def __init__(self):
        self.k = torch.zeros(LAYERS, SLOTS, TMAX, HEADS, DH)
        self.v = torch.zeros(LAYERS, SLOTS, TMAX, HEADS, DH)


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList(
            nn.ModuleDict({"n1": nn.RMSNorm(D), "qkv": nn.Linear(D, 3 * D, bias=False), "o": nn.Linear(D, D, bias=False),
                           "n2": nn.RMSNorm(D), "up": nn.Linear(D, FFN, bias=False), "down": nn.Linear(FFN, D, bias=False)})
            for _ in range(LAYERS))
        self.norm = nn.RMSNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, tokens, pos, cache=None, slots=None):
        """tokens, pos: (B, T). Without a cache the rows are whole sequences (full recompute); with one, row b
        writes its K/V at cache[slot b, pos] and attends to every position of its slot up to its own."""
        b, t = tokens.shape
        x = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            q, k, v = layer["qkv"](layer["n1"](x)).view(b, t, 3, HEADS, DH).unbind(2)  # (B, T, H, DH) each
            q, k = rotate(q.transpose(1, 2), pos), rotate(k.transpose(1, 2), pos).transpose(1, 2)
            if cache is None:
                keys, vals, key_pos = k, v, pos
            else:
                cache.k[i][slots[:, None], pos] = k
                cache.v[i][slots[:, None], pos] = v
                keys, vals = cache.k[i][slots], cache.v[i][slots]  # (B, TMAX, H, DH)
                key_pos = torch.arange(TMAX).expand(b, TMAX)
            scores = q @ keys.permute(0, 2, 3, 1) * DH ** -0.5  # (B, H, T, S): plain matmuls, seen by FlopCounterMode
            allowed = key_pos[:, None, None, :] <= pos[:, None, :, None]
            att = scores.masked_fill(~allowed, float("-inf")).softmax(-1) @ vals.transpose(1, 2)
            x = x + layer["o"](att.transpose(1, 2).reshape(b, t, D))
            h = layer["n2"](x)
            x = x + layer["down"](torch.nn.functional.silu(layer["up"](h)))
        return self.head(self.norm(x))


def model():
    torch.manual_seed(0)
    return TinyDecoder().eval()


def requests(seed=1):
    """Six requests: (prompt tokens, number of tokens to generate), lengths varied so they finish apart."""
    gen = torch.Generator().manual_seed(seed)
    shapes = ((9, 12), (21, 4), (5, 20), (14, 7), (30, 9), (3, 15))
    return [(torch.randint(0, VOCAB, (p,), generator=gen), n) for p, n in shapes]


@torch.no_grad()
def serve(m, reqs, chunk=None):
    """Continuous batching over the static cache: each step admits waiting requests into free slots (their
    prompt prefilled into the slot, whole or ``chunk`` tokens per call), then runs one batched decode step
    for every running request; a request that has its tokens frees its slot at once.

    Returns each request's logits per generated token, its tokens, the slot each used, the largest batch, the
    tokens the model was fed, and per request the forward passes from its first prefill call to its last token
    (every call in between counted: other requests' prefills too) and how many of those were others' prefills."""
    cache = StaticCache()
    ptr = (cache.k.data_ptr(), cache.v.data_ptr())
    free, waiting, running = list(range(SLOTS)), list(range(len(reqs))), {}
    logits = {r: [] for r in range(len(reqs))}
    out = {r: [] for r in range(len(reqs))}
    slot_of, fed, widest = {}, 0, 0
    calls, prefills, since, forwards, others = [0], [], {}, {}, {}  # prefills: (call number, request)

    def forward(*args):
        calls[0] += 1
        return m(*args)

    def emit(r, row):
        logits[r].append(row)
        out[r].append(int(row.argmax()))
        if len(out[r]) == reqs[r][1]:
            free.append(running.pop(r)["slot"])
            forwards[r] = calls[0] - since[r]
            others[r] = sum(1 for c, q in prefills if q != r and since[r] < c <= calls[0])

    while waiting or running:
        while waiting and free:
            r = waiting.pop(0)
            slot, prompt = free.pop(0), reqs[r][0]
            slot_of[r] = slot
            running[r] = {"slot": slot}
            step, since[r] = chunk or len(prompt), calls[0]
            for start in range(0, len(prompt), step):
                piece = prompt[start:start + step]
                pos = torch.arange(start, start + len(piece))
                last = forward(piece[None], pos[None], cache, torch.tensor([slot]))[0, -1]
                prefills.append((calls[0], r))
                fed += len(piece)
            emit(r, last)
        batch = sorted(running)
        if not batch:
            continue
        widest = max(widest, len(batch))
        tokens = torch.tensor([[out[r][-1]] for r in batch])
        pos = torch.tensor([[len(reqs[r][0]) + len(out[r]) - 1] for r in batch])
        rows = forward(tokens, pos, cache, torch.tensor([running[r]["slot"] for r in batch]))[:, 0]
        fed += len(batch)
        for r, row in zip(batch, rows):
            emit(r, row)
    same_buffer = ptr == (cache.k.data_ptr(), cache.v.data_ptr())
    return {"logits": logits, "out": out, "slot_of": slot_of, "widest": widest, "fed": fed, "same_buffer": same_buffer,
            "calls": calls[0], "forwards": forwards, "others": others}


@torch.no_grad()
def recompute(m, prompt, generated):
    """The request alone, no cache: the whole sequence in one causal pass; row i predicts generated token i."""
    seq = torch.cat((prompt, torch.tensor(generated[:-1], dtype=prompt.dtype)))
    rows = m(seq[None], torch.arange(len(seq))[None])[0]
    return rows[len(prompt) - 1:]


@claim("sched.static-cache-matches-recompute", question=Q,
       statement="一个随机初始化的小解码器，静态 KV cache 一次分配 {=3} 个槽、每槽 {=64} 个位置；{=6} 个请求（提示词 {=3} 到 "
                 "{=30} 个 token，各生成 {=4} 到 {=20} 个）按连续批处理进出：每步先把等待的请求放进空槽做 prefill，再对所有在跑的"
                 "请求做一次批量 decode，最宽一步 {widest} 个请求，槽被复用了 {reused} 次（上一个请求的 K/V 留在槽里，只靠位置"
                 "掩码不读它）。每个请求每一步的 logits 与它单独整段重算相比，最大差 {max_diff:.1e}（容差 {=1e-4}：fp32 下批量、"
                 "逐 token 和整段的矩阵乘累加顺序不同），贪心选出的 {tokens} 个 token {same_tokens:?全部相同|有不同}；"
                 "这台 CPU 上逐位相同的请求有 {bitwise}/{=6} 个。缓存的存储地址全程{same_buffer:?没有变过|变过}。",
       expect={"max_diff": {"<": TOL}, "same_tokens": True, "same_buffer": True, "widest": 3, "reused": 3,
               "tokens": 12 + 4 + 20 + 7 + 9 + 15})
def _(ctx):
    """范围：一个 2 层、宽 64 的随机小解码器，fp32"""
    torch.set_num_threads(1)
    m, reqs = model(), requests()
    run = serve(m, reqs)
    diffs, same, bitwise = [], True, 0
    for r, (prompt, _n) in enumerate(reqs):
        ref = recompute(m, prompt, run["out"][r])
        got = torch.stack(run["logits"][r])
        diffs.append((got - ref).abs().max().item())
        same = same and ref.argmax(-1).tolist() == run["out"][r]
        bitwise += torch.equal(got, ref)
    return {"max_diff": max(diffs), "same_tokens": same, "bitwise": bitwise, "widest": run["widest"],
            "reused": len(run["slot_of"]) - len(set(run["slot_of"].values())), "slots": run["slot_of"], "same_buffer": run["same_buffer"],
            "tokens": sum(len(o) for o in run["out"].values())}


@claim("sched.chunked-prefill-matches", question=Q,
       statement="chunked prefill 不改结果：同样 {=6} 个请求，提示词按每块 {=8} 个 token 分几次写进静态缓存（块内因果，块间看全部"
                 "已写的位置），与整段一次 prefill 相比，全部 logits 最大差 {max_diff:.1e}（容差 {=1e-4}），生成的 token "
                 "{same_tokens:?全部相同|有不同}；模型前向的次数从 {calls_whole} 次变成 {calls_chunked} 次，喂进模型的 token 总数"
                 "都是 {fed_chunked}（{fed_equal:?相同|不同}）。",
       expect={"max_diff": {"<": TOL}, "same_tokens": True, "fed_equal": True, "calls_whole": 31, "calls_chunked": 38})
def _(ctx):
    """范围：一个 2 层、宽 64 的随机小解码器，fp32"""
    torch.set_num_threads(1)
    m, reqs = model(), requests()
    calls = {"n": 0}

    def count(*_a):
        calls["n"] += 1

    handle = m.register_forward_hook(count)
    whole = serve(m, reqs)
    calls_whole, calls["n"] = calls["n"], 0
    chunked = serve(m, reqs, chunk=8)
    handle.remove()
    diff = max((torch.stack(chunked["logits"][r]) - torch.stack(whole["logits"][r])).abs().max().item()
               for r in range(len(reqs)))
    return {"max_diff": diff, "same_tokens": whole["out"] == chunked["out"], "calls_whole": calls_whole,
            "calls_chunked": calls["n"], "fed_whole": whole["fed"], "fed_chunked": chunked["fed"],
            "fed_equal": whole["fed"] == chunked["fed"]}


@claim("sched.engine-forwards-per-request", question=Q,
       statement="同一个引擎循环，数每个请求从进槽（第一次 prefill）到拿到最后一个 token 之间模型一共前向了几次，别的请求进槽时"
                 "插进来的 prefill 也算。单独跑时，每个请求正好是它要生成的 token 数（{alone_exact:?个个都是|不全是}）；"
                 "{=6} 个请求连续批处理时，比这个数少的有 {fewer} 个，多的有 {more} 个、最多多 {most_extra} 次，多出来的"
                 "{extra_is_prefills:?全是|不全是}别的请求的 prefill。提示词按每块 {=8} 个 token 切块时，比单独跑（同样切块）少的有 "
                 "{chunked_fewer} 个，多的有 {chunked_more} 个、最多多 {chunked_most_extra} 次。",
       expect={"alone_exact": True, "fewer": 0, "more": 4, "most_extra": 4, "extra_is_prefills": True,
               "chunked_fewer": 0, "chunked_more": 4, "chunked_most_extra": 10})
def _(ctx):
    """范围：一个 2 层、宽 64 的随机小解码器，3 个槽"""
    torch.set_num_threads(1)
    m, reqs = model(), requests()
    out = {}
    for name, chunk in (("", None), ("chunked_", 8)):
        run = serve(m, reqs, chunk)
        alone = [serve(m, [q], chunk)["forwards"][0] for q in reqs]
        extra = [run["forwards"][r] - alone[r] for r in range(len(reqs))]
        out |= {f"{name}fewer": sum(x < 0 for x in extra), f"{name}more": sum(x > 0 for x in extra),
                f"{name}most_extra": max(extra), f"{name}extra": extra,
                f"{name}extra_is_prefills": extra == [run["others"][r] for r in range(len(reqs))]}
        if chunk is None:
            out["alone_exact"] = alone == [n for _, n in reqs]
    return out


PROMPT_LEN, GEN = 20, 24


def _counted(fn):
    """FLOPs of the weight matmuls (aten.mm) and of attention's q·kᵀ and p·v (aten.bmm) while ``fn`` runs."""
    with FlopCounterMode(display=False) as fc:
        fn()
    ops = {str(op): n for op, n in fc.get_flop_counts()["Global"].items()}
    return ops.get("aten.mm", 0), ops.get("aten.bmm", 0)


@claim("sched.tokens-and-flops", question=Q,
       statement="一个请求（提示词 {=20} 个 token，生成 {=24} 个）：有缓存时模型一共只喂 {fed_cached} 个 token（提示词一次，之后每步一个），"
                 "每步都整段重算则一共要喂 {fed_recompute} 个；FlopCounterMode 数到的权重矩阵乘 FLOPs 分别是 {linear_cached:,d} 和 "
                 "{linear_recompute:,d}，都正好是每 token {linear_per_token:,d}（每个权重参数一次乘加）乘喂进去的 token 数"
                 "（{linear_exact:?两边都相等|不等}）。注意力那一份不同：本页的静态缓存对每个 decode token 都按整槽 {=64} 个位置算"
                 "分数（被掩码的位置也算），第一个 decode 步每 token 每层 {attn_first:,d} FLOPs，最后一步仍是 {attn_last:,d}，"
                 "与实际上下文长度无关。",
       expect={"fed_cached": 43, "fed_recompute": 756,
               "linear_exact": True, "attn_first": 16384, "attn_last": 16384})
def _(ctx):
    """范围：一个 2 层、宽 64 的随机小解码器"""
    torch.set_num_threads(1)
    m = model()
    prompt = torch.randint(0, VOCAB, (PROMPT_LEN,), generator=torch.Generator().manual_seed(2))
    per_token = 2 * sum(p.numel() for name, p in m.named_parameters() if p.dim() == 2 and not name.startswith("embed"))
    box = {}
    mm_cached, _ = _counted(lambda: box.update(run=serve(m, [(prompt, GEN)])))
    run = box["run"]
    seq = torch.cat((prompt, torch.tensor(run["out"][0][:-1])))
    lengths = range(PROMPT_LEN, PROMPT_LEN + GEN)

    def recompute_all():
        with torch.no_grad():
            for n in lengths:
                m(seq[None, :n], torch.arange(n)[None])

    mm_re, _ = _counted(recompute_all)
    cache = StaticCache()
    with torch.no_grad():
        m(prompt[None], torch.arange(PROMPT_LEN)[None], cache, torch.tensor([0]))

    def decode_at(p):
        def step():
            with torch.no_grad():
                m(seq[None, p:p + 1], torch.tensor([[p]]), cache, torch.tensor([0]))
        return _counted(step)[1] // LAYERS

    fed_re = sum(lengths)
    return {"fed_cached": run["fed"], "fed_recompute": fed_re, "linear_per_token": per_token,
            "linear_cached": mm_cached, "linear_recompute": mm_re,
            "linear_exact": mm_cached == per_token * run["fed"] and mm_re == per_token * fed_re,
            "attn_first": decode_at(PROMPT_LEN), "attn_last": decode_at(PROMPT_LEN + GEN - 2)}
