"""How Inductor's scheduler picks and orders fusions (torch 2.13), observed on the CPU.

``Scheduler.fuse_nodes`` runs ``fuse_nodes_once`` up to ten times. Each round,
``get_possible_fusions`` pairs only nodes that use a common buffer, keeps the pairs ``can_fuse``
allows, and sorts them by ``InductorChoices.score_fusion`` (highest first); the pairs are then
fused greedily in that order, each re-checked against what has been fused already. These claims
spy on those two methods and on ``WhyNoFuse`` (the messages ``TORCH_LOGS=fusion`` prints), and
count what comes out: ``torch._inductor.metrics.generated_kernel_count`` and the loop nests of the
generated C++. Each compile is cold (``torch._dynamo.reset()``, no FX graph cache), so that the
scheduler really runs and a config patch really reaches it.
"""

from __future__ import annotations

from unittest import mock

import torch
import torch._inductor.config as inductor_config

from snippets._workloads.fusion import kernel_names, loop_nests
from verify.claim import claim

Q = "graph-fusion"
N = 4096


def _label(node) -> str:
    """The ATen ops a scheduler node (or fused node) computes, e.g. ``add+mul``."""
    ops = {str(o.target).split(".")[1] for n in node.get_nodes() for o in n.node.origins if o.op == "call_function"}
    return "+".join(sorted(ops))


def _schedule(fn, *args, patch: dict | None = None) -> dict:
    """Compile ``fn`` cold; the scored candidate pairs of each round, the pairs fused, the refusals, the counts."""
    from torch._inductor import metrics, scheduler  # noqa: PLC0415
    from torch._inductor.graph import GraphLowering  # noqa: PLC0415

    rounds: list[list[dict]] = []
    fused: list[list[str]] = []
    refusals: list[str] = []
    possible = scheduler.Scheduler.get_possible_fusions
    fuse_two = scheduler.Scheduler.fuse_two_nodes
    why = scheduler.WhyNoFuse.__call__

    def spy_possible(self, nodes, is_reorder_round):
        pairs = possible(self, nodes, is_reorder_round)
        rounds.append([{"pair": [_label(a), _label(b)], "shared_bytes": self.score_fusion_memory(a, b)}
                       for a, b in pairs])
        return pairs

    def spy_fuse(self, a, b, fused_nodes):
        fused.append([_label(a), _label(b)])
        return fuse_two(self, a, b, fused_nodes)

    def spy_why(self, reason, *a):
        refusals.append(reason % a if a else reason)
        return why(self, reason, *a)

    codes: list[str] = []
    torch._dynamo.reset()
    metrics.reset()
    with inductor_config.patch({"fx_graph_cache": False, **(patch or {})}), \
            mock.patch.object(scheduler.Scheduler, "get_possible_fusions", spy_possible), \
            mock.patch.object(scheduler.Scheduler, "fuse_two_nodes", spy_fuse), \
            mock.patch.object(scheduler.WhyNoFuse, "__call__", spy_why), \
            mock.patch.object(GraphLowering, "save_output_code", codes.append):
        out = torch.compile(fn)(*args)
    code = codes[-1]
    return {"rounds": rounds, "fused": fused, "refusals": sorted(set(refusals)),
            "kernel_count": metrics.generated_kernel_count, "loop_nests": loop_nests(code),
            "cpp_functions": kernel_names(code), "out": out}


def _three(x: torch.Tensor, y: torch.Tensor):
    """Three outputs: a pair sharing one input, and a pair sharing both."""
    return y.sin(), x + y, x * 2 + y


# the outputs of _three as the scheduler labels them (their ATen ops), and as the page writes them
SHOWN = {"sin": "y.sin()", "add": "x + y", "add+mul": "x * 2 + y"}


@claim(
    "scheduler.score-order",
    question=Q,
    statement="调度器给候选打分排先后（截至 torch 2.13）；这个例子里三对都是逐元素节点、共享字节相差不到 {=16} 倍，先后由共享的字节数决定。`y.sin(), x + y, x * 2 + y` 三个输出（各 {=4096} 个 float32）是三个节点，"
              "两两都读了同一个输入，所以三对都是候选：{top_pair_shown} 共享 x 和 y，得分 {top_shared_bytes:,d} 字节，排第一；"
              "另外两对只共享 y，各 {other_shared_bytes:,d} 字节，其中一对在图里还是相邻的，也排在后面。默认配置下三个节点先后合并，"
              "`torch._inductor.metrics.generated_kernel_count` 是 {default_kernel_count}、{default_loop_nests} 趟循环；"
              "把 `max_fusion_size` 设成 {=2}，每个节点只能并一次，得分最高的那对先轮到、先合并：合并的是 {small_fused_shown}，"
              "`y.sin()` 被以“{small_refusals}”拒绝，留在自己的一趟里，共 {small_kernel_count} 个 kernel、{small_loop_nests} 趟循环。",
    expect={"top_pair": ["add", "add+mul"], "top_shared_bytes": 32768, "other_shared_bytes": 16384,
            "default_kernel_count": 1, "default_loop_nests": 1, "small_fused": [["add", "add+mul"]],
            "small_refusals": "exceeds max fusion", "small_kernel_count": 2, "small_loop_nests": 2, "matches_eager": True},
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(N, generator=g), torch.randn(N, generator=g)
    default = _schedule(_three, x, y)
    small = _schedule(_three, x, y, patch={"max_fusion_size": 2})
    first = default["rounds"][0]
    others = {c["shared_bytes"] for c in first[1:]}
    ref = _three(x, y)
    return {
        "candidates_round1": first,
        "top_pair": first[0]["pair"],
        "top_pair_shown": " 和 ".join(SHOWN[p] for p in first[0]["pair"]),
        "top_shared_bytes": first[0]["shared_bytes"],
        "other_shared_bytes": others.pop() if len(others) == 1 else sorted(others),
        "default_fused": default["fused"],
        "default_kernel_count": default["kernel_count"],
        "default_loop_nests": default["loop_nests"],
        "small_fused": small["fused"],
        "small_fused_shown": "；".join(" 和 ".join(SHOWN[p] for p in pair) for pair in small["fused"]),
        "small_refusals": "、".join(small["refusals"]),
        "small_kernel_count": small["kernel_count"],
        "small_loop_nests": small["loop_nests"],
        "small_cpp_functions": small["cpp_functions"],
        "matches_eager": all(torch.allclose(a, b, atol=1e-6) for run in (default, small) for a, b in zip(run["out"], ref)),
    }


def _scalar_shared(a: torch.Tensor, b: torch.Tensor, s: torch.Tensor):
    return (a * s).sin(), (b * s).cos()


def _input_shared(a: torch.Tensor, b: torch.Tensor):
    return (a * b).sin(), (a + b).cos()


@claim(
    "scheduler.horizontal-threshold",
    question=Q,
    statement="横向融合（两个互不依赖的节点）还有一道门槛 `score_fusion_memory_threshold`，默认 {threshold} 字节：`(a * s).sin(), (b * s).cos()` "
              "只共享一个 0 维张量 s，得分 {scalar_shared_bytes} 字节，被以“{scalar_refusals}”拒绝，{scalar_loop_nests} 趟循环；"
              "换成都读 a 和 b 的 `(a * b).sin(), (a + b).cos()`，得分 {input_shared_bytes:,d} 字节，合成 {input_loop_nests} 趟。"
              "一个输入都不共享的两个节点根本不会成为候选，连拒绝的理由都没有。",
    expect={"threshold": 10, "scalar_shared_bytes": 4, "scalar_refusals": "score_fusion_memory_threshold",
            "scalar_loop_nests": 2, "input_loop_nests": 1, "input_shared_bytes": 32768},
)
def _(ctx):
    from torch._inductor.choices import InductorChoices  # noqa: PLC0415

    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(N, generator=g), torch.randn(N, generator=g)
    s = torch.tensor(2.0)
    horizontal = InductorChoices.can_fuse_horizontal
    scores: list[int] = []

    def spy(scheduler, node1, node2, shared_data_score):
        scores.append(shared_data_score)  # the score can_fuse computed for this pair, in bytes
        return horizontal(scheduler, node1, node2, shared_data_score)

    with mock.patch.object(InductorChoices, "can_fuse_horizontal", staticmethod(spy)):
        scalar = _schedule(_scalar_shared, a, b, s)
        scalar_scores = sorted(set(scores))
        scores.clear()
        shared = _schedule(_input_shared, a, b)
        input_scores = sorted(set(scores))
    return {
        "threshold": inductor_config.score_fusion_memory_threshold,
        "scalar_scores": scalar_scores,
        "scalar_shared_bytes": scalar_scores[0] if len(scalar_scores) == 1 else scalar_scores,
        "scalar_candidates": scalar["rounds"],
        "scalar_refusals": "、".join(scalar["refusals"]),
        "scalar_loop_nests": scalar["loop_nests"],
        "input_candidates": shared["rounds"],
        "input_shared_bytes": input_scores[0] if len(input_scores) == 1 else input_scores,
        "input_loop_nests": shared["loop_nests"],
    }


def _producer_read_transposed(x: torch.Tensor, y: torch.Tensor):
    p = x.sin()  # returned: a buffer of its own, shape (512, 256)
    return p, p.t() + y  # the consumer's shape is (256, 512)


def _input_read_transposed(x: torch.Tensor, y: torch.Tensor):
    p = x.sin()
    return p, p + y.t()  # same shape as p; y is read against its layout


@claim(
    "scheduler.cpp-layout",
    question=Q,
    statement="布局对融合的影响在 CPU 后端有一处具体的限制（截至 torch 2.13）：`p = x.sin()` 既作为输出返回、又被 `p.t() + y` 使用时，"
              "调度器自己的合法性检查{transposed_scheduler_says:?通过了|没通过}，CPU 后端的 `can_fuse_vertical` 却{transposed_backend_says:?接受了|拒绝了}："
              "两个节点的形状是 {transposed_shapes}，CPU 后端只融合循环范围相同、或能还原成同一个形状的节点（`_why_fuse_nodes`），"
              "结果是 {transposed_loop_nests} 趟循环，p 写出去再读回来；转置的若是另一个输入，`p + y.t()`，两个节点形状相同，照样融成 {input_loop_nests} 趟。",
    expect={"transposed_backend_says": False, "transposed_scheduler_says": True, "transposed_loop_nests": 2,
            "input_backend_says": True, "input_loop_nests": 1, "matches_eager": True},
)
def _(ctx):
    from torch._inductor import scheduler  # noqa: PLC0415
    from torch._inductor.codegen import cpp  # noqa: PLC0415

    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(512, 256, generator=g), torch.randn(256, 512, generator=g)
    out: dict = {}
    match = True
    for label, fn in (("transposed", _producer_read_transposed), ("input", _input_read_transposed)):
        backend: list = []
        legal: list = []
        cpp_vertical = cpp.CppScheduling.can_fuse_vertical
        sched_vertical = scheduler.Scheduler.can_fuse_vertical

        def spy_cpp(self, a, b, backend=backend, cpp_vertical=cpp_vertical):
            ok = cpp_vertical(self, a, b)
            backend.append((ok, [list(n.node.data.get_size()) for n in (a, b)]))
            return ok

        def spy_sched(self, a, b, legal=legal, sched_vertical=sched_vertical, **kw):
            ok = sched_vertical(self, a, b, **kw)
            legal.append(ok)
            return ok

        with mock.patch.object(cpp.CppScheduling, "can_fuse_vertical", spy_cpp), \
                mock.patch.object(scheduler.Scheduler, "can_fuse_vertical", spy_sched):
            run = _schedule(fn, x, y)
        out[f"{label}_backend_says"] = bool(backend) and all(ok for ok, _ in backend)
        out[f"{label}_scheduler_says"] = bool(legal) and all(legal)
        out[f"{label}_shapes"] = " 和 ".join(str(tuple(s)) for s in backend[0][1]) if backend else None
        out[f"{label}_loop_nests"] = run["loop_nests"]
        out[f"{label}_kernel_count"] = run["kernel_count"]
        match = match and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(run["out"], fn(x, y)))
    out["matches_eager"] = match
    return out
