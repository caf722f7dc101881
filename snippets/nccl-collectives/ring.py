"""Ring and tree all-reduce written by hand with send/recv on gloo, four CPU processes, against the
library's collectives; the bytes each rank sends counted at the dispatcher (``CommLog``); and one slow
rank injected before an all_reduce. One run of four ranks serves every claim of this file."""

import math
import time

import torch
import torch.distributed as dist

import snippets._workloads.dist as workload
from snippets._workloads.dist import CommLog, finish_rank
from verify.claim import claim

Q = "nccl-collectives"
RANKS = 4
N = 1200  # elements per rank: divisible by 2, 3 and 4, so every ring's chunks are equal
SLOW, DELAY = 2, 0.3  # the rank that arrives late at the all_reduce, and by how many seconds
HALF_DELAY = 0.15  # DELAY / 2: the straggler claims' margin (a literal, as @claim arguments must be)


def _sends(log):
    """The element counts of every c10d send this rank made, as the dispatcher saw them."""
    return [sum(sizes) for name, sizes in log.ops if name == "send"]


def _p2p_ops(log):
    """How many c10d send and recv ops this rank made: its steps, counted outside the algorithm's code."""
    return sum(1 for name, _sizes in log.ops if name in ("send", "recv_"))


def _exchange(send, recv_like, right, left, group):
    buf = torch.empty_like(recv_like)
    req = dist.isend(send.contiguous(), dst=right, group=group)
    dist.recv(buf, src=left, group=group)
    req.wait()
    return buf


def ring_allreduce(x, p, group):
    """Reduce-scatter then all-gather around the ring 0 → 1 → … → p−1 → 0; returns (result, own chunk)."""
    r = dist.get_rank()
    right, left = (r + 1) % p, (r - 1) % p
    chunks = list(x.clone().chunk(p))
    for s in range(p - 1):  # reduce-scatter: send chunk r−s, add the left neighbour's chunk r−s−1
        c = (r - s - 1) % p
        chunks[c] = chunks[c] + _exchange(chunks[(r - s) % p], chunks[c], right, left, group)
    own = chunks[(r + 1) % p].clone()  # after p−1 steps rank r holds the full sum of chunk r+1
    for s in range(p - 1):  # all-gather: pass the finished chunks on
        c = (r - s) % p
        chunks[c] = _exchange(chunks[(r + 1 - s) % p], chunks[c], right, left, group)
    return torch.cat(chunks), own


def tree_allreduce(x, p, group):
    """Binomial tree, no chunking: reduce to rank 0 in ⌈log2 p⌉ rounds, then broadcast back in as many."""
    r = dist.get_rank()
    acc = x.clone()
    levels = math.ceil(math.log2(p))
    for k in range(levels):  # reduce: in round k the ranks at odd multiples of 2^k send to their parent
        m = 1 << k
        if r % (2 * m) == m:
            dist.send(acc, dst=r - m, group=group)
        elif r % (2 * m) == 0 and r + m < p:
            buf = torch.empty_like(acc)
            dist.recv(buf, src=r + m, group=group)
            acc += buf
    for k in reversed(range(levels)):  # broadcast, the same edges backwards
        m = 1 << k
        if r % (2 * m) == 0 and r + m < p:
            dist.send(acc, dst=r + m, group=group)
        elif r % (2 * m) == m:
            dist.recv(acc, src=r - m, group=group)
    return acc


def rank_all(rank, store, outdir):
    torch.set_num_threads(1)  # four ranks share the machine's cores
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=RANKS)
    groups = {p: dist.new_group(list(range(p))) for p in (2, 3, 4)}  # every rank joins every new_group call
    out = {"ring": {}, "tree": {}}
    for p, group in groups.items():
        if rank >= p:
            continue
        x = torch.randint(-10**6, 10**6, (N,), generator=torch.Generator().manual_seed(10 * p + rank))
        ref = x.clone()
        dist.all_reduce(ref, group=group)
        with CommLog() as log:
            ring, own = ring_allreduce(x, p, group)
        # the library's reduce-scatter, then its all-gather of the pieces
        piece = torch.empty(N // p, dtype=x.dtype)
        with CommLog() as rs_log:
            dist.reduce_scatter(piece, list(x.chunk(p)), group=group)
        pieces = [torch.empty_like(piece) for _ in range(p)]
        dist.all_gather(pieces, piece, group=group)
        out["ring"][str(p)] = {
            "equal": torch.equal(ring, ref), "sends": len(_sends(log)), "sent": sum(_sends(log)) * x.element_size(),
            "n_bytes": x.numel() * x.element_size(),
            "own_chunk_is_reduced": torch.equal(own, ref.chunk(p)[(rank + 1) % p]),
            "rs_ag_equal": torch.equal(torch.cat(pieces), ref), "rs_piece": torch.equal(piece, ref.chunk(p)[rank]),
            "rs_ops": sorted({name for name, _sizes in rs_log.ops})}
        with CommLog() as log:
            tree = tree_allreduce(x, p, group)
        out["tree"][str(p)] = {"equal": torch.equal(tree, ref), "ops": _p2p_ops(log), "send_sizes": _sends(log),
                               "sent": sum(_sends(log)) * x.element_size()}
    # a straggler: every rank leaves the barrier together, one of them works DELAY seconds longer;
    # the control is the same barrier and all_reduce with nobody late, run first in the same processes
    small = torch.ones(8)
    dist.all_reduce(small)  # warm the default group's connections up
    out["straggler"] = {}
    for case, late in (("control", None), ("late", SLOW)):
        dist.barrier()
        if rank == late:
            time.sleep(DELAY)
        entered = time.perf_counter()
        dist.all_reduce(small)
        out["straggler"][case] = time.perf_counter() - entered
    finish_rank(rank, outdir, out)


def _ranks(ctx):
    """The four ranks' results: ``run_ranks`` (snippets/_workloads/dist.py) with this file's world size."""
    saved, workload.WORLD = workload.WORLD, RANKS
    try:
        return workload.run_ranks(rank_all, ctx)
    finally:
        workload.WORLD = saved


def _every(ranks, part, key):
    """``key`` of every group size each rank took part in: {p: [value on rank 0, on rank 1, …]}."""
    return {p: [r[part][p][key] for r in ranks if p in r[part]] for p in ("2", "3", "4")}


@claim("nccl.ring-equals-allreduce", question=Q,
       statement="只用 send/recv 手写的环形 all-reduce（先 reduce-scatter、再 all-gather）在 gloo 的 {=2}、{=3}、{=4} 个 "
                 "CPU 进程上，每个 rank 的结果与 `dist.all_reduce` {equal:?逐元素相等|有不相等的}（int64，精确比较）；"
                 "在分发器上数每个 rank 的 `c10d.send` 次数，p = 2、3、4 时分别是 {steps}（各 rank {same:?相同|不同}），"
                 "即 2(p−1) 步。",
       expect={"equal": True, "steps": [2, 4, 6], "same": True})
def _(ctx):
    """The steps are counted by CommLog at the dispatcher, not by the ring's code.

    范围：gloo，2 到 4 个 CPU 进程
    """
    ranks = _ranks(ctx)
    equal = all(all(v) for v in _every(ranks, "ring", "equal").values())
    sends = _every(ranks, "ring", "sends")
    return {"equal": equal, "steps": [sends[p][0] for p in ("2", "3", "4")],
            "same": all(len(set(v)) == 1 for v in sends.values())}


@claim("nccl.ring-bytes", question=Q,
       statement="在分发器上数每个 rank 交给 `c10d.send` 的字节：每个 rank 的数据 N = {n_bytes:int} 字节，p = 2、3、4 的环上"
                 "每个 rank 分别发出 {sent.2:int}、{sent.3:int}、{sent.4:int} 字节（各 rank {same:?相同|不同}），与 N 之比 "
                 "{ratio}，正是 2(p−1)/p。p 从 2 到 4，每卡的发送量只变成原来的 {growth:x}，send 的次数却从 {steps_2} 变成 "
                 "{steps_4}。",
       expect={"n_bytes": 9600, "sent": {"2": 9600, "3": 12800, "4": 14400}, "same": True,
               "ratio": [1.0, 1.3333, 1.5], "growth": 1.5, "steps_2": 2, "steps_4": 6})
def _(ctx):
    """The first check of the corrected answer (the second is nccl.time-vs-p, by the step simulation).

    范围：gloo，2 到 4 个 CPU 进程
    """
    ranks = _ranks(ctx)
    counts, sizes = _every(ranks, "ring", "sent"), _every(ranks, "ring", "n_bytes")
    n_bytes = sizes["2"][0]
    return {"n_bytes": n_bytes, "sent": {p: counts[p][0] for p in ("2", "3", "4")},
            "same": all(len(set(v)) == 1 for v in (*counts.values(), *sizes.values())),
            "ratio": [round(counts[p][0] / n_bytes, 4) for p in ("2", "3", "4")],
            "growth": counts["4"][0] / counts["2"][0],
            "steps_2": ranks[0]["ring"]["2"]["sends"], "steps_4": ranks[0]["ring"]["4"]["sends"]}


@claim("nccl.rs-plus-ag", question=Q,
       statement="all-reduce = reduce-scatter + all-gather：gloo 的 `reduce_scatter` 在分发器上是一次 `c10d.{rs_op}` 调用，"
                 "给 rank r 的恰是和的第 r 块（{rs_piece:?每个 rank 都是|有 rank 不是}），"
                 "再 `all_gather` 拼起来与 `all_reduce` {rs_ag:?完全相同|不同}；"
                 "手写的环走完前 p−1 步时，rank r 手里是和的第 r+1 块（{own:?每个 rank 都是|有 rank 不是}），"
                 "后 p−1 步就是一次 all-gather。",
       expect={"rs_piece": True, "rs_ag": True, "own": True, "rs_op": {"contains": "reduce_scatter"}})
def _(ctx):
    """The library's two halves against its whole, and the hand-written ring's state between its halves.

    范围：gloo，2 到 4 个 CPU 进程
    """
    ranks = _ranks(ctx)
    ops = {name for vals in _every(ranks, "ring", "rs_ops").values() for v in vals for name in v}
    return {"rs_op": " + ".join(sorted(ops)),
            **{key: all(all(v) for v in _every(ranks, "ring", field).values())
               for key, field in (("rs_piece", "rs_piece"), ("rs_ag", "rs_ag_equal"), ("own", "own_chunk_is_reduced"))}}


@claim("nccl.tree-equals-allreduce", question=Q,
       statement="手写的二项树 all-reduce（先逐层归约到 rank 0，再原路广播，不分块）结果与 `dist.all_reduce` "
                 "{equal:?逐元素相等|有不相等的}；在分发器上数 send 和 recv，p = 2、3、4 时最忙的 rank 分别做了 {rounds} 次，"
                 "即 2⌈log₂p⌉ 轮，每次 send 都是整份 {per_round} 个元素。p = 4 时 rank 0 一共发了 {root_sent:int} 字节，"
                 "是环上每个 rank 的 {root_vs_ring:x}。",
       expect={"equal": True, "rounds": [2, 4, 4], "per_round": N, "root_vs_ring": {"approx": [1.3333, 1e-3]}})
def _(ctx):
    """Rounds and sizes counted by CommLog at the dispatcher, not by the tree's code.

    范围：gloo，2 到 4 个 CPU 进程
    """
    ranks = _ranks(ctx)
    per_round = {v for vals in _every(ranks, "tree", "send_sizes").values() for sizes in vals for v in sizes}
    root_sent = ranks[0]["tree"]["4"]["sent"]
    return {"equal": all(all(v) for v in _every(ranks, "tree", "equal").values()),
            "rounds": [max(v) for v in _every(ranks, "tree", "ops").values()],
            "per_round": per_round.pop() if len(per_round) == 1 else sorted(per_round),
            "root_sent": root_sent, "root_vs_ring": root_sent / ranks[0]["ring"]["4"]["sent"]}


@claim("nccl.straggler-waits", question=Q, kind="measured",
       statement="四个 rank 一起离开 barrier，rank {slow} 在 all_reduce 之前多算 {delay:time}（sleep）：其余三个 rank 在 "
                 "`all_reduce` 里都等了约 {waits_max:time}（最少 {waits_min:time}），比迟到的 rank 自己的 all_reduce 至少多 "
                 "{excess:time}，就是那段延迟。同一批进程先跑了一遍没人迟到的对照，每个 rank 的 `all_reduce` 最多只用 "
                 "{control_max:time}。集合通信跑得和最慢的 rank 一样慢。",
       expect={"waits_min": {">=": HALF_DELAY}, "excess": {">=": HALF_DELAY},
               "control_max": {"<": HALF_DELAY}})
def _(ctx):
    """A causal check, not a speed: with the delay the others wait at least half of it longer than the late
    rank; without it (the control, same processes) nobody waits half of it.

    范围：gloo，4 个 CPU 进程
    """
    ranks = _ranks(ctx)
    waits = [r["straggler"]["late"] for i, r in enumerate(ranks) if i != SLOW]
    return {"slow": SLOW, "delay": DELAY, "waits_min": min(waits), "waits_max": max(waits),
            "excess": min(waits) - ranks[SLOW]["straggler"]["late"],
            "control_max": max(r["straggler"]["control"] for r in ranks)}


@claim("nccl.straggler-shortest", question=Q, kind="measured",
       statement="同一次运行里，迟到的 rank {slow} 自己的 `all_reduce` 只用了 {slow_in:time}，四个 rank 里它"
                 "{shortest:?最短|不是最短}：按各 rank 的 all-reduce 耗时看，耗时最短的那个恰恰是拖慢大家的那个，"
                 "要找的是它在集合通信之前多做了什么。",
       expect={"slow_in": {"<": HALF_DELAY}, "shortest": True})
def _(ctx):
    """范围：gloo，4 个 CPU 进程"""
    waits = [r["straggler"]["late"] for r in _ranks(ctx)]
    return {"slow": SLOW, "slow_in": waits[SLOW], "shortest": min(waits) == waits[SLOW], "waits": waits}
