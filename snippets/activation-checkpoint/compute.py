"""What activation checkpointing costs in compute: matmul FLOPs counted, forward passes counted, time measured."""

import torch
from torch.utils.checkpoint import set_checkpoint_early_stop
from torch.utils.flop_counter import FlopCounterMode

from snippets._workloads.ckpt_blocks import blocks_and_input, run_blocks
from verify import timing
from verify.claim import claim

Q = "activation-checkpoint"
# The model is memory.py's: 8 MLP blocks and their input (snippets/_workloads/ckpt_blocks.py).


def _flops(how, device, early_stop=True):
    blocks, x = blocks_and_input(device)
    with set_checkpoint_early_stop(early_stop):
        with FlopCounterMode(display=False) as fwd:
            run_blocks(blocks, x, how)
        with FlopCounterMode(display=False) as step:
            run_blocks(blocks, x, how).sum().backward()
    return fwd.get_total_flops(), step.get_total_flops()


@claim("ckpt.flops", question=Q,
       statement="用 `FlopCounterMode` 数 8 个块一次前向加反向的矩阵乘 FLOP（以前向为 1）：不做检查点 {ratio.none}；"
                 "重入式检查点 {ratio.reentrant}，正好多一次完整前向；非重入式只有 {ratio.full}；"
                 "关掉提前停止（`set_checkpoint_early_stop(False)`）后又回到 {ratio.full_no_early_stop}。",
       expect={"ratio": {"none": 3.0, "reentrant": 4.0, "full": 3.5, "full_no_early_stop": 4.0, "selective": 3.0}})
def _(ctx):
    ratio, totals = {}, {}
    for how, early in (("none", True), ("reentrant", True), ("full", True), ("full_no_early_stop", False),
                       ("selective", True)):
        fwd, total = _flops("full" if how == "full_no_early_stop" else how, ctx.device, early_stop=early)
        ratio[how], totals[how] = total / fwd, total
    return {"ratio": ratio, "total_flops": totals, "forward_flops": fwd}


@claim("ckpt.early-stop-skips-last-matmul", question=Q,
       statement="差的那半次前向，是每块最后那个矩阵乘 `fc2`。非重入式重算时，一旦前向里保存过的张量都重新算了出来"
                 "（最后一个是 `fc2` 要保存的输入，即 GELU 的输出），就抛出内部异常停下，`fc2` 的矩阵乘还没开始。"
                 "反向过程中数模块的前向：`fc1` 进入 {entered.fc1} 次、跑完 {finished.fc1} 次；`fc2` 进入 {entered.fc2} 次、"
                 "跑完 {finished.fc2} 次。",
       expect={"entered": {"fc1": 8, "fc2": 8}, "finished": {"fc1": 8, "fc2": 0},
               "finished_no_early_stop": {"fc1": 8, "fc2": 8}})
def _(ctx):
    out = {}
    for suffix, early in (("", True), ("_no_early_stop", False)):
        blocks, x = blocks_and_input(ctx.device)
        entered, finished = {"fc1": 0, "fc2": 0}, {"fc1": 0, "fc2": 0}
        for b in blocks:
            for name in entered:
                mod = getattr(b, name)
                mod.register_forward_pre_hook(lambda m, a, n=name: entered.__setitem__(n, entered[n] + 1))
                mod.register_forward_hook(lambda m, a, o, n=name: finished.__setitem__(n, finished[n] + 1))
        with set_checkpoint_early_stop(early):
            loss = run_blocks(blocks, x, "full").sum()
            before = dict(entered), dict(finished)  # the forward pass itself: 8 each
            loss.backward()
        out["entered" + suffix] = {n: entered[n] - before[0][n] for n in entered}
        out["finished" + suffix] = {n: finished[n] - before[1][n] for n in finished}
    return out


@claim("ckpt.time-overhead", question=Q, kind="perf",
       statement="本机实测（{threads} 线程，8 个块，一步前向加反向）：不做检查点 {timings.none}，逐块非重入式检查点 "
                 "{timings.full}，是前者的 {slowdown:x}。多出来的是前向量级的开销：单做一次前向要 {timings.forward}，"
                 "检查点的用时是“不做检查点 + 一次前向”的 {full_over_none_plus_forward:.2f} 倍。"
                 "至于重算的是一次前向还是 FLOP 数出来的半次（上一条），这个计时分不出来：它只检查用时没有明显超过“不做检查点 + 一次前向”，"
                 "这个上界很宽，只排除数量级上的错误；"
                 "而且重算时的前向要建图、恢复 RNG 状态，和单独计时的那次前向不是同一件事。",
       # Non-reentrant checkpointing recomputes each block's forward up to its last saved tensor in
       # backward (half the matmul FLOPs here, ckpt.flops): its time is at most the plain step plus one
       # forward, on any machine. The bound checks only that ceiling; it cannot tell one forward from
       # half of one (the ratio moved 0.73-1.03 across the stress rows, the two readings differ by
       # about 0.16). The slowdown itself is this machine's value.
       expect={"full_over_none_plus_forward": {"<": 1.5}})
def _(ctx):
    blocks, x = blocks_and_input(ctx.device)

    def step(how):
        run_blocks(blocks, x, how).sum().backward()

    t = timing.compare({"none": lambda: step("none"), "full": lambda: step("full"),
                        "forward": lambda: run_blocks(blocks, x, "none")},
                       rounds=15, warmup=3, device=ctx.device)
    med = {k: float(v["median_s"]) for k, v in t.items()}
    return {"timings": t, "slowdown": timing.ratio(t, "full", "none"),
            "full_over_none_plus_forward": med["full"] / (med["none"] + med["forward"]),
            "threads": torch.get_num_threads()}
