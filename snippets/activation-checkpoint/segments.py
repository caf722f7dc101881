"""Chen et al. (2016), "Training Deep Nets with Sublinear Memory Cost": n layers cut into k segments,
only each segment's input kept, one segment's activations recomputed at a time. Memory is then about
k boundaries plus n/k activations of the segment being recomputed, lowest near k = sqrt(n), for one
extra forward pass. Shown where its assumption holds: each layer keeps exactly as many bytes as its
input (a bias-free ``Linear`` saves only its input besides its weight), counted by ``LiveBytes``
(snippets/_workloads/live_bytes.py) as in memory.py. And where ``use_reentrant`` defaults, read from
the installed torch's source.
"""

import inspect
import math
import re

import torch
from torch import nn
from torch.utils import checkpoint as ckpt_module
from torch.utils.checkpoint import checkpoint_sequential

from snippets._workloads.live_bytes import LiveBytes
from verify.claim import claim

Q = "activation-checkpoint"
N_LAYERS, WIDTH, TOKENS = 64, 64, 256
UNIT = TOKENS * WIDTH * 4  # bytes of one layer's input
SEGMENTS = (1, 2, 4, 8, 16, 32, 64)


def _chain():
    torch.manual_seed(0)
    layers = nn.Sequential(*[nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(N_LAYERS)])
    return layers, torch.randn(TOKENS, WIDTH, requires_grad=True)


def _segments(k):
    """Bytes kept after the forward pass and at the backward peak (beyond parameters and gradients, made
    before, as in a second step), in layer inputs; layer forwards that ran again inside backward."""
    layers, x = _chain()
    layers(x).sum().backward()  # the gradients exist from here on
    entered, finished = [0], [0]
    for layer in layers:
        layer.register_forward_pre_hook(lambda *_: entered.__setitem__(0, entered[0] + 1))
        layer.register_forward_hook(lambda *_: finished.__setitem__(0, finished[0] + 1))
    with LiveBytes() as live:
        live.add_all([x.grad, *layers.parameters(), *(p.grad for p in layers.parameters())])
        base = live.now
        live.add(x)
        loss = checkpoint_sequential(layers, k, x, use_reentrant=False).sum()
        held = live.now - base
        before = entered[0], finished[0]
        live.reset_peak()
        loss.backward()
        peak = live.peak - base
    return {"held": held / UNIT, "peak": peak / UNIT, "entered": entered[0] - before[0],
            "finished": finished[0] - before[1]}


@claim("ckpt.segments-sqrt", question=Q,
       statement="√n 的结论要在它的前提下看：{=64} 层 `Linear`（无 bias，每层只为反向存一份和输入一样大的张量），"
                 "用 `checkpoint_sequential` 分成 k 段，以一层输入的字节为 1 份。前向后留下的是前 k−1 段各自的输入，"
                 "加上最后一段（它不做检查点）的全部激活，k−1+n/k 份：k = {=1}、{=2}、{=4}、{=8}、{=16}、{=32}、{=64} 时实测 "
                 "{held.1:.0f}、{held.2:.0f}、{held.4:.0f}、{held.8:.0f}、{held.16:.0f}、{held.32:.0f}、{held.64:.0f} 份，"
                 "与公式{held_is_formula:?逐个相同|并不相同}，最低在 k = {best_held} = √n。反向先算最后一段、放掉它的激活，"
                 "再逐段重算前面的，所以同时在的仍是 k−1+n/k 份左右，峰值只多梯度的临时张量（{peak_extra:.2f} 份），"
                 "最低也在 k = {best_peak}（{peak.8:.1f} 份，不做检查点是 {peak.1:.1f} 份）。代价是重算："
                 "k = {=8} 时反向里又进入了 {entered_8} 个层的前向，即前 k−1 段各一遍，相当于 {recompute_8:.3f} 次前向；"
                 "非重入式的提前停止让每段最后一层的矩阵乘不必重跑，跑完的是 {finished_8} 个。",
       expect={"held_is_formula": True, "best_held": 8, "best_peak": 8, "entered_8": 56, "finished_8": 49})
def _(ctx):
    rows = {str(k): _segments(k) for k in SEGMENTS}
    held = {k: r["held"] for k, r in rows.items()}
    peak = {k: r["peak"] for k, r in rows.items()}
    formula = {str(k): k - 1 + N_LAYERS / k for k in SEGMENTS}
    return {"held": held, "peak": peak, "formula": formula,
            # the loss (4 bytes) rides along with the held activations
            "held_is_formula": all(abs(held[k] - formula[k]) < 0.01 for k in held),
            "best_held": int(min(held, key=held.get)), "best_peak": int(min(peak, key=peak.get)),
            "sqrt_n": math.isqrt(N_LAYERS), "entered": {k: r["entered"] for k, r in rows.items()},
            "finished": {k: r["finished"] for k, r in rows.items()}, "recompute_8": rows["8"]["entered"] / N_LAYERS,
            "entered_8": rows["8"]["entered"], "finished_8": rows["8"]["finished"],
            "peak_extra": peak["8"] - held["8"]}


@claim("ckpt.default-in-source", question=Q,
       statement="截至 torch {version}，`use_reentrant` 的默认值写在源码里：`checkpoint` 和 `checkpoint_sequential` "
                 "{both_default_true:?都是在参数为 None 时发一条警告、再把它设成 True|并不都是先警告再设成 True}；"
                 "警告说的“2.9 起不传会报错”{still_warns:?仍只是一句警告，没有抛出异常|已经兑现}。",
       expect={"both_default_true": True, "still_warns": True})
def _(ctx):
    pattern = re.compile(r"if use_reentrant is None:\s*\n\s*warnings\.warn\((?:.|\n)*?\)\s*\n\s*use_reentrant = True")
    found = {name: bool(pattern.search(inspect.getsource(getattr(ckpt_module, name))))
             for name in ("checkpoint", "checkpoint_sequential")}
    branch = inspect.getsource(ckpt_module.checkpoint).split("if use_reentrant is None:")[1].split(
        "use_reentrant = True")[0]
    raises = re.search(r"^\s*raise\b", branch, re.MULTILINE) is not None  # a raise statement, not the word in the text
    return {"version": torch.__version__.split("+")[0], "found": found, "both_default_true": all(found.values()),
            "still_warns": not raises}
