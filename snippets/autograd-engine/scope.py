"""Where three of the page's short rules stop: an in-place change breaks backward only when the graph
saved the tensor, an inference tensor may enter autograd as long as nothing saves it, and what a
second-order backward (``create_graph=True``) keeps beyond a first-order one."""

from __future__ import annotations

import torch
from torch import nn

from verify.claim import claim

Q = "autograd-engine"


def _backward_error(fn):
    """The first words of the error ``fn`` raises, or ``""`` when it runs."""
    try:
        fn()
    except RuntimeError as exc:
        return str(exc).split(".")[0]
    return ""


@claim("autograd.inplace-only-if-saved", question=Q,
       statement="原地改值只在那个张量被图保存过时才让反向报错：`s = a.sigmoid()` 的反向要用 s，对 `s.detach()` 原地 `mul_` 后"
                 "反向{saved_raises:?报错|不报错}（“{saved_error}”）；`t = b + 1` 的反向不存 t，同样原地改、版本号同样变成 "
                 "{unsaved_version}，反向{unsaved_raises:?报错|不报错}，`b.grad` 全是 {unsaved_grad}（加法的梯度本来就不看 t 的值）。",
       expect={"saved_raises": True, "saved_error": {"contains": "modified by an inplace operation"},
               "unsaved_raises": False, "unsaved_version": 1, "unsaved_grad": 1.0})
def _(ctx):
    a = torch.randn(5, requires_grad=True)
    s = a.sigmoid()
    s.detach().mul_(2)
    saved = _backward_error(lambda: s.sum().backward())
    b = torch.randn(5, requires_grad=True)
    t = b + 1
    t.detach().mul_(2)
    unsaved = _backward_error(lambda: t.sum().backward())
    grads = b.grad.unique().tolist() if b.grad is not None else []
    return {"saved_raises": bool(saved), "saved_error": saved.split(":")[0], "unsaved_raises": bool(unsaved),
            "unsaved_version": t._version, "unsaved_grad": grads[0] if len(grads) == 1 else grads}


@claim("autograd.inference-tensor-unsaved", question=Q,
       statement="`inference_mode` 里产生的张量也能进入要求梯度的计算，只是不能被图保存：`t` 在 `inference_mode` 里算出"
                 "（`is_inference()` {is_inference:?为 True|为 False}），`(t + w).sum().backward()` {add_ok:?照常算出 w 的梯度|报错}"
                 "（加法不存输入）；`(t * w).sum()` 的反向要存 t，前向就{mul_raises:?报错|不报错}（“{mul_error}”）。",
       expect={"is_inference": True, "add_ok": True, "mul_raises": True,
               "mul_error": {"contains": "Inference tensors cannot be saved for backward"}})
def _(ctx):
    with torch.inference_mode():
        t = torch.randn(5)
    w = torch.randn(5, requires_grad=True)
    (t + w).sum().backward()
    add_ok = w.grad is not None and torch.equal(w.grad, torch.ones(5))
    error = _backward_error(lambda: (t * w).sum())
    return {"is_inference": t.is_inference(), "add_ok": add_ok, "mul_raises": bool(error), "mul_error": error}


def _saved_during_backward(create_graph):
    """Distinct bytes the forward saves, and distinct new bytes the backward itself saves, for a small
    tanh MLP: each storage counted once however many nodes save it, weights (and views of them) left out."""
    torch.manual_seed(0)
    net = nn.Sequential(*(m for _ in range(4) for m in (nn.Linear(64, 64), nn.Tanh())))
    x = torch.randn(32, 64, requires_grad=True)
    seen = {p.untyped_storage().data_ptr() for p in net.parameters()}
    sizes: list[int] = []

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            sizes.append(storage.nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = net(x).square().sum()
        forward = sum(sizes)
        sizes.clear()
        torch.autograd.grad(y, x, create_graph=create_graph)
    return forward, sum(sizes)


@claim("autograd.create-graph-saves", question=Q,
       statement="二阶导要让反向也建图，反向本身也要保存张量：{=4} 层 `Linear(64, 64)` + `tanh` 的 MLP（batch {=32}，float32），"
                 "按存储去重、不算权重，前向为反向保存 {forward:bytes}；`create_graph=False` 时反向不再存新的（{backward_plain:bytes}），"
                 "`create_graph=True` 时反向又存下 {backward_double:bytes} 新的张量，是前向的 {ratio:.2f} 倍。多存多少取决于每个反向"
                 "公式要什么，这个比值只属于这个模型。",
       expect={"backward_plain": 0, "backward_double": {">": 0}})
def _(ctx):
    forward, plain = _saved_during_backward(False)
    _, double = _saved_during_backward(True)
    return {"forward": forward, "backward_plain": plain, "backward_double": double, "ratio": double / forward}
