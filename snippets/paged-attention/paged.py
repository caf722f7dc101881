"""A block-table KV cache on the CPU (block size 16): attention read through the block table against a
contiguous cache, the memory a request mix wastes with and without paging, copy-on-write sharing of a
prompt, vLLM-style prefix hashing of full blocks, and split-KV (Flash-Decoding) merged by the
online-softmax rule. Counts and exact comparisons, fixed seeds, no timings."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from verify.claim import claim

Q = "paged-attention"

BLOCK = 16  # tokens per block (vLLM's default block size)
H, DH = 4, 32  # heads and head_dim of the toy cache
FP32 = 4


class BlockPool:
    """Physical K/V blocks, a free list, and a reference count per block."""

    def __init__(self, num_blocks, seed=0):
        self.k = torch.zeros(num_blocks, BLOCK, H, DH)
        self.v = torch.zeros(num_blocks, BLOCK, H, DH)
        order = torch.randperm(num_blocks, generator=torch.Generator().manual_seed(seed)).tolist()
        self.free = order  # handed out in a shuffled order: a sequence's blocks are not adjacent
        self.ref = [0] * num_blocks
        self.copies = 0

    def alloc(self):
        b = self.free.pop()
        self.ref[b] = 1
        return b

    def release(self, b):
        self.ref[b] -= 1
        if self.ref[b] == 0:
            self.free.append(b)

    def in_use(self):
        return sum(r > 0 for r in self.ref)

    def block_bytes(self):
        return 2 * BLOCK * H * DH * FP32  # K and V


class Sequence:
    def __init__(self, pool):
        self.pool, self.table, self.length = pool, [], 0

    def fork(self):
        """A second sequence on the same blocks (parallel sampling): no copy, reference counts go up."""
        child = Sequence(self.pool)
        child.table, child.length = list(self.table), self.length
        for b in self.table:
            self.pool.ref[b] += 1
        return child

    def append(self, k, v):
        """Write one token's K/V (H, DH) at slot = table[pos // BLOCK] * BLOCK + pos % BLOCK."""
        pool, off = self.pool, self.length % BLOCK
        if off == 0:
            self.table.append(pool.alloc())
        elif pool.ref[self.table[-1]] > 1:  # copy-on-write: the last block is shared, copy it first
            old, new = self.table[-1], pool.alloc()
            pool.k[new].copy_(pool.k[old])
            pool.v[new].copy_(pool.v[old])
            pool.release(old)
            self.table[-1] = new
            pool.copies += 1
        b = self.table[-1]
        pool.k[b, off] = k
        pool.v[b, off] = v
        self.length += 1

    def gather(self):
        """K, V as (H, length, DH), read through the block table."""
        idx = torch.tensor(self.table)
        k = self.pool.k[idx].reshape(-1, H, DH)[: self.length]
        v = self.pool.v[idx].reshape(-1, H, DH)[: self.length]
        return k.transpose(0, 1), v.transpose(0, 1)


def decode(q, k, v):
    """One query token (H, DH) against K, V (H, L, DH)."""
    return F.scaled_dot_product_attention(q[:, None], k, v)[:, 0]


LENGTHS = (37, 16, 5, 70)


def _fill(lengths, seed=0):
    """Append the sequences' tokens round-robin (so their blocks interleave in the pool); keep contiguous copies."""
    gen = torch.Generator().manual_seed(seed)
    pool = BlockPool(64)
    seqs = [Sequence(pool) for _ in lengths]
    ks = [torch.randn(n, H, DH, generator=gen) for n in lengths]
    vs = [torch.randn(n, H, DH, generator=gen) for n in lengths]
    for t in range(max(lengths)):
        for s, n, k, v in zip(seqs, lengths, ks, vs):
            if t < n:
                s.append(k[t], v[t])
    qs = [torch.randn(H, DH, generator=gen) for _ in lengths]
    return pool, seqs, ks, vs, qs


@claim("paged.block-table-equals-contiguous", question=Q,
       statement="块大小 {=16}，{=4} 条长度 {=37}、{=16}、{=5}、{=70} 的序列轮流往同一个块池里写（空闲块按打乱的顺序发），"
                 "第一条的块表是 {table0}，物理上并不相邻；按块表 gather 出 K、V 再做 SDPA，与连续缓存上的 SDPA "
                 "{bitwise:?逐位相同|有差别}（最大差 {max_diff}）。这 {=4} 条序列一共占 {blocks} 个块，最后一块平均空着 "
                 "{avg_waste:.2f} 个位置，每条至多空 {=15} 个。",
       expect={"bitwise": True, "max_diff": 0.0, "blocks": 3 + 1 + 1 + 5, "max_waste": {"<=": 15}})
def _(ctx):
    torch.set_num_threads(1)
    pool, seqs, ks, vs, qs = _fill(LENGTHS)
    diffs, same = [], True
    for s, k, v, q in zip(seqs, ks, vs, qs):
        kp, vp = s.gather()
        paged = decode(q, kp, vp)
        contiguous = decode(q, k.transpose(0, 1).contiguous(), v.transpose(0, 1).contiguous())
        same = same and torch.equal(paged, contiguous)
        diffs.append((paged - contiguous).abs().max().item())
    waste = [len(s.table) * BLOCK - s.length for s in seqs]
    return {"table0": seqs[0].table, "bitwise": same, "max_diff": max(diffs), "blocks": pool.in_use(),
            "avg_waste": sum(waste) / len(waste), "max_waste": max(waste)}


@claim("paged.same-flops", question=Q,
       statement="分页不改变计算：同样 {=4} 条序列的解码注意力，FlopCounterMode 数到的 FLOPs "
                 "按块表读是 {flops_paged:,d}，读连续缓存是 {flops_contiguous:,d}；读的 K/V 元素也一样多（{kv_bytes:,d} 字节，fp32），"
                 "分页多读的只是块表本身（int32，每块 {=4} 字节，共 {table_bytes} 字节）。",
       expect={"same": True, "table_bytes": (3 + 1 + 1 + 5) * 4})
def _(ctx):
    torch.set_num_threads(1)
    pool, seqs, ks, vs, qs = _fill(LENGTHS)
    counts = {}
    for name in ("paged", "contiguous"):
        with FlopCounterMode(display=False) as fc:
            for s, k, v, q in zip(seqs, ks, vs, qs):
                if name == "paged":
                    kk, vv = s.gather()
                else:
                    kk, vv = k.transpose(0, 1), v.transpose(0, 1)
                decode(q, kk, vv)
        counts[name] = fc.get_total_flops()
    kv_bytes = sum(2 * n * H * DH * FP32 for n in LENGTHS)
    return {"flops_paged": counts["paged"], "flops_contiguous": counts["contiguous"],
            "same": counts["paged"] == counts["contiguous"], "kv_bytes": kv_bytes,
            "table_bytes": sum(len(s.table) for s in seqs) * 4}


MAX_LEN, N_REQ = 2048, 256  # the model's context length; requests in the mix


def request_mix(seed=0):
    """Prompt and output lengths of N_REQ requests, each uniform in [16, 1024]: final lengths up to MAX_LEN."""
    gen = torch.Generator().manual_seed(seed)
    prompt = torch.randint(16, 1025, (N_REQ,), generator=gen)
    output = torch.randint(16, 1025, (N_REQ,), generator=gen)
    return (prompt + output).tolist()


@claim("paged.fragmentation", question=Q,
       statement="{=256} 个请求，提示词和输出长度各在 {=16} 到 {=1024} 之间均匀随机（固定种子），模型上下文 {=2048}。"
                 "按最大长度给每个请求预留，预留的 token 位里只有 {used_prealloc:pct} 真正用上；按 {=16} 个 token "
                 "一块分配，用上的是 {used_paged:pct}，每条序列最多浪费 {max_waste} 个位置（不超过块大小减一）。"
                 "同样装下这些请求，预留要 {ratio:.2f} 倍于分页的显存。",
       expect={"max_waste": {"<=": 15}, "used_paged": {">": 0.98}, "used_prealloc": {"<": 0.6}})
def _(ctx):
    lengths = request_mix()
    used = sum(lengths)
    prealloc = N_REQ * MAX_LEN
    paged = sum(math.ceil(n / BLOCK) * BLOCK for n in lengths)
    return {"used_prealloc": used / prealloc, "used_paged": used / paged,
            "max_waste": max(math.ceil(n / BLOCK) * BLOCK - n for n in lengths), "ratio": prealloc / paged}


PROMPT = 40  # tokens of the shared prompt: two full blocks and 8 tokens in a third


@claim("paged.copy-on-write", question=Q,
       statement="写时复制：一条 {=40} 个 token 的提示词占 {blocks_prompt} 个块（两个满块加一个写了 {=8} 个位置的块）；"
                 "并行采样 fork 出第二条序列时不拷贝任何数据，两条共用这些块，引用计数是 {ref_after_fork}，物理块仍是 "
                 "{blocks_after_fork} 个（各存一份要 {blocks_unshared} 个）。第二条序列写第一个新 token 时，最后那个共享块"
                 "被复制一次（{copied_bytes:,d} 字节），引用计数变成 {ref_after_write}；第一条随后写入时那一块已只属于它，"
                 "不再复制，复制总次数 {copies}。两条各自再生成 {=30} 个 token 后，按块表读出的注意力与各自的连续缓存"
                 "{equal:?逐位相同|不同}，共 {blocks_final} 个物理块。",
       expect={"blocks_prompt": 3, "blocks_after_fork": 3, "blocks_unshared": 6, "copies": 1,
               "ref_after_fork": [2, 2, 2], "ref_after_write": [2, 2, 1, 1], "equal": True})
def _(ctx):
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(3)
    pool = BlockPool(32)
    a = Sequence(pool)
    prompt_k, prompt_v = torch.randn(PROMPT, H, DH, generator=gen), torch.randn(PROMPT, H, DH, generator=gen)
    for t in range(PROMPT):
        a.append(prompt_k[t], prompt_v[t])
    blocks_prompt = pool.in_use()
    b = a.fork()
    ref_after_fork = [pool.ref[x] for x in a.table]
    blocks_after_fork = pool.in_use()
    conts = {"a": [prompt_k, prompt_v], "b": [prompt_k.clone(), prompt_v.clone()]}
    out = {}
    for step in range(31):  # b writes first, then a; each a different token
        for name, seq in (("b", b), ("a", a)):
            k, v = torch.randn(H, DH, generator=gen), torch.randn(H, DH, generator=gen)
            seq.append(k, v)
            conts[name] = [torch.cat((conts[name][0], k[None])), torch.cat((conts[name][1], v[None]))]
            if step == 0 and name == "b":
                out["copied_bytes"] = pool.copies * pool.block_bytes()
                out["ref_after_write"] = [pool.ref[x] for x in a.table] + [pool.ref[b.table[-1]]]
    q = torch.randn(H, DH, generator=gen)
    equal = all(torch.equal(decode(q, *seq.gather()),
                            decode(q, conts[n][0].transpose(0, 1).contiguous(), conts[n][1].transpose(0, 1).contiguous()))
                for n, seq in (("a", a), ("b", b)))
    out.update(blocks_prompt=blocks_prompt, ref_after_fork=ref_after_fork, blocks_after_fork=blocks_after_fork,
               blocks_unshared=2 * blocks_prompt, copies=pool.copies, equal=equal, blocks_final=pool.in_use())
    return out


def block_hashes(tokens):
    """vLLM-style prefix-cache keys: one per FULL block, each chained on the hash of the block before it."""
    out, parent = [], None
    for i in range(len(tokens) // BLOCK):
        parent = hash((parent, tuple(tokens[i * BLOCK:(i + 1) * BLOCK])))
        out.append(parent)
    return out


@claim("paged.prefix-hash", question=Q,
       statement="前缀缓存按满块的哈希命中（哈希链上前面所有块）：两个请求共用同一段 {=40} 个 token 的系统提示词、"
                 "后面各接不同的问题，第二个请求命中 {hit_same} 个块、复用 {hit_tokens} 个 token 的 K/V，"
                 "提示词剩下的 {left} 个 token 落在没写满的块里，要重算；第三个请求只在第 {=5} 个 token 上不同，"
                 "命中 {hit_diff_early} 个块：一个 token 不同，之后所有块的哈希都变了。",
       expect={"hit_same": 2, "hit_tokens": 32, "left": 8, "hit_diff_early": 0})
def _(ctx):
    gen = torch.Generator().manual_seed(5)
    system = torch.randint(0, 32000, (PROMPT,), generator=gen).tolist()
    r1 = system + torch.randint(0, 32000, (25,), generator=gen).tolist()
    r2 = system + torch.randint(0, 32000, (30,), generator=gen).tolist()
    r3 = list(r2)
    r3[4] += 1  # the 5th token differs
    cached = set(block_hashes(r1))

    def hits(req):
        n = 0
        for h in block_hashes(req):
            if h not in cached:
                break
            n += 1
        return n

    return {"hit_same": hits(r2), "hit_tokens": hits(r2) * BLOCK, "left": PROMPT - hits(r2) * BLOCK,
            "hit_diff_early": hits(r3)}


CTX_SPLIT, SPLIT, HQ, DQ = 1000, 256, 8, 64  # keys, keys per split, heads, head_dim


@claim("paged.split-kv-merge", kind="measured", question=Q,
       statement="Flash-Decoding：一个查询 token（{=8} 个头、head_dim {=64}）对 {=1000} 个 key，按每段 {=256} 个切成 "
                 "{splits} 段各自算（最后一段不满），每段只留下局部输出和它的 log-sum-exp；按 online softmax 的规则合并"
                 "（每段输出乘 exp(lse_j − lse)，lse 是各段 lse 的 logsumexp）后与整段 SDPA 最大差 {max_diff:.1e}；"
                 "把各段输出直接平均则差 {naive_diff:.2f}。",
       expect={"splits": 4, "max_diff": {"<": 1e-5}, "naive_diff": {">": 0.01}})
def _(ctx):
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(7)
    q = torch.randn(HQ, 1, DQ, generator=gen)
    k = torch.randn(HQ, CTX_SPLIT, DQ, generator=gen)
    v = torch.randn(HQ, CTX_SPLIT, DQ, generator=gen)
    ref = F.scaled_dot_product_attention(q, k, v)
    outs, lses = [], []
    for start in range(0, CTX_SPLIT, SPLIT):
        s = (q @ k[:, start:start + SPLIT].transpose(-1, -2)) * DQ ** -0.5  # (H, 1, n)
        lse = torch.logsumexp(s, dim=-1, keepdim=True)
        outs.append(torch.exp(s - lse) @ v[:, start:start + SPLIT])
        lses.append(lse)
    lse_all = torch.logsumexp(torch.cat(lses, -1), dim=-1, keepdim=True)
    merged = sum(torch.exp(lse - lse_all) * o for lse, o in zip(lses, outs))
    naive = sum(outs) / len(outs)
    return {"splits": len(outs), "max_diff": (merged - ref).abs().max().item(),
            "naive_diff": (naive - ref).abs().max().item()}
