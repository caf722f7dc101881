"""KV cache on a tiny Llama-style decoder: cached decoding against full recompute, why K and V can
be cached (the causal mask) and Q need not be, and the SDPA mask trap of a one-token query."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from snippets._workloads.overhead import single_thread
from verify import timing
from verify.claim import claim

Q = "kv-cache"
# The timings run on one CPU thread (single_thread): a parallel region of two threads stalls whenever
# another process holds one of the cores, and that stall, not the work, would then be what is measured.


# --- a tiny decoder -------------------------------------------------------------------------------

def rope(x, pos):
    """Rotary position embedding of ``x`` (B, H, T, dh) at integer positions ``pos`` (T,)."""
    dh = x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, dh, 2, device=x.device, dtype=torch.float32) / dh))
    ang = pos.to(torch.float32)[:, None] * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Cache:
    """Per-layer K and V, grown along the sequence dimension with ``torch.cat``."""

    def __init__(self):
        self.k: list[torch.Tensor] = []
        self.v: list[torch.Tensor] = []

    def update(self, layer, k, v):
        if layer == len(self.k):
            self.k.append(k)
            self.v.append(v)
        else:
            self.k[layer] = torch.cat((self.k[layer], k), dim=2)
            self.v[layer] = torch.cat((self.v[layer], v), dim=2)
        return self.k[layer], self.v[layer]

    def length(self):
        return self.k[0].shape[2] if self.k else 0

    def nbytes(self):
        return sum(t.untyped_storage().nbytes() for t in self.k + self.v)


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads, device=None):
        super().__init__()
        self.heads, self.kv_heads, self.dh = heads, kv_heads, d // heads
        self.wq = nn.Linear(d, heads * self.dh, bias=False, device=device)
        self.wk = nn.Linear(d, kv_heads * self.dh, bias=False, device=device)
        self.wv = nn.Linear(d, kv_heads * self.dh, bias=False, device=device)
        self.wo = nn.Linear(heads * self.dh, d, bias=False, device=device)

    def forward(self, x, pos, cache=None, layer=0, causal=True, explicit=False, probe=None):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.dh).transpose(1, 2)
        k = self.wk(x).view(b, t, self.kv_heads, self.dh).transpose(1, 2)
        v = self.wv(x).view(b, t, self.kv_heads, self.dh).transpose(1, 2)
        q, k = rope(q, pos), rope(k, pos)
        if cache is not None:
            k, v = cache.update(layer, k, v)
        if probe is not None:
            probe.append((k, v))
        s = k.shape[2]
        # A query block longer than one token is only ever the whole prompt (no past): square and causal.
        assert t == 1 or t == s, "this decoder prefills an empty cache and then decodes one token at a time"
        if explicit:  # plain matmuls, so that FlopCounterMode sees the attention FLOPs
            g = self.heads // self.kv_heads
            qg = q.reshape(b, self.kv_heads, g * t, self.dh)
            scores = (qg @ k.transpose(-2, -1)) * self.dh ** -0.5
            if causal and t > 1:
                mask = torch.ones(t, s, dtype=torch.bool, device=x.device).tril()
                scores = scores.view(b, self.kv_heads, g, t, s).masked_fill(~mask, float("-inf")).view_as(scores)
            out = (scores.softmax(-1) @ v).view(b, self.heads, t, self.dh)
        else:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal and t > 1,
                                                 enable_gqa=self.heads != self.kv_heads)
        return self.wo(out.transpose(1, 2).reshape(b, t, self.heads * self.dh))


class Block(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn, device=None):
        super().__init__()
        self.norm1 = nn.RMSNorm(d, device=device)
        self.attn = Attention(d, heads, kv_heads, device=device)
        self.norm2 = nn.RMSNorm(d, device=device)
        self.gate = nn.Linear(d, ffn, bias=False, device=device)
        self.up = nn.Linear(d, ffn, bias=False, device=device)
        self.down = nn.Linear(ffn, d, bias=False, device=device)

    def forward(self, x, pos, cache, layer, causal, explicit, probe):
        x = x + self.attn(self.norm1(x), pos, cache, layer, causal, explicit, probe)
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    """Llama-shaped: token embedding, RoPE, pre-norm blocks with SwiGLU, an untied LM head."""

    def __init__(self, vocab=128, d=64, heads=4, kv_heads=None, layers=2, ffn=128, device=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, d, device=device)
        self.blocks = nn.ModuleList(Block(d, heads, kv_heads or heads, ffn, device=device) for _ in range(layers))
        self.norm = nn.RMSNorm(d, device=device)
        self.head = nn.Linear(d, vocab, bias=False, device=device)

    def forward(self, tokens, cache=None, causal=True, explicit=False, probe=None):
        start = cache.length() if cache is not None else 0
        pos = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        x = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            x = block(x, pos, cache, i, causal, explicit, probe)
        return self.head(self.norm(x))


def tiny(device, seed=0, **kw):
    torch.manual_seed(seed)
    return Decoder(**kw).to(device).eval()


@torch.no_grad()
def generate_cached(model, prompt, n):
    """Prefill the prompt once, then one token per step against the cache."""
    cache = Cache()
    logits = model(prompt, cache)[:, -1]
    tokens, last = [], []
    for i in range(n):
        nxt = logits.argmax(-1, keepdim=True)
        tokens.append(nxt)
        last.append(logits)
        if i < n - 1:  # the last sampled token is returned, not fed back
            logits = model(nxt, cache)[:, -1]
    return torch.cat(tokens, 1), torch.stack(last, 1), cache


@torch.no_grad()
def generate_recompute(model, prompt, n):
    """No cache: every step runs the whole sequence so far through the model again."""
    seq, tokens, last = prompt, [], []
    for _ in range(n):
        logits = model(seq)[:, -1]
        nxt = logits.argmax(-1, keepdim=True)
        tokens.append(nxt)
        last.append(logits)
        seq = torch.cat((seq, nxt), 1)
    return torch.cat(tokens, 1), torch.stack(last, 1)


# --- claims ---------------------------------------------------------------------------------------

@claim("kvcache.matches-recompute", kind="measured", question=Q,
       statement="在一个 {layers} 层、{heads} 个头的小解码器上，先把 {prompt_len} 个 token 的提示词 prefill 进缓存、"
                 "再逐个解码 {n_new} 个 token，生成的 token 与每一步都把整段序列重算一遍{tokens_equal:?完全相同|不同}，"
                 "两边每步 logits 的最大差是 {max_logit_diff:.1e}：缓存只省计算，不改结果，差别只来自浮点累加顺序。",
       expect={"tokens_equal": True, "max_logit_diff": {"<": 1e-4}, "layers": 2, "heads": 4})
def _(ctx):
    model = tiny(ctx.device)
    torch.manual_seed(1)
    prompt = torch.randint(0, 128, (2, 12), device=ctx.device)
    a, la, _ = generate_cached(model, prompt, 16)
    b, lb = generate_recompute(model, prompt, 16)
    return {"tokens_equal": torch.equal(a, b), "max_logit_diff": (la - lb).abs().max().item(),
            "bitwise_equal_logits": torch.equal(la, lb), "layers": len(model.blocks),
            "heads": model.blocks[0].attn.heads, "prompt_len": prompt.shape[1], "n_new": a.shape[1],
            "tokens": a[0].tolist()}


def _prefix_kv_drift(model, seq, causal):
    """Max change of each layer's K/V at positions 0..T-2 when the sequence grows by one token."""
    short, full = [], []
    with torch.no_grad():
        model(seq[:, :-1], causal=causal, probe=short)
        model(seq, causal=causal, probe=full)
    drift = []
    for (ks, vs), (kf, vf) in zip(short, full):
        n = ks.shape[2]
        drift.append(max((ks - kf[:, :, :n]).abs().max().item(), (vs - vf[:, :, :n]).abs().max().item()))
    return drift


@claim("kvcache.causal-prefix-fixed", question=Q,
       statement="K、V 能缓存，靠的是因果掩码：位置 i 的隐状态只看 0..i，所以序列变长时，前缀位置在每一层的 K、V "
                 "都不变。给 {prefix_len} 个 token 追加 1 个、再整段重算，{layers} 层里前缀 K、V 的最大变化分别是 "
                 "{drift}。",
       expect={"all_fixed": True, "layers": 2})
def _(ctx):
    model = tiny(ctx.device)
    torch.manual_seed(2)
    seq = torch.randint(0, 128, (1, 17), device=ctx.device)
    drift = _prefix_kv_drift(model, seq, causal=True)
    return {"drift": [float(f"{d:.1e}") for d in drift], "all_fixed": max(drift) < 1e-5, "layers": len(drift),
            "prefix_len": seq.shape[1] - 1}


@claim("kvcache.bidirectional-prefix-moves", question=Q,
       statement="把同一个模型的因果掩码去掉（像 BERT 那样双向注意力），追加一个 token 后，第 1 层前缀的 K、V "
                 "仍然不变（最大变化 {drift.layer1:.1e}，它们只由各自的 token embedding 算出），第 2 层起就变了"
                 "（{drift.layer2:.3f}）：后来的 token 改写了前面位置的隐状态，旧缓存作废，编码器模型没法这样缓存。",
       expect={"first_layer_fixed": True, "second_layer_moves": True})
def _(ctx):
    model = tiny(ctx.device)
    torch.manual_seed(2)
    seq = torch.randint(0, 128, (1, 17), device=ctx.device)
    drift = _prefix_kv_drift(model, seq, causal=False)
    return {"drift": {f"layer{i + 1}": d for i, d in enumerate(drift)}, "first_layer_fixed": drift[0] < 1e-5,
            "second_layer_moves": drift[1] > 1e-3}


@claim("kvcache.q-only-current", question=Q,
       statement="为什么不缓存 Q：对一层因果注意力，让最后一个位置的输出对 Q、K、V 求梯度，{seq_len} 个位置里 "
                 "Q 的梯度只有 {q_rows} 行非零（就是当前位置），K 和 V 各有 {k_rows}、{v_rows} 行非零：这一步只用到"
                 "当前 token 的 q，却要用到全部历史的 k、v；历史的 q 以后再也不会被用到。",
       expect={"q_rows": 1, "k_rows": 10, "v_rows": 10, "q_row_is_last": True, "seq_len": 10})
def _(ctx):
    torch.manual_seed(3)
    q, k, v = (torch.randn(1, 2, 10, 16, device=ctx.device, requires_grad=True) for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out[:, :, -1].sum().backward()

    def rows(g):
        return (g.abs().sum(dim=(0, 1, 3)) != 0).nonzero().flatten().tolist()

    qr = rows(q.grad)
    return {"q_rows": len(qr), "k_rows": len(rows(k.grad)), "v_rows": len(rows(v.grad)), "q_row_is_last": qr == [9],
            "seq_len": q.shape[2]}


@claim("kvcache.is-causal-trap", kind="measured", question=Q,
       statement="解码一步时不能照搬 prefill 的 `is_causal=True`：SDPA 对非方阵按左上角对齐因果掩码，长度 1 的查询"
                 "面对 {cache_len} 个缓存的 key 时只看得见第 0 个，输出{equals_v0:?恰好等于|不等于} `v[..., 0, :]`，与正确"
                 "结果的最大差是 {max_diff:.2f}；正确的做法是这一步不加掩码（当前 token 本来就该看见全部历史）。",
       expect={"equals_v0": True, "max_diff": {">": 0.1}})
def _(ctx):
    torch.manual_seed(4)
    q = torch.randn(1, 4, 1, 16, device=ctx.device)
    k, v = torch.randn(1, 4, 9, 16, device=ctx.device), torch.randn(1, 4, 9, 16, device=ctx.device)
    wrong = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    right = F.scaled_dot_product_attention(q, k, v)
    return {"equals_v0": torch.allclose(wrong, v[:, :, :1], atol=1e-6, rtol=0),
            "max_diff": (wrong - right).abs().max().item(), "cache_len": k.shape[2]}


@claim("kvcache.cache-bytes", question=Q,
       statement="缓存里就是每层一对张量：batch {batch}、{prompt_len} 个提示 token 之后又喂进 {fed} 个新 token，每层的 "
                 "K 形状是 {k_shape}（batch, KV 头数, 长度, head_dim），{layers} 层 K、V 的存储合计 {cache_bytes:bytes}，"
                 "正好等于 2（K、V 各一份）乘以层数、batch、KV 头数、长度、head_dim 和每元素字节数（{dtype} 每元素 {elem} 字节）。",
       expect={"matches_formula": True, "k_shape": [2, 4, 27, 16], "cache_bytes": 2 * 2 * 2 * 4 * 27 * 16 * 4,
               "elem": 4})
def _(ctx):
    model = tiny(ctx.device)
    torch.manual_seed(1)
    prompt = torch.randint(0, 128, (2, 12), device=ctx.device)
    _, _, cache = generate_cached(model, prompt, 16)
    b, h, t, dh = cache.k[0].shape
    layers = len(cache.k)
    formula = 2 * layers * b * h * t * dh * cache.k[0].element_size()
    return {"k_shape": [b, h, t, dh], "layers": layers, "cache_bytes": cache.nbytes(), "formula": formula,
            "matches_formula": cache.nbytes() == formula, "batch": b, "prompt_len": prompt.shape[1],
            "fed": t - prompt.shape[1], "dtype": str(cache.k[0].dtype).replace("torch.", ""),
            "elem": cache.k[0].element_size()}


@claim("kvcache.speedup", question=Q, kind="perf",
       statement="在 CPU 上（单线程），同一个 {layers} 层、宽 {d_model} 的模型从 {prompt_len} 个 token 的提示词生成 {n_new} 个 token："
                 "带缓存要 {timings.cached}，每步整段重算要 {timings.recompute}，带缓存快 {speedup:x}。",
       expect={"speedup": {">=": 2.0}, "tokens_equal": True})
def _(ctx):
    # Recompute pushes ~prompt_len times the tokens through every weight matrix at each step; the
    # cached step pushes one. That FLOP gap (two orders of magnitude here) is why >= 2 holds on any
    # CPU. CPU on purpose: on a GPU a model this small is bound by kernel launches, not FLOPs.
    model = tiny("cpu", vocab=256, d=256, heads=4, layers=2, ffn=512)
    torch.manual_seed(5)
    prompt = torch.randint(0, 256, (1, 192))
    n = 24
    a, _, _ = generate_cached(model, prompt, n)
    b, _ = generate_recompute(model, prompt, n)
    with single_thread():
        t = timing.compare({"cached": lambda: generate_cached(model, prompt, n),
                            "recompute": lambda: generate_recompute(model, prompt, n)},
                           rounds=5, warmup=1)
    return {"timings": t, "speedup": timing.ratio(t, "recompute", "cached"), "tokens_equal": torch.equal(a, b),
            "layers": 2, "d_model": 256, "prompt_len": prompt.shape[1], "n_new": n}


# --- a Llama-2-7B skeleton on the meta device: real module shapes, no memory, no weights ----------

LLAMA7B = {"vocab": 32000, "d": 4096, "heads": 32, "layers": 32, "ffn": 11008}


def llama7b(kv_heads=None):
    return Decoder(kv_heads=kv_heads, device="meta", **LLAMA7B).to(torch.float16).eval()


def meta_cache(model, batch, length):
    """A cache already holding ``length`` positions, as meta tensors of the model's shapes."""
    cache = Cache()
    for i, block in enumerate(model.blocks):
        a = block.attn
        shape = (batch, a.kv_heads, length, a.dh)
        cache.update(i, torch.empty(shape, device="meta", dtype=torch.float16),
                     torch.empty(shape, device="meta", dtype=torch.float16))
    return cache


@claim("kvcache.llama7b-budget", question=Q,
       statement="按 Llama-2-7B 的形状（{layers} 层、{kv_heads} 个 KV 头、head_dim {head_dim}）在 meta 设备上搭出骨架，"
                 "它有 {params:,} 个参数，FP16 权重 {weight_bytes:bytes}；把 {=4096} 个 token 的提示词 prefill 进缓存后，"
                 "缓存张量合计 {seq_bytes:bytes}，每个 token {per_token:bytes}。batch 到 {batch_exceeds} 时，"
                 "这样长度的 KV cache 就超过了权重本身。",
       expect={"params": 6738415616, "per_token": 524288, "seq_bytes": 4096 * 524288, "batch_exceeds": 7,
               "layers": 32, "kv_heads": 32, "head_dim": 128})
def _(ctx):
    model = llama7b()
    params = sum(p.numel() for p in model.parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    cache = Cache()
    with torch.no_grad():
        model(torch.zeros(1, 4096, dtype=torch.long, device="meta"), cache, explicit=True)
    seq_bytes = cache.nbytes()
    return {"params": params, "weight_bytes": weight_bytes, "seq_bytes": seq_bytes, "per_token": seq_bytes // 4096,
            "batch_exceeds": -(-weight_bytes // seq_bytes), "layers": len(cache.k), "kv_heads": cache.k[0].shape[1],
            "head_dim": cache.k[0].shape[3], "k_shape": list(cache.k[0].shape), "dtype": str(cache.k[0].dtype)}


def _step_flops(model, context, batch=1):
    """FLOPs of one cached decode step at ``context`` past positions: (weight matmuls, attention matmuls)."""
    from torch.utils.flop_counter import FlopCounterMode  # noqa: PLC0415

    cache = meta_cache(model, batch, context)
    tok = torch.zeros(batch, 1, dtype=torch.long, device="meta")
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(tok, cache, explicit=True)
    counts = fc.get_flop_counts()["Global"]
    by = {str(op).split(".")[-1]: n for op, n in counts.items()}
    return by.get("mm", 0), by.get("bmm", 0)


@claim("kvcache.step-flops-grow", question=Q,
       statement="用 `FlopCounterMode` 数这个骨架带缓存解码一步的 FLOPs：权重矩阵乘每步都是 {weights_gflop:.1f} GFLOP，"
                 "与上下文长度无关；注意力的两次矩阵乘（QKᵀ 与 PV）却随上下文线性增长，上下文 {=4096} 时是 "
                 "{attn_4k_gflop:.2f} GFLOP（占一步的 {share_4k:pct}），{=32768} 时是 {attn_32k_gflop:.1f} GFLOP"
                 "（占 {share_32k:pct}），已经超过全部权重矩阵乘。",
       expect={"weights_same": True, "attn_4k": 32 * 4 * 32 * 128 * 4097, "attn_32k": 32 * 4 * 32 * 128 * 32769,
               "weights": 2 * 6607077376, "attn_exceeds_weights_32k": True})
def _(ctx):
    model = llama7b()
    w4, a4 = _step_flops(model, 4096)
    w32, a32 = _step_flops(model, 32768)
    return {"weights": w4, "weights_same": w4 == w32, "attn_4k": a4, "attn_32k": a32,
            "weights_gflop": w4 / 1e9, "attn_4k_gflop": a4 / 1e9, "attn_32k_gflop": a32 / 1e9,
            "share_4k": a4 / (w4 + a4), "share_32k": a32 / (w32 + a32), "attn_exceeds_weights_32k": a32 > w32}


@claim("kvcache.recompute-flops", question=Q,
       statement="不带缓存，到第 {seq_len} 个位置时要把整段序列重新过一遍模型：按逐项矩阵乘计数（因果掩码遮掉的那一半"
                 "分数照算），这一步是 {recompute_tflop:.1f} TFLOP，是带缓存一步（{cached_gflop:.1f} GFLOP）的 "
                 "{ratio:x}，正好是序列长度：权重部分和注意力部分都多算了这么多倍。",
       expect={"recompute_weights": 2 * 6607077376 * 4097, "recompute_attn": 32 * 4 * 32 * 128 * 4097 * 4097,
               "ratio": {"approx": [4097, 1e-9]}, "seq_len": 4097})
def _(ctx):
    from torch.utils.flop_counter import FlopCounterMode  # noqa: PLC0415

    model = llama7b()
    w1, a1 = _step_flops(model, 4096)
    seq = torch.zeros(1, 4097, dtype=torch.long, device="meta")
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(seq, explicit=True)
    by = {str(op).split(".")[-1]: n for op, n in fc.get_flop_counts()["Global"].items()}
    full = by["mm"] + by["bmm"]
    return {"recompute_weights": by["mm"], "recompute_attn": by["bmm"], "recompute_tflop": full / 1e12,
            "cached_gflop": (w1 + a1) / 1e9, "ratio": full / (w1 + a1), "seq_len": seq.shape[1]}


@claim("kvcache.step-time-grows", question=Q, kind="perf",
       statement="计时也一样：在 CPU 上（单线程），同一个 {layers} 层、宽 {d_model} 的模型带缓存解码一步，上下文 {short} 个 token "
                 "时要 {timings.short}，{long} 个 token 时要 {timings.long}，是前者的 {growth:x}。这个倍数混着两件事："
                 "注意力把整个缓存读一遍，`torch.cat` 追加又把整个缓存读一遍、写一遍，两者都与上下文长度成正比，"
                 "这里没有拆开。",
       expect={"growth": {">=": 1.5}})
def _(ctx):
    # The long context's cache is 8 MiB of K and 8 MiB of V per layer: the step reads all of it (and
    # torch.cat writes it again), where the short one touches a few hundred KiB. The weights are
    # the same 1.6 MiB in both. CPU on purpose, as in kvcache.speedup.
    model = tiny("cpu", vocab=256, d=256, heads=4, layers=2, ffn=512)
    tok = torch.zeros(1, 1, dtype=torch.long)
    caches = {}
    for name, t in (("short", 128), ("long", 8192)):
        a = model.blocks[0].attn
        shape = (1, a.kv_heads, t, a.dh)
        caches[name] = ([torch.randn(shape) for _ in model.blocks], [torch.randn(shape) for _ in model.blocks])

    def step(name):
        cache = Cache()
        cache.k, cache.v = list(caches[name][0]), list(caches[name][1])
        with torch.no_grad():
            model(tok, cache)

    with single_thread():
        t = timing.compare({"short": lambda: step("short"), "long": lambda: step("long")}, rounds=15, warmup=3)
    return {"timings": t, "growth": timing.ratio(t, "long", "short"), "short": 128, "long": 8192, "layers": 2,
            "d_model": 256}
