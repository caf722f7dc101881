"""Prefix caching counted on a workload whose requests share a system prompt: full blocks of 16 tokens keyed
by a chained hash (a block's key holds every token before it), as vLLM's automatic prefix caching describes.
Prefill tokens computed with and without the cache, physical blocks held, and what a per-request token placed
before the shared prompt does to it. Counts, fixed seeds, no time."""

from __future__ import annotations

import random

from verify.claim import claim

Q = "inference-engine-scheduling"

BLOCK = 16
SYSTEM = 300  # tokens of the shared system prompt: 18 full blocks and 12 tokens more
N = 32
VOCAB = 32000


def prompts(header_first, seed=0):
    """N prompts: the shared system prompt and a user message of 20..200 tokens; with ``header_first`` each
    request puts 3 tokens of its own (a date, a user id) before the system prompt instead of after it."""
    rng = random.Random(seed)
    system = [rng.randrange(VOCAB) for _ in range(SYSTEM)]
    out = []
    for _ in range(N):
        header = [rng.randrange(VOCAB) for _ in range(3)]
        user = [rng.randrange(VOCAB) for _ in range(rng.randint(20, 200))]
        out.append(header + system + user if header_first else system + header + user)
    return out


def serve(reqs):
    """Requests one after another, each after the previous one's prefill: look up full blocks by chained hash
    from the start, stop at the first miss, compute the rest and cache the new full blocks."""
    cache, computed, hits, blocks = {}, 0, [], 0
    for tokens in reqs:
        parent, hit, keys = None, 0, []
        for b in range(len(tokens) // BLOCK):
            parent = hash((parent, tuple(tokens[b * BLOCK:(b + 1) * BLOCK])))
            keys.append(parent)
        for key in keys:
            if key not in cache:
                break
            hit += 1
        if hit * BLOCK == len(tokens):  # a whole prompt cached: its last token is computed anyway, for the logits
            hit -= 1
        computed += len(tokens) - hit * BLOCK
        hits.append(hit)
        for key in keys[hit:]:
            cache[key] = True
        blocks += -(-len(tokens) // BLOCK) - hit  # physical blocks this request adds: shared ones are referenced
    return {"computed": computed, "hits": hits, "blocks": blocks}


@claim("sched.prefix-cache-savings", question=Q,
       statement="{=32} 个请求共用一段 {=300} 个 token 的系统提示词，后接 {=20} 到 {=200} 个 token 的用户消息，前缀缓存按 {=16} 个 "
                 "token 一块、只缓存满块：第一个请求之后每个请求命中 {hit_blocks} 块（{hit_tokens} 个 token，系统提示词最后 "
                 "{tail} 个 token 不满一块，照样重算）。prefill 要算的 token 从 {total:,d} 个降到 {computed:,d} 个（省 {saved:pct}）；"
                 "{=32} 个请求同时驻留时，这些提示词占的物理块从 {blocks_plain:,d} 个降到 {blocks_cached:,d} 个。",
       expect={"hit_blocks": 18, "hit_tokens": 288, "tail": 12, "later_all_hit": True, "saved": {"approx": [0.6959, 0.001]}})
def _(ctx):
    """范围：块数模拟（16 token 一块）"""
    reqs = prompts(header_first=False)
    plain = serve([[i * 10 ** 6 + t for t in r] for i, r in enumerate(reqs)])  # every request distinct: no hit
    run = serve(reqs)
    total = sum(len(r) for r in reqs)
    return {"hit_blocks": run["hits"][1], "hit_tokens": run["hits"][1] * BLOCK, "tail": SYSTEM % BLOCK,
            "later_all_hit": all(h == SYSTEM // BLOCK for h in run["hits"][1:]), "total": total,
            "computed": run["computed"], "saved": 1 - run["computed"] / total, "plain_computed": plain["computed"],
            "blocks_plain": plain["blocks"], "blocks_cached": run["blocks"]}


@claim("sched.prefix-cache-header-first", question=Q,
       statement="同样 {=32} 个请求，只把每个请求自己的 {=3} 个 token（日期、用户 id）从系统提示词之后挪到它之前：命中的块数从 "
                 "{after_hits_total} 变成 {before_hits_total}，prefill 要算的 token 从 {after_computed:,d} 变回 {before_computed:,d}"
                 "（全部重算）。链式哈希让第一块不同的提示词之后每一块都不同，系统提示词内容再一样也用不上缓存。",
       expect={"before_hits_total": 0, "after_hits_total": 558, "before_is_all": True})
def _(ctx):
    """范围：块数模拟（16 token 一块）"""
    out = {}
    for name, first in (("after", False), ("before", True)):
        reqs = prompts(header_first=first)
        run = serve(reqs)
        out |= {f"{name}_hits_total": sum(run["hits"]), f"{name}_computed": run["computed"],
                f"{name}_total": sum(len(r) for r in reqs)}
    out["before_is_all"] = out["before_computed"] == out["before_total"]
    return out
