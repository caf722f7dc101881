"""Capturing a function with data-dependent control flow: ``torch.jit.trace`` records the branch it
took, ``torch.jit.script`` keeps the ``if`` (both deprecated as of torch 2.13), ``torch.export`` refuses
it unless it is written with ``torch.cond``, and ``torch.compile`` splits the graph at it."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings

import torch

from verify.claim import claim

Q = "autograd-engine"


def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 10


class Branchy(torch.nn.Module):
    def forward(self, x):
        return branchy(x)


class WithCond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 10, (x,))


POS, NEG = [1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]


@claim("autograd.trace-vs-script", question=Q,
       statement="对 `if x.sum() > 0: return x * 2` 否则 `return x - 10`：用全 1 的输入 `torch.jit.trace`，图里 prim::If "
                 "有 {trace_ifs} 个，再喂全 −1 的输入得到 {trace_neg}（照走记录下的 `x * 2`，eager 是 {eager_neg}），"
                 "trace 时{tracer_warned:?发出了|没有} TracerWarning；`torch.jit.script` 编译的是源码，图里 prim::If 有 "
                 "{script_ifs} 个，两种输入分别得到 {script_pos} 和 {script_neg}。",
       expect={"trace_ifs": 0, "trace_neg": [-2.0, -2.0, -2.0], "eager_neg": [-11.0, -11.0, -11.0], "tracer_warned": True,
               "script_ifs": 1, "script_pos": [2.0, 2.0, 2.0], "script_neg": [-11.0, -11.0, -11.0]})
def _(ctx):
    pos, neg = torch.tensor(POS), torch.tensor(NEG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = torch.jit.trace(branchy, pos)
        scripted = torch.jit.script(branchy)
    return {"trace_ifs": str(traced.graph).count("prim::If"), "trace_neg": traced(neg).tolist(),
            "eager_neg": branchy(neg).tolist(),
            "tracer_warned": any(issubclass(w.category, torch.jit.TracerWarning) for w in caught),
            "script_ifs": str(scripted.graph).count("prim::If"), "script_pos": scripted(pos).tolist(),
            "script_neg": scripted(neg).tolist()}


@claim("autograd.jit-deprecated", question=Q, min_torch="2.13",
       statement="截至 torch 2.13，TorchScript 已标为弃用：`torch.jit.trace` 和 `torch.jit.script` 各发出一条 "
                 "DeprecationWarning，trace 的那条原文（去掉反引号）是“{trace_msg}”。",
       expect={"trace_msg": "torch.jit.trace is deprecated. Please switch to torch.compile or torch.export.",
               "script_deprecated": True})
def _(ctx):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(branchy, torch.tensor(POS))
        torch.jit.script(branchy)
    msgs = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    return {"trace_msg": next(m for m in msgs if "torch.jit.trace" in m).replace("`", ""),
            "script_deprecated": any("`torch.jit.script` is deprecated" in m for m in msgs)}


@claim("autograd.export-data-dependent-raises", question=Q,
       statement="`torch.export.export` 不肯替这种分支做选择：导出同一个函数抛出 GuardOnDataDependentSymNode"
                 "（Could not guard on data-dependent expression），因为分支条件取决于张量的值。报错前它把抓到一半的图打印到 "
                 "stderr，最后一个节点是 {last_op}：把条件张量转成 Python 的 bool，正是图断开的地方。",
       raises=("GuardOnDataDependentSymNode", "Could not guard on data-dependent expression"),
       expect={"last_op": "torch.ops.aten.item.default"})
def _(ctx):
    logging.getLogger("torch.fx.experimental.symbolic_shapes").setLevel(logging.ERROR)  # the guard's log line
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            torch.export.export(Branchy(), (torch.tensor(POS),))
    finally:
        ops = [line.split("=", 1)[1].split("(")[0].strip() for line in err.getvalue().splitlines()
               if "torch.ops." in line and "=" in line]
        ctx.observe(last_op=ops[-1] if ops else "")


@claim("autograd.export-cond", question=Q,
       statement="把分支写成 `torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 10, (x,))` 就能导出：图里是一个 "
                 "`torch.ops.higher_order.cond` 节点（{n_cond} 个），两个分支都作为子图存下，导出的程序对全 1 和全 −1 "
                 "的输入分别得到 {pos} 和 {neg}。",
       expect={"n_cond": 1, "pos": [2.0, 2.0, 2.0], "neg": [-11.0, -11.0, -11.0]})
def _(ctx):
    ep = torch.export.export(WithCond(), (torch.tensor(POS),))
    mod = ep.module()
    return {"n_cond": sum(n.target is torch.ops.higher_order.cond for n in ep.graph.nodes),
            "pos": mod(torch.tensor(POS)).tolist(), "neg": mod(torch.tensor(NEG)).tolist()}


@claim("autograd.compile-graph-break", question=Q,
       statement="`torch.compile` 遇到它不报错也不烧死分支，而是在 `if` 处断图（graph break）：`torch._dynamo.explain` "
                 "数出 {graph_count} 张图、{break_count} 次断图；按 `backend=\"eager\"` 编译后，两种输入分别得到 {pos} 和 {neg}。",
       expect={"graph_count": 2, "break_count": 1, "pos": [2.0, 2.0, 2.0], "neg": [-11.0, -11.0, -11.0]})
def _(ctx):
    import torch._dynamo as dynamo  # noqa: PLC0415

    explained = dynamo.explain(branchy)(torch.tensor(POS))
    compiled = torch.compile(branchy, backend="eager")
    return {"graph_count": explained.graph_count, "break_count": explained.graph_break_count,
            "pos": compiled(torch.tensor(POS)).tolist(), "neg": compiled(torch.tensor(NEG)).tolist()}
