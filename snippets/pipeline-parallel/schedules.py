"""Pipeline schedules as a small simulator, checked against torch.distributed.pipelining.

Each schedule is an order of actions per rank, ``(stage, kind, microbatch)`` with kind F (forward),
B (full backward), or I and W (backward for the input, backward for the weights: zero bubble). The
simulator runs every rank through its order: an action starts when the rank is free and what it needs is
done (F of the stage before, B or I of the stage after; W after its own I), and takes a fixed time.
Communication is free. From the timeline: the makespan, each rank's idle time, and the most microbatches
whose activations a rank holds at once (from its F until its B, or until its W).

The orders of torch 2.13's schedule classes come from ``_schedule_visualizer.get_schedule_ops`` (mock
stages: nothing runs); the same classes are then driven for real on two gloo processes."""

from __future__ import annotations

import torch
from torch import nn

from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "pipeline-parallel"

P, M = 4, 8  # pipeline stages (ranks) and microbatches of the simulated examples
COST = {"F": 1, "B": 2}  # a stage's backward takes twice its forward
ZB_COST = {"F": 1, "I": 1, "W": 1}  # the zero-bubble paper's assumption: T_F = T_B = T_W


# --- schedules ---------------------------------------------------------------------------------------

def gpipe(p, m):
    """All forwards, then all backwards."""
    return {r: [(r, "F", i) for i in range(m)] + [(r, "B", i) for i in range(m)] for r in range(p)}


def one_f_one_b(p, m):
    """1F1B: rank r runs p - r - 1 warm-up forwards, then alternates one forward and one backward."""
    out = {}
    for r in range(p):
        warm = min(p - r - 1, m)
        order = [(r, "F", i) for i in range(warm)]
        f, b = warm, 0
        while f < m:
            order += [(r, "F", f), (r, "B", b)]
            f, b = f + 1, b + 1
        out[r] = order + [(r, "B", i) for i in range(b, m)]
    return out


def interleaved(p, m, v):
    """Megatron-LM's interleaved 1F1B: rank r holds the v chunks r, r + p, ..., microbatches go in groups
    of p through one chunk after another; (p - r - 1) * 2 + (v - 1) * p warm-up forwards."""
    total = m * v
    out = {}
    for r in range(p):
        warm = min((p - r - 1) * 2 + (v - 1) * p, total)

        def chunk(k, backward):
            group, i = divmod(k, p * v)
            c = i // p
            return (v - 1 - c if backward else c) * p + r, group * p + i % p

        order, fk, bk = [], 0, 0
        for _ in range(warm):
            s, mb = chunk(fk, False)
            order.append((s, "F", mb))
            fk += 1
        while fk < total:
            s, mb = chunk(fk, False)
            order.append((s, "F", mb))
            s, mb = chunk(bk, True)
            order.append((s, "B", mb))
            fk, bk = fk + 1, bk + 1
        while bk < total:
            s, mb = chunk(bk, True)
            order.append((s, "B", mb))
            bk += 1
        out[r] = order
    return out


def zb_h1(p, m):
    """ZB-H1: 1F1B with each backward split into I and W; on rank r each W runs r microbatches after its I,
    and the W's still owed run at the end, where 1F1B leaves the rank idle."""
    out = {}
    for r in range(p):
        warm = min(p - r - 1, m)
        order = [(r, "F", i) for i in range(warm)]
        f, b, w = warm, 0, 0
        while f < m or b < m:
            if f < m:
                order.append((r, "F", f))
                f += 1
            order.append((r, "I", b))
            b += 1
            if b > r:
                order.append((r, "W", w))
                w += 1
        out[r] = order + [(r, "W", i) for i in range(w, m)]
    return out


# --- the simulator -----------------------------------------------------------------------------------

def simulate(orders, n_stages, cost):
    """Times of every action: {rank: [(start, end, stage, kind, mb)]}, and the makespan."""
    done, pos = {}, dict.fromkeys(orders, 0)
    free = dict.fromkeys(orders, 0.0)
    timeline = {r: [] for r in orders}

    def needs(s, kind, mb):
        if kind == "F":
            return [(s - 1, "F", mb)] if s > 0 else []
        if kind in ("B", "I"):
            if s == n_stages - 1:
                return [(s, "F", mb)]
            return [next((k for k in ((s + 1, "B", mb), (s + 1, "I", mb)) if k in done), (s + 1, "B", mb))]
        return [(s, "I", mb)]

    left = sum(len(o) for o in orders.values())
    while left:
        moved = False
        for r, order in orders.items():
            while pos[r] < len(order):
                act = order[pos[r]]
                deps = needs(*act)
                if not all(d in done for d in deps):
                    break
                start = max([free[r]] + [done[d] for d in deps])
                free[r] = done[act] = start + cost[act[1]]
                timeline[r].append((start, free[r], *act))
                pos[r] += 1
                left -= 1
                moved = True
        if not moved:
            raise RuntimeError(f"the schedule deadlocks at {[o[pos[r]] for r, o in orders.items() if pos[r] < len(o)]}")
    return timeline, max(free.values())


def held(events, release):
    """The most microbatches (of one chunk: 1/v of a stage's activations) held at once: F to ``release``."""
    points = sorted([(s, 1) for s, _, _, k, _ in events if k == "F"] +
                    [(e, -1) for _, e, _, k, _ in events if k == release])
    now = peak = 0
    for _, d in points:
        now += d
        peak = max(peak, now)
    return peak


def measure(orders, p, v, cost, release="B"):
    timeline, makespan = simulate(orders, p * v, cost)
    busy = sum(e - s for s, e, *_ in timeline[0])
    return {"makespan": makespan, "busy": busy, "idle": makespan - busy, "bubble": 1 - busy / makespan,
            "idle_over_busy": (makespan - busy) / busy,
            "peak": [held(timeline[r], release) / v for r in range(p)]}


def torch_orders(name, p, m, v=None):
    """The compute actions of torch's schedule class, per rank (its idle slots dropped)."""
    from torch.distributed.pipelining._schedule_visualizer import get_schedule_ops  # noqa: PLC0415

    ops = get_schedule_ops(name, p, m, num_stages_per_rank=v)
    return {r: [(a.stage_index, a.computation_type.value, a.microbatch_index) for a in acts
                if a is not None and a.computation_type.value in ("F", "B", "I", "W")]
            for r, acts in enumerate(ops)}


# --- torch's schedules, driven on WORLD gloo processes ---------------------------------------------------

D, BATCH, MB = 8, 8, 4  # width, batch, microbatches of the real run


def _layers():
    torch.manual_seed(0)
    return [m for _ in range(4) for m in (nn.Linear(D, D), nn.Tanh())]


def _loss(y, t):
    return ((y - t) ** 2).sum()


def rank_pipeline(rank, store, outdir):
    init_rank(rank, store)
    from torch.distributed.pipelining import (  # noqa: PLC0415
        PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B)

    x = torch.randn(BATCH, D, generator=torch.Generator().manual_seed(1))
    target = torch.randn(BATCH, D, generator=torch.Generator().manual_seed(2))
    full = nn.Sequential(*_layers())
    (_loss(full(x), target) / MB).backward()  # the schedules average the microbatches' gradients
    ref = [p.grad for p in full.parameters()]
    out = {}
    for name, cls, v in (("gpipe", ScheduleGPipe, 1), ("1f1b", Schedule1F1B, 1),
                         ("interleaved", ScheduleInterleaved1F1B, 2)):
        layers = _layers()
        per = len(layers) // (WORLD * v)
        stage_ids = [rank + c * WORLD for c in range(v)]  # chunk c of this rank is stage rank + c * WORLD
        mods = [nn.Sequential(*layers[s * per:(s + 1) * per]) for s in stage_ids]
        stages = [PipelineStage(mod, s, WORLD * v, torch.device("cpu")) for mod, s in zip(mods, stage_ids)]
        log = []

        def wrap(stage):
            fwd, bwd = stage.forward_one_chunk, stage.backward_one_chunk

            def forward_one_chunk(i, *a, **k):
                r = fwd(i, *a, **k)
                log.append([stage.stage_index, "F", i, len(stage.fwd_cache)])
                return r

            def backward_one_chunk(i, *a, **k):
                log.append([stage.stage_index, "B", i, None])
                return bwd(i, *a, **k)

            stage.forward_one_chunk, stage.backward_one_chunk = forward_one_chunk, backward_one_chunk

        for st in stages:
            wrap(st)
        sched = cls(stages if v > 1 else stages[0], n_microbatches=MB, loss_fn=_loss)
        for _ in range(2):  # the first step also exchanges shapes; the second is the steady one
            for mod in mods:
                mod.zero_grad(set_to_none=True)
            log.clear()
            comm = CommLog()
            with comm:
                if rank == 0:
                    sched.step(x)
                else:
                    sched.step(target=target)
        grads = {s: [p.grad for p in mod.parameters()] for s, mod in zip(stage_ids, mods)}
        diff = max((g - ref[s * per + j]).abs().max().item() for s, gs in grads.items()
                   for j, g in enumerate(gs))
        sends = [sizes[0] for op, sizes in comm.ops if op == "send"]
        out[name] = {"order": [e[:3] for e in log], "peak": {str(s): max(e[3] for e in log if e[0] == s and e[1] == "F")
                                                              for s in stage_ids},
                     "grad_diff": diff, "sends": len(sends), "send_elements": sorted(set(sends)),
                     "collectives": sorted({op for op, _ in comm.ops})}
    finish_rank(rank, outdir, out)


def _as_tuples(order):
    return [tuple(a) for a in order]


def _held_in_order(order, v):
    """Most microbatches held at once along one rank's executed order (+1 at F, -1 at B), in stages."""
    now = peak = 0
    for _, kind, _ in order:
        now += 1 if kind == "F" else -1
        peak = max(peak, now)
    return peak / v


# --- claims: the simulator ----------------------------------------------------------------------------

@claim("pp.gpipe-bubble", question=Q,
       statement="模拟 GPipe：{=4} 个 stage、{=8} 个微批，每个 stage 的前向记 {=1}、反向记 {=2} 个时间单位，通信不计。"
                 "整步用时 {makespan}，每个 rank 真正在算的只有 {busy}，空着 {idle}：bubble 占整步的 {bubble:pct}，"
                 "与 (p−1)/(m+p−1) = {formula:.4f} 相同；按 Megatron-LM 论文的口径（bubble 时间除以理想时间）是 "
                 "{over_busy:.3f} = (p−1)/m。",
       expect={"makespan": 33, "busy": 24, "idle": 9, "matches": True, "matches_paper": True})
def _(ctx):
    r = measure(gpipe(P, M), P, 1, COST)
    formula = (P - 1) / (M + P - 1)
    return {"makespan": r["makespan"], "busy": r["busy"], "idle": r["idle"], "bubble": r["bubble"],
            "formula": formula, "over_busy": r["idle_over_busy"], "matches": abs(r["bubble"] - formula) < 1e-12,
            "matches_paper": abs(r["idle_over_busy"] - (P - 1) / M) < 1e-12}


@claim("pp.1f1b-same-bubble", question=Q,
       statement="同样的设置换成 1F1B：整步用时 {makespan}，bubble {bubble:pct}，与 GPipe {same:?完全相同|不同}。"
                 "微批数取 {=4}、{=8}、{=16}、{=32} 时，两者的 bubble 分别是 {gpipe_list} 和 {f1b_list}，逐个"
                 "{all_same:?相等|不等}，也都等于公式。",
       expect={"makespan": 33, "same": True, "all_same": True, "formula_ok": True})
def _(ctx):
    r, g = measure(one_f_one_b(P, M), P, 1, COST), measure(gpipe(P, M), P, 1, COST)
    ms = (4, 8, 16, 32)
    gl = [round(measure(gpipe(P, m), P, 1, COST)["bubble"], 4) for m in ms]
    fl = [round(measure(one_f_one_b(P, m), P, 1, COST)["bubble"], 4) for m in ms]
    return {"makespan": r["makespan"], "bubble": r["bubble"], "same": r["makespan"] == g["makespan"],
            "gpipe_list": gl, "f1b_list": fl, "all_same": gl == fl,
            "formula_ok": fl == [round((P - 1) / (m + P - 1), 4) for m in ms]}


@claim("pp.activation-peak", question=Q,
       statement="两者差在显存：同一个模拟里，每个 stage 最多同时存多少个微批的激活（从它的 F 到它的 B），GPipe 是 "
                 "{gpipe}（每个 stage 都是 m），1F1B 是 {f1b}（stage r 是 p − r，与 m 无关）；微批数加到 {=32}，1F1B 仍是 "
                 "{f1b_32}。",
       expect={"gpipe": [8.0, 8.0, 8.0, 8.0], "f1b": [4.0, 3.0, 2.0, 1.0], "f1b_32": [4.0, 3.0, 2.0, 1.0]})
def _(ctx):
    return {"gpipe": measure(gpipe(P, M), P, 1, COST)["peak"], "f1b": measure(one_f_one_b(P, M), P, 1, COST)["peak"],
            "f1b_32": measure(one_f_one_b(P, 32), P, 1, COST)["peak"]}


@claim("pp.interleaved-bubble", question=Q,
       statement="interleaved 1F1B：每个 rank 放 v 个不相邻的 chunk（rank r 放 stage r、r+p、…），每个 chunk 的前向、反向"
                 "只有原来的 1/v。同样 {=4} 个 rank、{=8} 个微批，v = {=2} 时整步 {makespan.2:g}、bubble {bubble.2:pct}，"
                 "v = {=4} 时 {makespan.4:g}、{bubble.4:pct}，都{formula_ok:?等于|不等于} (p−1)/(v·m+p−1)。代价一：rank 0 "
                 "最多同时存 {peak0.2} 和 {peak0.4} 个 stage 的激活，即 p + (p−1)/v（1F1B 是 {=4}）；代价二：一个微批"
                 "要过 v·p−1 个 stage 边界，点对点通信跟着变多（下一条按动作顺序数）。",
       expect={"formula_ok": True, "peak0": {"2": 5.5, "4": 4.75}, "peak_formula_ok": True})
def _(ctx):
    out = {"makespan": {}, "bubble": {}, "peak0": {}, "p2p_ratio": {}}
    ok = peak_ok = True
    for v in (2, 4):
        r = measure(interleaved(P, M, v), P, v, {k: c / v for k, c in COST.items()})
        out["makespan"][str(v)], out["bubble"][str(v)], out["peak0"][str(v)] = r["makespan"], r["bubble"], r["peak"][0]
        out["p2p_ratio"][str(v)] = (v * P - 1) / (P - 1)
        ok &= abs(r["bubble"] - (P - 1) / (v * M + P - 1)) < 1e-12
        peak_ok &= r["peak"][0] == P + (P - 1) / v
    return {**out, "formula_ok": ok, "peak_formula_ok": peak_ok}


@claim("pp.zero-bubble-h1", question=Q,
       statement="zero bubble 把反向拆成算输入梯度的 I 和算权重梯度的 W：只有 I 在 stage 之间传递，W 可以推后去填空档。"
                 "按论文的假设 F、I、W 各记 {=1}，{=4} 个 stage、{=8} 个微批：1F1B（B = I + W 连着做）每个 rank 空 "
                 "{idle_1f1b}，即 (p−1)(F+I+W)；ZB-H1（rank r 的 W 比 I 晚 r 个微批，欠下的在最后补上）空 {idle_zb}，即 (p−1)(F+I−W)，"
                 "整步从 {makespan_1f1b} 降到 {makespan_zb}，bubble 从 {bubble_1f1b:pct} 降到 {bubble_zb:pct}。"
                 "显存按“F 之后到 W 之前”数，ZB-H1 每个 stage 最多 {peak_zb} 个微批，上限仍是 1F1B 第一个 stage 的 p。",
       expect={"idle_1f1b": 9, "idle_zb": 3, "makespan_1f1b": 33, "makespan_zb": 27,
               "peak_zb": [4.0, 4.0, 4.0, 4.0], "formulas_ok": True})
def _(ctx):
    f1b = measure(one_f_one_b(P, M), P, 1, {"F": ZB_COST["F"], "B": ZB_COST["I"] + ZB_COST["W"]})
    zb = measure(zb_h1(P, M), P, 1, ZB_COST, release="W")
    return {"idle_1f1b": f1b["idle"], "idle_zb": zb["idle"], "makespan_1f1b": f1b["makespan"],
            "makespan_zb": zb["makespan"], "bubble_1f1b": f1b["bubble"], "bubble_zb": zb["bubble"],
            "peak_zb": zb["peak"], "formulas_ok": f1b["idle"] == (P - 1) * 3 and zb["idle"] == (P - 1) * 1}


@claim("pp.torch-zero-bubble", question=Q,
       statement="torch 2.13 自带的两个 zero-bubble 调度（都是每个 rank {=2} 个 chunk），把它们的动作顺序放进同一个模拟器"
                 "（F、I、W 各记 1/v）：`ScheduleInterleavedZeroBubble` 每个 rank 空 {idle_izb}，"
                 "`ScheduleZBVZeroBubble` 空 {idle_zbv}，而同样 v 的 interleaved 1F1B 空 {idle_interleaved}。",
       expect={"idle_izb": {"<": 3}, "idle_zbv": {"<": 3}, "zb_below_interleaved": True})
def _(ctx):
    v = 2
    idle = {name: measure(torch_orders(name, P, M, v), P, v, {k: c / v for k, c in ZB_COST.items()}, "W")["idle"]
            for name in ("InterleavedZeroBubble", "ZBVZeroBubble")}
    inter = measure(interleaved(P, M, v), P, v, {"F": 1 / v, "B": 2 / v})["idle"]
    return {"idle_izb": idle["InterleavedZeroBubble"], "idle_zbv": idle["ZBVZeroBubble"], "idle_interleaved": inter,
            "zb_below_interleaved": all(i < inter for i in idle.values())}


# --- claims: against torch.distributed.pipelining -------------------------------------------------------

@claim("pp.torch-orders", question=Q,
       statement="拿 torch 2.13 的调度类生成的动作表（`_schedule_visualizer.get_schedule_ops`，用 mock 的 stage，不真跑）"
                 "逐 rank 对比上面的生成器：p={=4}、m={=8} 和 p={=8}、m={=16} 时，`ScheduleGPipe` {gpipe:?逐个相同|有不同}，"
                 "`ScheduleInterleaved1F1B`（v={=2}）{interleaved:?逐个相同|有不同}（它的 warm-up 数也是 (p−r−1)·2 + (v−1)·p）；"
                 "`Schedule1F1B` 除最后一个 rank 外{f1b_others:?都相同|有不同}。",
       expect={"gpipe": True, "interleaved": True, "f1b_others": True})
def _(ctx):
    cases = ((4, 8), (8, 16))
    return {"gpipe": all(torch_orders("GPipe", p, m) == gpipe(p, m) for p, m in cases),
            "interleaved": all(torch_orders("Interleaved1F1B", p, m, 2) == interleaved(p, m, 2) for p, m in cases),
            "f1b_others": all(torch_orders("1F1B", p, m)[r] == one_f_one_b(p, m)[r] for p, m in cases
                              for r in range(p - 1))}


@claim("pp.torch-1f1b-ir-last-rank", question=Q,
       statement="最后一个 rank 上，`Schedule1F1B.pipeline_order` 里的前向编号是 {ir_forwards}，从 1 数到 m：{=8} 个微批里"
                 "{has_m:?出现了不存在的|没有} {=8} 号；把编号减一就与生成器{shifted_same:?相同|不同}。这只是这张供可视化和"
                 "模拟用的表写错了：下面真跑时，最后一个 rank 执行的前向是从 0 号开始的。",
       expect={"ir_forwards": [1, 2, 3, 4, 5, 6, 7, 8], "has_m": True, "shifted_same": True})
def _(ctx):
    last = torch_orders("1F1B", P, M)[P - 1]
    shifted = [(s, k, mb - 1 if k == "F" else mb) for s, k, mb in last]
    return {"ir_forwards": [mb for _, k, mb in last if k == "F"], "has_m": any(k == "F" and mb == M for _, k, mb in last),
            "shifted_same": shifted == one_f_one_b(P, M)[P - 1]}


@claim("pp.1f1b-needs-enough-microbatches", question=Q,
       statement="`Schedule1F1B` 要求微批数不少于 stage 数：4 个 stage 配 2 个微批，构造时就抛出 ValueError。",
       raises=["ValueError", "must be greater than or equal to the number of stages"])
def _(ctx):
    torch_orders("1F1B", 4, 2)


@claim("pp.gloo-orders", kind="measured", question=Q, timeout=150,
       statement="真跑：两个 gloo 进程，每个 rank 一个 stage（interleaved 时两个 chunk），{=4} 层 Linear+Tanh、batch "
                 "{=8} 切成 {=4} 个微批，用 `PipelineStage` 和 torch 的三个调度类各训练一步。记下每个 rank 实际执行的前向和"
                 "反向：GPipe、1F1B、interleaved 1F1B 的顺序与模拟器的生成器{orders_same:?逐个相同|有不同}；各 stage 参数的"
                 "梯度与不切的模型一致（最大差 {grad_diff:.1e}，调度按微批数取平均）。",
       expect={"orders_same": True, "grad_diff": {"<": 1e-5}})
def _(ctx):
    r = run_ranks(rank_pipeline, ctx)
    gens = {"gpipe": gpipe(WORLD, MB), "1f1b": one_f_one_b(WORLD, MB), "interleaved": interleaved(WORLD, MB, 2)}
    same = all(_as_tuples(r[rank][name]["order"]) == gens[name][rank] for name in gens for rank in range(WORLD))
    return {"orders_same": same, "grad_diff": max(r[k][n]["grad_diff"] for k in range(WORLD) for n in gens)}


@claim("pp.gloo-memory", question=Q, timeout=150,
       statement="同一次真跑里，每个 rank 沿实际执行顺序同时持有的前向缓存（`PipelineStage.fwd_cache` 里等反向的微批）："
                 "GPipe 最多 {gpipe}（都是 m），1F1B 是 {f1b}（p − r）；interleaved 按 stage 折算是 {interleaved}"
                 "（每个 chunk 半个 stage，与模拟器{interleaved_matches_sim:?一致|不一致}）。`fwd_cache` 在每次前向之后的长度印证了前两者（{gpipe_cache} 和 {f1b_cache}）。",
       expect={"gpipe": [4.0, 4.0], "f1b": [2.0, 1.0], "interleaved": [2.5, 1.5], "gpipe_cache": [4, 4],
               "f1b_cache": [2, 1], "interleaved_matches_sim": True})
def _(ctx):
    r = run_ranks(rank_pipeline, ctx)
    out = {key: [_held_in_order(r[k][name]["order"], v) for k in range(WORLD)]
           for key, name, v in (("gpipe", "gpipe", 1), ("f1b", "1f1b", 1), ("interleaved", "interleaved", 2))}
    out["gpipe_cache"] = [r[k]["gpipe"]["peak"][str(k)] for k in range(WORLD)]
    out["f1b_cache"] = [r[k]["1f1b"]["peak"][str(k)] for k in range(WORLD)]
    sim = measure(interleaved(WORLD, MB, 2), WORLD, 2, {"F": 0.5, "B": 1})["peak"]
    out["interleaved_matches_sim"] = out["interleaved"] == sim
    return out


@claim("pp.gloo-p2p", question=Q, timeout=150,
       statement="流水线只在 stage 边界上点对点通信：这一步里 c10d 的操作{only_p2p:?只有 send 和 recv|还有别的}。"
                 "每次 send 是一个微批的激活（前向）或它的梯度（反向），{elements} 个 fp32 元素 = 微批 {=2} 行 × 宽 "
                 "{=8}，{bytes:bytes}；GPipe 和 1F1B 每个 rank 一步 send {sends.gpipe} 和 {sends.1f1b} 次，"
                 "interleaved 是 {sends.interleaved} 次：边界从 p−1 个变成 v·p−1 个。",
       expect={"only_p2p": True, "elements": 16, "bytes": 64, "one_size": True, "sends": {"gpipe": 4, "1f1b": 4, "interleaved": 12}})
def _(ctx):
    r = run_ranks(rank_pipeline, ctx)
    names = ("gpipe", "1f1b", "interleaved")
    return {"only_p2p": all(set(r[k][n]["collectives"]) <= {"send", "recv_"} for k in range(WORLD) for n in names),
            "elements": r[0]["gpipe"]["send_elements"][0], "bytes": r[0]["gpipe"]["send_elements"][0] * 4,
            "one_size": all(r[k][n]["send_elements"] == r[0]["gpipe"]["send_elements"] for k in range(WORLD) for n in names),
            "sends": {n: r[0][n]["sends"] for n in names}}
