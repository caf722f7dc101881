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


def static_batching(reqs, slots=SLOTS, return_at_batch_end=False):
    """Request-level batching: when the engine is idle, take up to ``slots`` waiting requests and run them until
    the longest one finishes; the slot of a request that finished early is held, padded, until then. A request
    counts as finished on its own last token (streamed), or with ``return_at_batch_end`` when its batch ends."""
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
            admit[r], finish[r] = step, step + (longest if return_at_batch_end else reqs[r][1]) - 1
        padded += sum(longest - reqs[r][1] for r in batch)
        for s in range(step, step + longest):  # slots doing no work while some request waits outside
            waiting = sum(1 for a, _ in reqs[i:] if a <= s)
            busy = sum(1 for r in batch if admit[r] + reqs[r][1] > s)
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
    quarter = len(reqs) // 4
    latency = [run["finish"][r] - a + 1 for r, (a, _) in enumerate(reqs)]
    service = [run["finish"][r] - run["admit"][r] + 1 for r in range(len(reqs))]
    return {"steps": max(run["finish"].values()) + 1 - reqs[0][0], "queue_mean": mean(queue), "queue_max": max(queue),
            "latency_mean": mean(latency), "latency": latency, "service": service, "padded": run["padded"],
            "idle_while_waiting": run["idle_while_waiting"],
            "queue_quarters": [mean(queue[i:i + quarter]) for i in range(0, 4 * quarter, quarter)],
            "tokens_per_step": sum(n for _, n in reqs) / (max(run["finish"].values()) + 1 - reqs[0][0])}


def load(reqs, st, co):
    """What arrives and what each scheduler serves, in tokens per step, and whether the queue grows: the mean
    queue of each quarter of the requests, in arrival order, larger than the quarter before."""
    arrival = sum(n for _, n in reqs) / (reqs[-1][0] - reqs[0][0])
    out = {"arrival_tokens_per_step": arrival}
    for name, run in (("static", st), ("continuous", co)):
        q = run["queue_quarters"]
        out |= {f"{name}_tokens_per_step": run["tokens_per_step"], f"{name}_queue_q1": q[0], f"{name}_queue_q4": q[-1],
                f"{name}_queue_growing": all(b > a for a, b in zip(q, q[1:])), f"{name}_queue_mean": run["queue_mean"],
                f"{name}_queue_max": run["queue_max"], f"{name}_steps": run["steps"]}
    return out


def both(reqs, slots=SLOTS):
    return summary(reqs, static_batching(reqs, slots)), summary(reqs, continuous_batching(reqs, slots))


@claim("sched.static-vs-continuous", question=Q,
       statement="{=400} 个请求按固定种子到达（平均每 {=10} 步一个），输出长度 {=1} 到 {=1024} 个 token、平均约 {=128}，一步最多 "
                 "{=16} 个请求；到达的 token 平均每步 {arrival_tokens_per_step:.1f} 个。静态批处理（整批跑到最长的那个结束才换下"
                 "一批）平均每步只送出 {static_tokens_per_step:.1f} 个：批里早结束的请求占着槽空转 {static_padded:,d} 个槽·步，"
                 "排队{static_queue_growing:?随请求数增长|不随请求数增长}（按到达顺序，前 {=100} 个请求平均排 {static_queue_q1:,.0f} 步，最后 {=100} 个 "
                 "{static_queue_q4:,.0f} 步，最长 {static_queue_max:,d} 步），{static_steps:,d} 步跑完。连续批处理每步把空出的槽"
                 "补上，平均每步送出 {continuous_tokens_per_step:.1f} 个（含最后几个长请求收尾的步），有人等时空着的槽·步是 {continuous_idle_while_waiting}（静态批 "
                 "{static_idle_while_waiting:,d}），平均排队 {continuous_queue_mean:.1f} 步、最长 {continuous_queue_max} 步，"
                 "{continuous_steps:,d} 步跑完。",
       expect={"continuous_idle_while_waiting": 0, "static_queue_growing": True, "continuous_queue_growing": False,
               "fewer_steps": True, "served_ratio": {"<": 0.5}})
def _(ctx):
    """范围：步数模拟，不计 prefill 与时间"""
    reqs = workload()
    st, co = both(reqs)
    out = load(reqs, st, co)
    return {**out, "static_padded": st["padded"], "static_idle_while_waiting": st["idle_while_waiting"],
            "continuous_idle_while_waiting": co["idle_while_waiting"], "fewer_steps": co["steps"] < st["steps"],
            "served_ratio": st["tokens_per_step"] / out["arrival_tokens_per_step"]}


@claim("sched.both-keep-up", question=Q,
       statement="同样的输出长度，到达放慢到平均每 {=40} 步一个（到达的 token 平均每步 {arrival_tokens_per_step:.2f} 个）："
                 "{kept_up:?两种调度都跟得上|有一种跟不上}，平均每步送出 {static_tokens_per_step:.2f} 和 {continuous_tokens_per_step:.2f} 个，排队"
                 "{static_queue_growing:?仍随请求数增长|不再随请求数增长}（静态批前 {=100} 个请求平均排 {static_queue_q1:.0f} 步，"
                 "最后 {=100} 个 {static_queue_q4:.0f} 步）。但静态批里新来的请求仍要等当前整批结束：平均排队 "
                 "{static_queue_mean:.0f} 步、最长 {static_queue_max} 步；连续批处理平均 {continuous_queue_mean:.0f} 步。",
       expect={"static_queue_growing": False, "continuous_queue_max": 0, "static_queue_mean": {">": 100},
               "kept_up": True})
def _(ctx):
    """范围：步数模拟，不计 prefill 与时间"""
    reqs = workload(gap=40.0)
    st, co = both(reqs)
    out = load(reqs, st, co)
    out["kept_up"] = all(out[f"{k}_tokens_per_step"] > 0.95 * out["arrival_tokens_per_step"] for k in ("static", "continuous"))
    return out


@claim("sched.per-request-steps-unchanged", question=Q,
       statement="按这个模型的定义，一个请求进了 batch 以后每步出一个 token，所以它从进 batch 到最后一个 token 的步数两种调度下都"
                 "等于它的 token 数（这是模型的前提：不等的请求静态 {static_off} 个、连续 {continuous_off} 个），同一组 {=400} 个"
                 "请求的延迟差就是排队差：平均少排队 {queue_gain:.0f} 步、平均延迟少 {latency_gain:.0f} 步，变慢的 {slower} 个，"
                 "变快的 {faster} 个，其余 {same} 个一步不差（模型里不计 prefill，静态批里早结束的请求当步返回）。若静态批的请求"
                 "要等整批结束才返回（非流式），{held} 个请求还要多等，平均多 {held_mean:.0f} 步。",
       expect={"static_off": 0, "continuous_off": 0, "slower": 0, "faster": {">": 300}, "held": {">": 300}})
def _(ctx):
    """范围：步数模拟，不计 prefill 与时间"""
    reqs = workload()
    st, co = both(reqs)
    want = [n for _, n in reqs]
    diff = [a - b for a, b in zip(st["latency"], co["latency"])]
    held = [b - a for a, b in zip(st["latency"], summary(reqs, static_batching(reqs, return_at_batch_end=True))["latency"])]
    return {"static_off": sum(s != w for s, w in zip(st["service"], want)),
            "continuous_off": sum(s != w for s, w in zip(co["service"], want)),
            "queue_gain": st["queue_mean"] - co["queue_mean"], "latency_gain": st["latency_mean"] - co["latency_mean"],
            "slower": sum(d < 0 for d in diff), "faster": sum(d > 0 for d in diff), "same": sum(d == 0 for d in diff),
            "held": sum(h > 0 for h in held), "held_mean": mean(h for h in held if h > 0)}


@claim("sched.no-queue-no-gain", question=Q,
       statement="没人排队时连续批处理一步也不省：同样的输出长度，(一) 每 {=1100} 步来一个请求（比最长的输出还长，前一个总已结束），"
                 "{sparse_same} / {=400} 个请求的延迟两种调度逐一相同，静态批空转 {sparse_padded} 个槽·步；(二) 一步能装下全部 "
                 "{=64} 个同时到达的请求（{=64} 个槽），{full_same} / {=64} 个逐一相同，而静态批空转了 {full_padded:,d} 个槽·步"
                 "——按步数计（一步的时间不随 batch 里有几行在干活而变），空转只在有人等槽时才是损失。",
       expect={"sparse_same": 400, "full_same": 64, "full_padded": {">": 0}})
def _(ctx):
    """范围：步数模拟，不计 prefill 与时间"""
    out = {}
    spaced = [(i * 1100, n) for i, (_, n) in enumerate(workload())]  # each arrives after the last one finished
    for name, reqs, slots in (("sparse", spaced, SLOTS),
                              ("full", [(0, n) for _, n in workload(n=64)], 64)):
        st, co = both(reqs, slots)
        out |= {f"{name}_same": sum(a == b for a, b in zip(st["latency"], co["latency"])), f"{name}_padded": st["padded"],
                f"{name}_queue_static": st["queue_mean"], f"{name}_queue_continuous": co["queue_mean"]}
    return out
