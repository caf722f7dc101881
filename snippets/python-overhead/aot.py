"""AOTAutograd, the stage between Dynamo and Inductor: it traces a function down to ATen ops,
functionalises it, traces forward and backward into one joint graph and cuts that graph into a
forward and a backward graph; the partitioner decides what the forward saves for the backward."""

from __future__ import annotations

import torch
from functorch.compile import aot_function, default_partition, make_boxed_func, min_cut_rematerialization_partition

from verify.claim import claim

Q = "python-overhead"


def block(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A scale, an in-place shift, SiLU and cos: small, with one mutation and one composite op."""
    y = x * w
    y.add_(1.0)
    return torch.nn.functional.silu(y).cos()


def ops(gm: torch.fx.GraphModule) -> list[str]:
    """The ATen overloads a graph calls, in order (``aten.add.Tensor``)."""
    return [str(n.target).replace("aten::", "aten.").split(".default")[0]
            for n in gm.graph.nodes if n.op == "call_function"]


def trace(partition_fn, decompositions=None) -> dict:
    """Compile ``block`` with AOTAutograd and recording compilers; run forward and backward once."""
    graphs = {"forward": [], "backward": []}

    def recorder(kind):
        def compiler(gm, example_inputs):
            graphs[kind].append(gm)
            return make_boxed_func(gm.forward)
        return compiler

    compiled = aot_function(block, fw_compiler=recorder("forward"), bw_compiler=recorder("backward"),
                            partition_fn=partition_fn, decompositions=decompositions)
    torch.manual_seed(0)
    x, w = torch.randn(8, requires_grad=True), torch.randn(8, requires_grad=True)
    out = compiled(x, w)
    backward_compiled_after_forward = len(graphs["backward"])
    out.sum().backward()
    xr, wr = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    block(xr, wr).sum().backward()
    fw, bw = graphs["forward"][0], graphs["backward"][0]
    fw_inputs = [n.name for n in fw.graph.nodes if n.op == "placeholder"]
    bw_inputs = [n.name for n in bw.graph.nodes if n.op == "placeholder"]
    saved = [name for name in bw_inputs if not name.startswith("tangents")]
    return {
        "fw_ops": ops(fw),
        "bw_ops": ops(bw),
        "fw_inputs": fw_inputs,
        "bw_inputs": bw_inputs,
        "saved": saved,
        "saved_activations": [name for name in saved if name not in fw_inputs],
        "fw_outputs": len(next(n for n in fw.graph.nodes if n.op == "output").args[0]),
        "backward_compiled_after_forward": backward_compiled_after_forward,
        "backward_compiled_after_backward": len(graphs["backward"]),
        "forward_compiled": len(graphs["forward"]),
        "grads_match": bool(torch.allclose(x.grad, xr.grad, atol=1e-6) and torch.allclose(w.grad, wr.grad, atol=1e-6)),
        "fw_code": fw.code.strip(),
        "bw_code": bw.code.strip(),
    }


@claim(
    "aot.joint-graph",
    question=Q,
    statement="AOTAutograd 把 `x * w`、原地的 `y.add_(1.0)`、`silu`、`cos` 这个小函数追踪到 ATen 层：函数化之后图里没有"
              "原地算子，`add_` 成了不改输入的 `aten.add.Tensor`（原地算子 {inplace_ops} 个）；前向和反向一起追踪成联合图，"
              "再被 partitioner 切成前向图（{fw_op_count} 个算子）和反向图（{bw_op_count} 个算子），梯度与 eager "
              "{grads_match:?一致|不一致}；反向图是第一次调用 `backward()` 时才交给编译器的：前向跑完时编译了 {backward_compiled_after_forward}"
              " 次，`backward()` 之后 {backward_compiled_after_backward} 次。",
    # Exact facts of the tracing (the default partitioner, no decompositions): the in-place add is
    # functionalised, the graphs hold the ops of `block` and of its derivative, and the backward
    # is compiled lazily (see the note "Backward graph lazy lowering" in torch/_functorch).
    expect={"inplace_ops": 0, "has_functional_add": True, "fw_op_count": 4, "bw_op_count": 6, "grads_match": True,
            "backward_compiled_after_forward": 0, "backward_compiled_after_backward": 1},
)
def _(ctx):
    r = trace(default_partition)
    return {
        **{k: r[k] for k in ("fw_ops", "bw_ops", "grads_match", "backward_compiled_after_forward",
                             "backward_compiled_after_backward", "forward_compiled", "fw_code", "bw_code")},
        "inplace_ops": sum(op.split(".")[1].endswith("_") for op in r["fw_ops"] + r["bw_ops"]),
        "has_functional_add": "aten.add.Tensor" in r["fw_ops"],
        "fw_op_count": len(r["fw_ops"]),
        "bw_op_count": len(r["bw_ops"]),
    }


@claim(
    "aot.saved-tensors",
    question=Q,
    statement="前向图给反向留什么，由 partitioner 决定：默认切法让前向除了结果再多返回 {default.saved_count} 个张量，其中"
              " {default.activation_count} 个是中间结果 {default.saved_activations}；Inductor 用的 min-cut 切法只留"
              " {min_cut.saved_count} 个输入 {min_cut.saved}，中间结果一个不存（{min_cut.activation_count} 个），"
              "在反向图里把它们重算一遍，反向图的算子从 {default.bw_op_count} 个变成 {min_cut.bw_op_count} 个。",
    # Exact for this function: the backward of `x * w` needs both inputs whichever way the graph is
    # cut; the default partitioner saves every intermediate the backward reads (`add`, `silu`);
    # min-cut finds that recomputing three cheap pointwise ops costs less memory traffic than
    # saving two tensors, so it saves none and the backward graph grows by those three ops.
    expect={"default": {"saved_count": 4, "activation_count": 2, "saved_activations": ["add", "silu"],
                        "bw_op_count": 6, "saved": ["primals_1", "primals_2", "add", "silu"]},
            "min_cut": {"saved_count": 2, "activation_count": 0, "saved_activations": [], "bw_op_count": 9,
                        "saved": ["primals_1", "primals_2"]},
            "grads_match": True},
)
def _(ctx):
    runs = {"default": trace(default_partition), "min_cut": trace(min_cut_rematerialization_partition)}
    return {
        name: {"saved_count": len(r["saved"]), "activation_count": len(r["saved_activations"]),
               "saved": r["saved"], "saved_activations": r["saved_activations"], "bw_op_count": len(r["bw_ops"])}
        for name, r in runs.items()
    } | {"bw_ops": {name: r["bw_ops"] for name, r in runs.items()},
         "fw_outputs": {name: r["fw_outputs"] for name, r in runs.items()},
         "grads_match": all(r["grads_match"] for r in runs.values()),
         "min_cut_bw_code": runs["min_cut"]["bw_code"]}


@claim(
    "aot.decompositions",
    question=Q,
    statement="分解（decomposition）也在这一步：传入 Inductor 的分解表后，前向图里的 `aten.silu` {silu_in_fw:?还在|不见了}，"
              "拆成了更基础的算子，整张前向图是 {fw_op_count} 个算子 {fw_op_names}；反向图里的 `aten.silu_backward` {silu_backward_in_bw:?还在|也拆开了}，"
              "后端只需要会生成这些基础算子的代码。",
    # Exact: Inductor's table decomposes silu and silu_backward (it lowers them from simpler ops).
    # Which simpler ops it uses is this torch version's choice; the sentence shows them bound.
    expect={"silu_in_fw": False, "silu_backward_in_bw": False, "grads_match": True, "more_fw_ops_than_undecomposed": True},
)
def _(ctx):
    from torch._inductor.decomposition import select_decomp_table

    plain = trace(min_cut_rematerialization_partition)
    r = trace(min_cut_rematerialization_partition, decompositions=select_decomp_table())
    return {
        "fw_ops": r["fw_ops"],
        "fw_op_count": len(r["fw_ops"]),
        "fw_op_names": [op.split(".")[1] for op in r["fw_ops"]],
        "bw_ops": r["bw_ops"],
        "silu_in_fw": any(op.startswith("aten.silu") for op in r["fw_ops"]),
        "silu_backward_in_bw": any(op.startswith("aten.silu_backward") for op in r["bw_ops"]),
        "more_fw_ops_than_undecomposed": len(r["fw_ops"]) > len(plain["fw_ops"]),
        "undecomposed_fw_ops": plain["fw_ops"],
        "grads_match": r["grads_match"],
        "fw_code": r["fw_code"],
    }
