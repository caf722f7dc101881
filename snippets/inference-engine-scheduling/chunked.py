"""Chunked prefill in a step-by-step scheduler: a few long prompts arrive while a batch is decoding. Without
chunking a prompt is prefilled whole in a step of its own and every running decode waits that step; with a token
budget per step (decodes first, prompt chunks in what is left) no step holds more than the budget and no decode
waits. Counts of tokens and steps, no time."""

from __future__ import annotations

import math

from verify.claim import claim

Q = "inference-engine-scheduling"

BUDGET = 512  # max_num_batched_tokens: tokens one step may hold
DECODING, DECODE_LEFT = 12, 300  # requests already decoding at step 0, tokens each still generates
LONG = ((20, 3000, 50), (60, 1000, 50), (61, 2000, 50))  # (arrival step, prompt tokens, tokens to generate)


def simulate(chunked, budget=BUDGET):
    """Returns per-step token counts and, per request, the steps that gave it a token."""
    left = {f"d{i}": DECODE_LEFT for i in range(DECODING)}  # decoding requests: tokens still to generate
    todo = {}  # prompts being prefilled: prompt tokens not yet processed
    emitted = {r: [] for r in left} | {f"p{j}": [] for j in range(len(LONG))}
    first_chunk, last_chunk = {}, {}
    steps, shared, step = [], 0, 0
    while left or todo or step <= max(a for a, _, _ in LONG):
        for j, (arrive, prompt, _out) in enumerate(LONG):
            if arrive == step:
                todo[f"p{j}"] = prompt
        decodes, prefill = list(left), {}
        if not chunked and todo:  # prefill first, whole prompt, in a step of its own (no decode this step)
            r = next(iter(todo))
            prefill, decodes = {r: todo[r]}, []
        elif chunked:  # decodes first, then prompt chunks in the budget left over, first come first served
            room = budget - len(decodes)
            for r, n in todo.items():
                if room <= 0:
                    break
                prefill[r] = min(n, room)
                room -= prefill[r]
        for r in decodes:
            emitted[r].append(step)
            left[r] -= 1
            if left[r] == 0:
                del left[r]
        for r, n in prefill.items():
            first_chunk.setdefault(r, step)
            todo[r] -= n
            if todo[r] == 0:  # the prompt's last chunk gives its first token; it decodes from the next step
                del todo[r]
                last_chunk[r] = step
                emitted[r].append(step)
                left[r] = LONG[int(r[1:])][2] - 1
        shared += len(decodes) if prefill else 0
        steps.append(len(decodes) + sum(prefill.values()))
        step += 1
    return steps, emitted, first_chunk, last_chunk, shared


def _between(steps, emitted, who):
    """The most tokens the engine processed between two consecutive tokens of one request (the step that gave
    the later token included)."""
    worst = 0
    for r in who:
        for a, b in zip(emitted[r], emitted[r][1:]):
            worst = max(worst, sum(steps[a + 1:b + 1]))
    return worst


@claim("sched.chunked-prefill-budget", question=Q,
       statement="{=12} 个请求正在 decode，这时先后来了 {=3000}、{=1000}、{=2000} 个 token 的三段提示词。不切块、prefill 优先时，"
                 "每段提示词独占一步：最大的一步处理 {plain_max_step:,d} 个 token，有 {plain_stall_steps} 步里正在 decode 的请求"
                 "一个 token 也没出（共 {plain_stalled_slot_steps} 个请求·步），一个 decode 请求相邻两个 token 之间引擎最多处理了 "
                 "{plain_max_between:,d} 个 token。按每步 {=512} 个 token 的预算切块、decode 先排时，最大的一步是 "
                 "{chunked_max_step} 个 token，停顿 {chunked_stall_steps} 步，相邻 token 之间最多 {chunked_max_between} 个；代价是"
                 " {=3000} 个 token 的那段 prefill 摊到 {chunked_long_prefill_steps} 步（不切块时 {plain_long_prefill_steps} 步），"
                 "有 {chunked_shared:,d} 个 decode token 和 prefill 的块挤在同一步里。",
       expect={"plain_max_step": 3000, "plain_stall_steps": 3, "plain_long_prefill_steps": 1,
               "chunked_max_step": {"<=": 512}, "chunked_stall_steps": 0, "chunked_max_between": {"<=": 512},
               "chunked_long_prefill_steps": 6})
def _(ctx):
    """范围：token 数模拟，不计时间"""
    out = {}
    for name, chunked in (("plain", False), ("chunked", True)):
        steps, emitted, first, last, shared = simulate(chunked)
        decoders = [f"d{i}" for i in range(DECODING)]
        stalled = [s for s in range(len(steps)) if any(e and e[0] <= s < e[-1] and s not in set(e)
                                                       for e in (emitted[r] for r in decoders))]
        got = {"max_step": max(steps), "stall_steps": len(stalled),
                     "stalled_slot_steps": sum(sum(1 for r in decoders if emitted[r] and emitted[r][0] <= s < emitted[r][-1]
                                                   and s not in emitted[r]) for s in stalled),
                     "max_between": _between(steps, emitted, decoders), "long_prefill_steps": last["p0"] - first["p0"] + 1,
                     "shared": shared, "steps": len(steps), "tokens": sum(steps)}
        out |= {f"{name}_{k}": v for k, v in got.items()}
    out["chunk_bound"] = math.ceil(3000 / (BUDGET - DECODING))
    return out
