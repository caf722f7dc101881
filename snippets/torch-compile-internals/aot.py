"""AOTAutograd on the CPU: the forward and backward graphs it hands a compiler, after functionalisation and partitioning.

``functorch.compile.aot_function`` with compilers that only keep the graphs (no Inductor, no g++).
"""

from __future__ import annotations

from typing import Any

import torch

from verify.claim import claim

Q = "torch-compile-internals"


def _capture(graphs: dict[str, torch.fx.GraphModule], name: str) -> Any:
    from functorch.compile import make_boxed_func  # noqa: PLC0415

    def compiler(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs[name] = gm
        return make_boxed_func(gm.forward)
    return compiler


def _aten_ops(gm: torch.fx.GraphModule) -> list[str]:
    """The ATen overloads a graph calls, in order (``add.Tensor``, ``sin.default``)."""
    return [str(n.target).removeprefix("aten.") for n in gm.graph.nodes if n.op == "call_function"]


def _graph_io(gm: torch.fx.GraphModule) -> tuple[list[str], list[str]]:
    """A graph's input names and the names of what it returns."""
    inputs = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    return inputs, [getattr(o, "name", str(o)) for o in out]


def _inplace(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.add_(1)  # in-place in the user's code
    y.mul_(2)
    return y.sin().sum()


@claim(
    "aot.functionalize",
    question=Q,
    statement="AOTAutograd 交给编译器的前向图已经函数化：源码里的 `y.add_(1)`、`y.mul_(2)` 在图里成了 {forward_ops}，原地算子数为 {inplace_ops}；"
              "AOTAutograd 同时给出的反向图是 {backward_ops}，sin 的导数 cos 在这里。",
    expect={"inplace_ops": 0, "forward_ops": ["clone.default", "add.Tensor", "mul.Tensor", "sin.default", "sum.default"],
            "backward_has_cos": True, "grad_matches_eager": True},
)
def _(ctx):
    """范围：aot_function，torch 2.13"""
    from functorch.compile import aot_function  # noqa: PLC0415

    graphs: dict[str, torch.fx.GraphModule] = {}
    x = torch.randn(16, requires_grad=True)
    aot_function(_inplace, fw_compiler=_capture(graphs, "fw"), bw_compiler=_capture(graphs, "bw"))(x).backward()
    grad = x.grad.clone()
    x.grad = None
    _inplace(x).backward()
    fw, bw = _aten_ops(graphs["fw"]), _aten_ops(graphs["bw"])
    return {"forward_ops": fw, "backward_ops": bw, "inplace_ops": sum(op.split(".")[0].endswith("_") for op in fw + bw),
            "backward_has_cos": "cos.default" in bw, "grad_matches_eager": torch.allclose(grad, x.grad)}


def _sin_cos_sin(x: torch.Tensor) -> torch.Tensor:
    return x.sin().cos().sin().sum()


@claim(
    "aot.partitioner",
    question=Q,
    statement="前向存什么给反向由分区器决定：对 `x.sin().cos().sin().sum()`，默认分区器让前向多返回 {default_saved} 个张量（{default_saved_text}）；"
              "min-cut 重算分区器只存 {mincut_saved} 个（输入 {mincut_saved_text}），反向图里把 sin、cos 重算一遍（反向的 sin 从 {default_bw_sin} 个变成 {mincut_bw_sin} 个）。",
    expect={"default_saved": 3, "mincut_saved": 1, "default_saved_names": ["primals_1", "sin", "cos"],
            "mincut_saved_names": ["primals_1"], "default_bw_sin": 1, "mincut_bw_sin": 2, "grads_equal": True},
)
def _(ctx):
    """范围：aot_function 的两种分区器，torch 2.13"""
    from functorch.compile import aot_function, default_partition, min_cut_rematerialization_partition  # noqa: PLC0415

    out: dict[str, Any] = {}
    grads = []
    for name, part in (("default", default_partition), ("mincut", min_cut_rematerialization_partition)):
        graphs: dict[str, torch.fx.GraphModule] = {}
        x = torch.linspace(-2, 2, 16, requires_grad=True)
        aot_function(_sin_cos_sin, fw_compiler=_capture(graphs, "fw"), bw_compiler=_capture(graphs, "bw"),
                     partition_fn=part)(x).backward()
        grads.append(x.grad)
        _, fw_out = _graph_io(graphs["fw"])
        saved = fw_out[1:]  # the first output is the function's result; the rest go to the backward
        out[f"{name}_saved"], out[f"{name}_saved_names"] = len(saved), saved
        out[f"{name}_saved_text"] = "、".join(saved)
        out[f"{name}_bw_sin"] = _aten_ops(graphs["bw"]).count("sin.default")
        out[f"{name}_backward_ops"] = _aten_ops(graphs["bw"])
    out["grads_equal"] = torch.equal(grads[0], grads[1])
    return out


@claim(
    "aot.inductor-saves",
    question=Q,
    statement="`torch.compile` 的默认后端 Inductor 在训练时也重算：同一个 `x.sin().cos().sin().sum()` 交给 Inductor，"
              "前向为反向存下 {inductor_saved} 个张量（用 `saved_tensors_hooks` 数）；换成配默认分区器的 AOTAutograd 后端（不经 Inductor），存下 {default_saved} 个；"
              "Inductor 给出的梯度与 eager {grad_close:?在舍入误差内一致（allclose）|不一致}。",
    expect={"inductor_saved": 1, "default_saved": 3, "grad_close": True},
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    """Counts what the compiled function saves for its backward with torch.autograd.graph.saved_tensors_hooks.

    范围：Inductor（CPU）与默认分区器，torch 2.13
    """
    from functorch.compile import default_partition, make_boxed_func  # noqa: PLC0415
    from torch._dynamo.backends.common import aot_autograd  # noqa: PLC0415

    def keep_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        return make_boxed_func(gm.forward)

    out: dict[str, Any] = {}
    backends = {"inductor": "inductor",
                "default": aot_autograd(fw_compiler=keep_graph, bw_compiler=keep_graph, partition_fn=default_partition)}
    for name, backend in backends.items():
        torch._dynamo.reset()
        saved: list[list[int]] = []
        x = torch.linspace(-2, 2, 16, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(list(t.shape)) or t, lambda t: t):
            y = torch.compile(_sin_cos_sin, backend=backend)(x)
        y.backward()
        out[f"{name}_saved"], out[f"{name}_saved_shapes"] = len(saved), saved
        out[f"{name}_grad"] = x.grad
    torch._dynamo.reset()
    x = torch.linspace(-2, 2, 16, requires_grad=True)
    _sin_cos_sin(x).backward()
    out["grad_close"] = torch.allclose(out.pop("inductor_grad"), x.grad) and torch.allclose(out.pop("default_grad"), x.grad)
    return out
