"""What activation checkpointing keeps for the backward pass, counted in bytes of live storage.

A CPU has no allocator statistics like ``torch.cuda.memory_allocated``, so ``LiveBytes``
(snippets/_workloads/live_bytes.py) counts them itself: a dispatch mode that sees every tensor an
ATen op returns and holds a weak reference to its storage, adding the storage's bytes when it first
appears and taking them away when it is freed. That is the number ``memory_allocated`` reports on a
GPU, minus the allocator's rounding. The blocks are compute.py's (snippets/_workloads/ckpt_blocks.py).
"""

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from snippets._workloads.ckpt_blocks import D, T, Block, blocks_and_input, run_blocks
from snippets._workloads.live_bytes import LiveBytes
from verify.claim import claim

Q = "activation-checkpoint"


def _held_and_peak(n_blocks, how, device):
    """Bytes alive after the forward pass and at the peak of the backward pass, beyond the parameters,
    their gradients and ``x.grad`` (all allocated before, as in a second step of gradient accumulation).
    The input ``x`` counts as held: it is the first block's input."""
    blocks, x = blocks_and_input(device, n_blocks)
    blocks(x).sum().backward()  # the gradients now exist
    with LiveBytes() as live:
        live.add_all([x.grad, *blocks.parameters(), *(p.grad for p in blocks.parameters())])
        base = live.now
        live.add(x)
        loss = run_blocks(blocks, x, how).sum()
        held = live.now - base
        live.reset_peak()
        loss.backward()
        peak = live.peak - base
    return held, peak


UNIT = T * D * 4  # bytes of one block input: 262144


@claim("ckpt.saved-per-block", question=Q,
       statement="不做检查点时，一个这样的块在前向里为反向保存了 {n_saved} 个张量（`saved_tensors_hooks` 逐个看到），"
                 "去掉其中的参数，共 {act_bytes:bytes}，是块输入（{unit_bytes:bytes}）的 {units:.2f} 倍：LayerNorm 的输入、"
                 "它的输出、`fc1` 的输出和 GELU 的输出各一份（后两者的宽度是 `4d`），外加 LayerNorm 每个 token 的均值和 1/标准差。",
       expect={"unit_bytes": 262144, "act_bytes": 2625536,  # 10 block inputs + two (T,) float32 statistics
               "kinds": ["input", "ln_stats", "ln_stats", "ln_out", "fc1_out", "gelu_out"]})
def _(ctx):
    torch.manual_seed(0)
    block = Block().to(ctx.device)
    x = torch.randn(T, D, device=ctx.device, requires_grad=True)
    params = {p.untyped_storage().data_ptr() for p in block.parameters()}
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        ln_out = block.ln(x)
        fc1_out = block.fc1(ln_out)
        gelu_out = nn.functional.gelu(fc1_out)
        y = x + block.fc2(gelu_out)
    names = {x.untyped_storage().data_ptr(): "input", ln_out.untyped_storage().data_ptr(): "ln_out",
             fc1_out.untyped_storage().data_ptr(): "fc1_out", gelu_out.untyped_storage().data_ptr(): "gelu_out"}
    acts, kinds = {}, []
    for t in saved:
        ptr = t.untyped_storage().data_ptr()
        if ptr in params or ptr in acts:
            continue
        acts[ptr] = t.untyped_storage().nbytes()
        kinds.append(names.get(ptr, "ln_stats"))  # the other two: LayerNorm's mean and 1/std per token
    del y
    act = sum(acts.values())
    return {"n_saved": len(saved), "act_bytes": act, "unit_bytes": UNIT, "units": act / UNIT, "kinds": kinds}


@claim("ckpt.held-after-forward", question=Q,
       statement="{n_blocks} 个块前向结束时：不做检查点要留着 {none_held:bytes}（块输入的 {none_units:.1f} 倍）；"
                 "逐块 `checkpoint(block, x, use_reentrant=False)` 只留 {ckpt_held:bytes}（{ckpt_units:.1f} 倍，每块一份输入）；"
                 "重入式（`use_reentrant=True`）同样是 {reentrant_held:bytes}。",
       expect={"ckpt_held": 2097156, "reentrant_held": 2097156,  # 8 block inputs + the 4-byte loss
               "none_held": 21004292})  # 8 blocks x (10 inputs + two statistics) + the loss
def _(ctx):
    out = {"n_blocks": 8}
    for how, key in (("none", "none"), ("full", "ckpt"), ("reentrant", "reentrant")):
        held, _ = _held_and_peak(8, how, ctx.device)
        out[f"{key}_held"] = held
        out[f"{key}_units"] = held / UNIT
    return out


@claim("ckpt.linear-in-depth", question=Q,
       statement="逐块检查点留下的字节数仍随层数线性增长：{=4}、{=8}、{=16} 个块分别留 {held.4:bytes}、{held.8:bytes}、"
                 "{held.16:bytes}，每加一块多一份块输入。",
       expect={"held": {"4": 1048580, "8": 2097156, "16": 4194308}})  # n block inputs + the loss
def _(ctx):
    return {"held": {str(n): _held_and_peak(n, "full", ctx.device)[0] for n in (4, 8, 16)}, "unit_bytes": UNIT}


@claim("ckpt.sqrt-segments", question=Q,
       statement="同样 {n_blocks} 个块，看反向的峰值（块输入的倍数）：不做检查点 {peak.none:.1f}；"
                 "`checkpoint_sequential` 按 √{n_blocks} 分成 {=4} 段 {peak.seq4:.1f}，分成 {=8} 段 {peak.seq8:.1f}；"
                 "逐块检查点 {peak.full:.1f}，最低。",
       expect={"order": ["full", "seq8", "seq4", "none"]})
def _(ctx):
    peaks, helds = {}, {}
    for how in ("none", "seq4", "seq8", "full"):
        held, peak = _held_and_peak(16, how, ctx.device)
        peaks[how], helds[how] = peak / UNIT, held / UNIT
    return {"n_blocks": 16, "peak": peaks, "held": helds, "order": sorted(peaks, key=peaks.get)}


@claim("ckpt.selective", question=Q,
       statement="选择性检查点（`create_selective_checkpoint_contexts`，策略是保留 `addmm`/`mm` 的输出、其余重算）介于两者之间："
                 "8 个块前向后留下 {held:bytes}，是不做检查点时的 {held_vs_none:pct}；矩阵乘一个也不重算，"
                 "一步的矩阵乘 FLOP 仍是前向的 {flop_ratio} 倍，和不做检查点相同。",
       expect={"held": 12582916, "flop_ratio": 3.0})
def _(ctx):
    held, _ = _held_and_peak(8, "selective", ctx.device)
    none, _ = _held_and_peak(8, "none", ctx.device)
    blocks, x = blocks_and_input(ctx.device, 8)
    with FlopCounterMode(display=False) as fwd:
        run_blocks(blocks, x, "selective")
    with FlopCounterMode(display=False) as step:
        run_blocks(blocks, x, "selective").sum().backward()
    return {"held": held, "none_held": none, "held_vs_none": held / none, "held_units": held / UNIT,
            "flop_ratio": step.get_total_flops() / fwd.get_total_flops()}
