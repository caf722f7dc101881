"""A scheduler simulated step by step on the CPU: static (request-level) batching against continuous
(iteration-level) batching on a seeded workload, and the same workload where no request waits. One step is one
forward pass of the batch and gives every running request one token; the simulation counts steps, slots and
tokens, never time (a step's duration depends on the GPU and on what the step holds)."""

from __future__ import annotations

import random
from statistics import mean

from verify.claim import claim

Q = "inference-engine-scheduling"

SLOTS = 16  # requests a step can hold (max_num_seqs / max_batch_size)
N_REQ = 400


def workload(seed=0, n=N_REQ, gap=10.0):
    """(arrival step, tokens to generate) of ``n`` requests: exponential gaps of mean ``gap`` steps, output
    lengths exponential with mean 128 (1 to 1024 tokens): a few long answers among many short ones."""
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(n):
        t += rng.expovariate(1 / gap)
        out.append((int(t), min(1024, 1 + int(rng.expovariate(1 / 128)))))
    return out


def static_batching(reqs, slots=SLOTS):
    """Request-level batching: when the engine is idle, take up to ``slots`` waiting requests and run them until
    the longest one finishes; the slot of a request that finished early is held, padded, until then."""
    admit, finish, padded, step, i, n = {}, {}, 0, 0, 0, len(reqs)
    idle_while_waiting = 0
    while i < n:
        step = max(step, reqs[i][0])
        batch = []
        while i < n and reqs[i][0] <= step and len(batch) < slots:
            batch.append(i)
            i += 1
        longest = max(reqs[r][1] for r in batch)
        for r in batch:
            admit[r], finish[r] = step, step + reqs[r][1] - 1
        padded += sum(longest - reqs[r][1] for r in batch)
        for s in range(step, step + longest):  # slots doing no work while some request waits outside
            waiting = sum(1 for a, _ in reqs[i:] if a <= s)
            busy = sum(1 for r in batch if finish[r] >= s)
            idle_while_waiting += min(waiting, slots - busy)
        step += longest
    return {"admit": admit, "finish": finish, "padded": padded, "idle_while_waiting": idle_while_waiting,
            "batch_end": None}


def continuous_batching(reqs, slots=SLOTS):
    """Iteration-level batching: every step, waiting requests fill the slots freed by the step before."""
    admit, finish, running, step, i, n = {}, {}, {}, 0, 0, len(reqs)
    idle_while_waiting = 0
    while i < n or running:
        if not running:
            step = max(step, reqs[i][0])
        while i < n and reqs[i][0] <= step and len(running) < slots:
            admit[i], running[i] = step, reqs[i][1]
            i += 1
        waiting = sum(1 for a, _ in reqs[i:] if a <= step)
        idle_while_waiting += min(waiting, slots - len(running))
        for r in list(running):
            running[r] -= 1
            if running[r] == 0:
                finish[r] = step
                del running[r]
        step += 1
    return {"admit": admit, "finish": finish, "padded": 0, "idle_while_waiting": idle_while_waiting}


def summary(reqs, run):
    queue = [run["admit"][r] - a for r, (a, _) in enumerate(reqs)]
    latency = [run["finish"][r] - a + 1 for r, (a, _) in enumerate(reqs)]
    service = [run["finish"][r] - run["admit"][r] + 1 for r in range(len(reqs))]
    return {"steps": max(run["finish"].values()) + 1 - reqs[0][0], "queue_mean": mean(queue), "queue_max": max(queue),
            "latency_mean": mean(latency), "latency": latency, "service": service, "padded": run["padded"],
            "idle_while_waiting": run["idle_while_waiting"]}


def both(reqs, slots=SLOTS):
    return summary(reqs, static_batching(reqs, slots)), summary(reqs, continuous_batching(reqs, slots))


@claim("sched.static-vs-continuous", question=Q,
       statement="{=400} 个请求按固定种子到达（平均每 {=10} 步一个），输出长度 {=1} 到 {=1024} 个 token、平均约 {=128}，一步最多 "
                 "{=16} 个请求。静态批处理（整批跑到最长的那个结束才换下一批）要 {static_steps:,d} 步跑完，批里早结束的请求占着槽"
                 "空转了 {static_padded:,d} 个槽·步，有请求在门外等时空着（或空转）的槽·步共 {static_idle_while_waiting:,d}；"
                 "连续批处理每步把空出的槽补上，{continuous_steps:,d} 步跑完，有人等时空着的槽·步是 "
                 "{continuous_idle_while_waiting}。平均排队从 {static_queue_mean:.0f} 步降到 {continuous_queue_mean:.1f} 步，"
                 "平均延迟从 {static_latency_mean:.0f} 步降到 {continuous_latency_mean:.0f} 步；平均每步产出的 token 从 "
                 "{static_tokens_per_step:.1f} 个升到 {continuous_tokens_per_step:.1f} 个。",
       expect={"continuous_idle_while_waiting": 0, "fewer_steps": True, "queue_ratio": {"<": 0.5}})
def _(ctx):
    """范围：按步数计的调度模拟（一步给每个在跑的请求一个 token，不计 prefill，不计一步的时间）"""
    reqs = workload()
    st, co = both(reqs)
    keep = ("steps", "padded", "idle_while_waiting", "queue_mean", "queue_max", "latency_mean")
    return {**{f"static_{k}": st[k] for k in keep}, **{f"continuous_{k}": co[k] for k in keep},
            "static_tokens_per_step": sum(n for _, n in reqs) / st["steps"],
            "continuous_tokens_per_step": sum(n for _, n in reqs) / co["steps"],
            "tokens": sum(n for _, n in reqs), "fewer_steps": co["steps"] < st["steps"],
            "queue_ratio": co["queue_mean"] / st["queue_mean"]}


@claim("sched.per-request-steps-unchanged", question=Q,
       statement="同一组 {=400} 个请求：每个请求从进入 batch 到最后一个 token 用的步数，两种调度下都正好等于它要生成的 token 数"
                 "（不等的请求：静态 {static_off} 个，连续 {continuous_off} 个），逐 token 的步数一步也没少；每个请求的延迟差"
                 "{gain_is_queue:?全部|并不全}来自排队，平均少排队 {queue_gain:.0f} 步、平均延迟少 {latency_gain:.0f} 步。"
                 "没有一个请求变慢（变慢的 {slower} 个），变快的有 {faster} 个，其余 {same} 个一步不差。",
       expect={"static_off": 0, "continuous_off": 0, "gain_is_queue": True, "slower": 0, "faster": {">": 0}})
def _(ctx):
    """范围：按步数计的调度模拟（一步给每个在跑的请求一个 token，不计 prefill，不计一步的时间）"""
    reqs = workload()
    st, co = both(reqs)
    want = [n for _, n in reqs]
    diff = [a - b for a, b in zip(st["latency"], co["latency"])]
    queue_gain = st["queue_mean"] - co["queue_mean"]
    return {"static_off": sum(s != w for s, w in zip(st["service"], want)),
            "continuous_off": sum(s != w for s, w in zip(co["service"], want)),
            "gain_is_queue": all(d == (sa - sb) for d, sa, sb in
                                 zip(diff, (x - y for x, y in zip(st["latency"], st["service"])),
                                     (x - y for x, y in zip(co["latency"], co["service"])))),
            "queue_gain": queue_gain, "latency_gain": st["latency_mean"] - co["latency_mean"],
            "slower": sum(d < 0 for d in diff), "faster": sum(d > 0 for d in diff), "same": sum(d == 0 for d in diff)}


@claim("sched.no-queue-no-gain", question=Q,
       statement="没人排队时连续批处理一步也不省：同样的输出长度，(一) 每 {=1100} 步来一个请求（比最长的输出还长，前一个总已结束），"
                 "{sparse_same} / {=400} 个请求的延迟两种调度逐一相同，静态批空转 {sparse_padded} 个槽·步；(二) 一步能装下全部 "
                 "{=64} 个同时到达的请求（{=64} 个槽），{full_same} / {=64} 个逐一相同，而静态批空转了 {full_padded:,d} 个槽·步"
                 "——空转只在有人等槽时才是损失。",
       expect={"sparse_same": 400, "full_same": 64, "full_padded": {">": 0}})
def _(ctx):
    """范围：按步数计的调度模拟（一步给每个在跑的请求一个 token，不计 prefill，不计一步的时间）"""
    out = {}
    spaced = [(i * 1100, n) for i, (_, n) in enumerate(workload())]  # each arrives after the last one finished
    for name, reqs, slots in (("sparse", spaced, SLOTS),
                              ("full", [(0, n) for _, n in workload(n=64)], 64)):
        st, co = both(reqs, slots)
        out |= {f"{name}_same": sum(a == b for a, b in zip(st["latency"], co["latency"])), f"{name}_padded": st["padded"],
                f"{name}_queue_static": st["queue_mean"], f"{name}_queue_continuous": co["queue_mean"]}
    return out
