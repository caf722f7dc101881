"""The autograd graph of a residual block: the nodes that ``grad_fn.next_functions`` reaches, how the
two paths' gradients meet at ``x``, and what the graph keeps between ``backward`` calls (accumulated
``.grad``, freed saved tensors, ``retain_graph``, ``retain_grad``)."""

from __future__ import annotations

import warnings
from collections import Counter

import torch
from torch import nn

from verify.claim import claim

Q = "autograd-engine"
D, H, B = 8, 16, 4  # width, hidden width, batch


class Block(nn.Module):
    """A residual MLP block: ``x + fc2(relu(fc1(x)))``."""

    def __init__(self, d=D, h=H):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(d, h), nn.ReLU(), nn.Linear(h, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


def _walk(root):
    """Every node reachable from ``root`` once, and the number of edges into each node."""
    seen, indeg, stack = [], Counter(), [root]
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.append(fn)
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                indeg[nxt] += 1
                stack.append(nxt)
    return seen, indeg


@claim("autograd.residual-graph", question=Q,
       statement="对残差块 `y = x + fc2(relu(fc1(x)))`（输入 {=4×8}）从 `y.sum().grad_fn` 沿 `next_functions` 遍历，"
                 "去重后共 {n_nodes} 个节点：SumBackward0 {counts.SumBackward0} 个、AddBackward0 "
                 "{counts.AddBackward0} 个、AddmmBackward0 {counts.AddmmBackward0} 个（每个 Linear 一个）、"
                 "TBackward0 {counts.TBackward0} 个（权重转置）、ReluBackward0 {counts.ReluBackward0} 个、AccumulateGrad "
                 "{counts.AccumulateGrad} 个（4 个参数加 `x`）。AddBackward0 的两条出边指向 {add_next}；"
                 "`x` 的 AccumulateGrad 被 {x_in_edges} 条边指到（恒等路径一条、fc1 一条）。输入是 {=2×4×8} 时，"
                 "每个 Linear 前后各多一个 ViewBackward0，共 {view_3d} 个。",
       expect={"n_nodes": 12, "counts": {"SumBackward0": 1, "AddBackward0": 1, "AddmmBackward0": 2, "TBackward0": 2,
                                         "ReluBackward0": 1, "AccumulateGrad": 5},
               "add_next": ["AccumulateGrad", "AddmmBackward0"], "x_in_edges": 2, "view_3d": 4})
def _(ctx):
    block = Block()
    x = torch.randn(B, D, requires_grad=True)
    y = block(x)
    nodes, indeg = _walk(y.sum().grad_fn)
    counts = Counter(type(n).__name__ for n in nodes)
    x_node = next(n for n in nodes if type(n).__name__ == "AccumulateGrad" and n.variable is x)
    nodes3, _ = _walk(block(torch.randn(2, B, D, requires_grad=True)).sum().grad_fn)
    return {"n_nodes": len(nodes), "counts": dict(counts),
            "add_next": [type(n).__name__ for n, _ in y.grad_fn.next_functions],
            "x_in_edges": indeg[x_node],
            "view_3d": sum(type(n).__name__ == "ViewBackward0" for n in nodes3)}


@claim("autograd.residual-grad-sum", question=Q,
       statement="残差加法把上游梯度 g 原样交给两条路径，两份贡献在 `x` 处相加：`x.grad` 与“恒等路径的 g 加上分支单独用 "
                 "`autograd.grad` 求出的梯度”{matches_sum:?逐位相等|不相等}，与任何一份单独的贡献都{matches_one:?相等|不相等}。"
                 "挂在 `x` 上的 tensor hook 只被调用 {hook_calls} 次，拿到的已经是{hook_is_total:?两份之和|其中一份}："
                 "引擎先在节点的输入缓冲里把梯度加好，再执行 AccumulateGrad。",
       expect={"matches_sum": True, "matches_one": False, "hook_calls": 1, "hook_is_total": True})
def _(ctx):
    block = Block()
    x = torch.randn(B, D, requires_grad=True)
    g = torch.randn(B, D)
    seen = []
    x.register_hook(lambda grad: seen.append(grad.clone()))
    block(x).backward(g)
    x2 = x.detach().requires_grad_()
    (branch,) = torch.autograd.grad(block.fc2(block.act(block.fc1(x2))), x2, g)
    return {"matches_sum": torch.equal(x.grad, g + branch),
            "matches_one": torch.equal(x.grad, g) or torch.equal(x.grad, branch),
            "hook_calls": len(seen), "hook_is_total": torch.equal(seen[0], x.grad)}


@claim("autograd.residual-keeps-gradient", kind="measured", question=Q,
       statement="堆 {=30} 层 `tanh(Linear(h))`（宽 {=64}，权重按 std = 0.5/√64 初始化）：不加残差时，输入处梯度的范数只有"
                 "输出处上游梯度的 {plain:.1e}；每层改成 `h + tanh(Linear(h))`，比值是 {residual:.2f}，不但没衰减，反而放大了。"
                 "每个残差块的雅可比是 I + J，连乘展开后有一项是恒等，给梯度留了一条不经过分支的通路（通常如此，不是定理：J 的某些方向"
                 "若接近 −I 也会抵消）；其余的项也都在，J 不小时"
                 "连乘会把梯度逐层放大，所以深的残差网络还要靠 norm 和初始化（比如把分支最后一层的权重缩小）把它压住。",
       expect={"plain": {"<": 1e-6}, "residual": {">": 1.0}})
def _(ctx):
    layers, width = 30, 64
    lins = [nn.Linear(width, width) for _ in range(layers)]
    for lin in lins:
        nn.init.normal_(lin.weight, std=0.5 / width**0.5)
        nn.init.zeros_(lin.bias)
    x = torch.randn(16, width, requires_grad=True)
    out = {}
    for name, residual in (("plain", False), ("residual", True)):
        x.grad = None
        h = x
        for lin in lins:
            branch = torch.tanh(lin(h))
            h = h + branch if residual else branch
        g = torch.randn_like(h)
        h.backward(g)
        out[name] = (x.grad.norm() / g.norm()).item()
    return out


@claim("autograd.grad-accumulates", kind="measured", question=Q,
       statement="`.grad` 是累加的：同一个 batch 连做两次前向和 backward、中间不清零，参数梯度与“只做一次的梯度乘以 2”{doubled:?逐位相等|不相等}；"
                 "把 batch 拆成两半、loss 各乘 {=1/2} 分别 backward，累加出的梯度与整批一次 backward 的最大差 {accum_diff:.1e}"
                 "（只差浮点求和顺序），这就是梯度累积；`optimizer.zero_grad()` 之后 `.grad` {zeroed_none:?是 None（torch 2.0 起默认 set_to_none=True）|是全零张量}。",
       expect={"doubled": True, "accum_diff": {"<": 1e-6}, "zeroed_none": True})
def _(ctx):
    block = Block()
    x, target = torch.randn(B, D), torch.randn(B, D)

    def loss(xs, ts):
        return ((block(xs) - ts) ** 2).mean()

    loss(x, target).backward()
    once = block.fc1.weight.grad.clone()
    loss(x, target).backward()
    doubled = torch.equal(block.fc1.weight.grad, 2 * once)
    block.zero_grad()
    loss(x, target).backward()
    full = block.fc1.weight.grad.clone()
    block.zero_grad()
    for xs, ts in zip(x.chunk(2), target.chunk(2)):
        (loss(xs, ts) / 2).backward()
    diff = (block.fc1.weight.grad - full).abs().max().item()
    opt = torch.optim.SGD(block.parameters(), lr=0.1)
    opt.zero_grad()
    return {"doubled": doubled, "accum_diff": diff, "zeroed_none": block.fc1.weight.grad is None}


@claim("autograd.saved-tensors", question=Q,
       statement="反向节点保存的是算梯度要用的东西，可以从 `_saved_*` 属性看到：`x.exp()` 的 ExpBackward0 存了 `{exp_saved}`，"
                 "它与输出{exp_is_output:?是同一块内存|不是同一块内存}；`a * b` 的 MulBackward0 存了 `{mul_saved}`（两个输入）；"
                 "`a + b` 的 AddBackward0 只存了 `{add_saved}`（一个标量，不是张量）。backward 之后再读 ExpBackward0 的 "
                 "`_saved_result`{freed_raises:?抛出 RuntimeError：保存的张量已经释放|仍能读到}。",
       expect={"exp_saved": "_saved_result", "exp_is_output": True, "mul_saved": "_saved_other 和 _saved_self",
               "add_saved": "_saved_alpha", "freed_raises": True})
def _(ctx):
    def saved(fn):
        return " 和 ".join(sorted(k for k in dir(fn) if k.startswith("_saved_")))

    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    out = {"exp_saved": saved(y.grad_fn), "exp_is_output": y.grad_fn._saved_result.data_ptr() == y.data_ptr(),
           "mul_saved": saved((a * b).grad_fn), "add_saved": saved((a + b).grad_fn)}
    fn = y.grad_fn
    y.sum().backward()
    try:
        _ = fn._saved_result
        out["freed_raises"] = False
    except RuntimeError:
        out["freed_raises"] = True
    return out


@claim("autograd.second-backward-raises", question=Q,
       statement="backward 一结束，图里为反向保存的张量就被释放：对 `(x.exp()).sum()` 第二次调用 `backward()` 抛出 "
                 "RuntimeError（Trying to backward through the graph a second time），要再反向一次得在第一次传 "
                 "`retain_graph=True`。",
       raises=("RuntimeError", "Trying to backward through the graph a second time"))
def _(ctx):
    x = torch.ones(3, requires_grad=True)
    loss = x.exp().sum()
    loss.backward()
    loss.backward()


@claim("autograd.retain-graph", question=Q,
       statement="第一次传了 `retain_graph=True`，对 `(x * x).sum()` 的第二次 backward 照常执行，`x.grad` 又累加了一份"
                 "（x 全为 1 时变成 {grad_twice}）；报错的前提是节点存过张量：`(x + 1).sum()` 的反向什么都不存，连做两次 "
                 "backward {no_saved_raises:?也会报错|也不报错}。",
       expect={"grad_twice": [4.0, 4.0, 4.0], "no_saved_raises": False})
def _(ctx):
    x = torch.ones(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    z = torch.ones(3, requires_grad=True)
    plain = (z + 1).sum()
    plain.backward()
    try:
        plain.backward()
        raised = False
    except RuntimeError:
        raised = True
    return {"grad_twice": x.grad.tolist(), "no_saved_raises": raised}


@claim("autograd.retain-grad", question=Q,
       statement="只有叶子张量（用户创建、`requires_grad=True`）的 `.grad` 会被填：中间结果 `h = x * 3` {h_leaf:?是|不是}叶子，"
                 "backward 后 `h.grad` {plain_none:?仍是 None|有值}，读它还会触发一条 UserWarning"
                 "（{warned:?有|没有}）；先调 `h.retain_grad()`，`h.grad` 就是 {retained}。",
       expect={"h_leaf": False, "plain_none": True, "warned": True, "retained": [1.0, 1.0, 1.0]})
def _(ctx):
    x = torch.randn(3, requires_grad=True)
    h = x * 3
    h.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plain = h.grad
    warned = any("not a leaf Tensor" in str(w.message) for w in caught)
    x2 = torch.randn(3, requires_grad=True)
    h2 = x2 * 3
    h2.retain_grad()
    h2.sum().backward()
    return {"h_leaf": h.is_leaf, "plain_none": plain is None, "warned": warned, "retained": h2.grad.tolist()}


@claim("autograd.tensor-hook", question=Q,
       statement="tensor hook 能改写流过的梯度：在 `h = x * 3` 上注册 `h.register_hook(lambda g: g * 10)`，"
                 "`h.sum().backward()` 后 `x.grad` 是 {hooked}（不挂 hook 是 {plain}）；hook 返回 None 则只读不改："
                 "只记录梯度的 hook 看到的是 {seen}，`x.grad` 仍是 {readonly}。",
       expect={"hooked": [30.0, 30.0, 30.0], "plain": [3.0, 3.0, 3.0], "seen": [1.0, 1.0, 1.0],
               "readonly": [3.0, 3.0, 3.0]})
def _(ctx):
    out, seen = {}, []
    cases = (("hooked", lambda g: g * 10), ("plain", None), ("readonly", lambda g: seen.append(g.tolist())))
    for name, hook in cases:
        x = torch.randn(3, requires_grad=True)
        h = x * 3
        if hook:
            h.register_hook(hook)
        h.sum().backward()
        out[name] = x.grad.tolist()
    out["seen"] = seen[0]
    return out
