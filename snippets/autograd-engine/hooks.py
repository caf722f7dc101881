"""Module hooks: forward hooks read intermediate features by module name; full backward hooks read the
gradients at a module's inputs and outputs (the old non-full hook reads those of its last node)."""

from __future__ import annotations

import warnings

import torch
from torch import nn

from verify.claim import claim

Q = "autograd-engine"
D, H, B = 8, 16, 4


class Block(nn.Module):
    def __init__(self, d=D, h=H):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(d, h), nn.ReLU(), nn.Linear(h, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


@claim("autograd.forward-hook-features", question=Q,
       statement="按名字取中间特征：对两个残差块串成的 `nn.Sequential`，遍历 `named_modules()`，给每个 Linear 和 ReLU "
                 "注册 `register_forward_hook(fn)`（`fn(module, input, output)`），一次前向后字典里有 {n_captured} 项，"
                 "键是 {names}，`'1.fc1'` 的输出形状是 {shape_1_fc1}；`handle.remove()` 之后再前向，字典里新增 "
                 "{after_remove} 项。",
       expect={"n_captured": 6, "names": ["0.fc1", "0.act", "0.fc2", "1.fc1", "1.act", "1.fc2"],
               "shape_1_fc1": [4, 16], "after_remove": 0})
def _(ctx):
    net = nn.Sequential(Block(), Block())
    feats, handles = {}, []
    for name, mod in net.named_modules():
        if isinstance(mod, (nn.Linear, nn.ReLU)):
            handles.append(mod.register_forward_hook(
                lambda m, inp, out, name=name: feats.__setitem__(name, out.detach())))
    net(torch.randn(B, D))
    captured = dict(feats)
    for h in handles:
        h.remove()
    feats.clear()
    net(torch.randn(B, D))
    return {"n_captured": len(captured), "names": list(captured), "shape_1_fc1": list(captured["1.fc1"].shape),
            "after_remove": len(feats)}


@claim("autograd.forward-hook-replaces", question=Q,
       statement="forward hook 的返回值不为 None 时替换模块的输出：在 ReLU 上挂一个返回 `out * 0` 的 hook，"
                 "分支只剩 fc2 的 bias，整个残差块的输出与 `x + fc2.bias` {equals_input:?逐位相等|不相等}。",
       expect={"equals_input": True})
def _(ctx):
    block = Block()
    block.act.register_forward_hook(lambda m, inp, out: out * 0)
    x = torch.randn(B, D)
    return {"equals_input": torch.equal(block(x), x + block.fc2.bias)}


@claim("autograd.full-backward-hook", question=Q,
       statement="`register_full_backward_hook(fn)` 的 `fn(module, grad_input, grad_output)` 给的是模块输入和输出处的梯度："
                 "挂在第二个残差块上，`grad_output` 有 {n_gout} 项、等于传进来的上游梯度（{gout_ok:?逐位相等|不相等}），"
                 "`grad_input` 有 {n_gin} 项、等于块输入 `retain_grad()` 得到的 `.grad`（{gin_ok:?逐位相等|不相等}），"
                 "参数的梯度不在其中。它的做法是在模块的输入和输出上各套一个恒等的 autograd Function：块输出的 `grad_fn` 变成了 "
                 "{out_grad_fn}。",
       expect={"n_gout": 1, "gout_ok": True, "n_gin": 1, "gin_ok": True, "out_grad_fn": "BackwardHookFunctionBackward"})
def _(ctx):
    net = nn.Sequential(Block(), Block())
    got = {}
    net[1].register_full_backward_hook(lambda m, gin, gout: got.update(gin=gin, gout=gout))
    x = torch.randn(B, D, requires_grad=True)
    mid = net[0](x)
    mid.retain_grad()
    g = torch.randn(B, D)
    out = net[1](mid)
    grad_fn = type(out.grad_fn).__name__
    out.backward(g)
    return {"n_gout": len(got["gout"]), "gout_ok": torch.equal(got["gout"][0], g),
            "n_gin": len(got["gin"]), "gin_ok": torch.equal(got["gin"][0], mid.grad), "out_grad_fn": grad_fn}


@claim("autograd.nonfull-backward-hook", question=Q,
       statement="旧的 `register_backward_hook` 挂在模块最后一个节点上：残差块最后一步是 AddBackward0，于是它的 "
                 "`grad_input` 是加法两个输入的梯度（{n_gin} 项），第一项就是上游梯度本身（{gin0_is_upstream:?逐位相等|不相等}），"
                 "而不是块输入的梯度（{gin0_is_input_grad:?相等|不相等}）；torch 同时发出一条 "
                 "“non-full backward hook … deprecated” 的警告（{warned:?有|没有}）。",
       expect={"n_gin": 2, "gin0_is_upstream": True, "gin0_is_input_grad": False, "warned": True})
def _(ctx):
    block = Block()
    got = {}
    x = torch.randn(B, D, requires_grad=True)
    g = torch.randn(B, D)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        block.register_backward_hook(lambda m, gin, gout: got.update(gin=gin))
        block(x).backward(g)
    warned = any("non-full backward hook" in str(w.message) for w in caught)
    return {"n_gin": len(got["gin"]), "gin0_is_upstream": torch.equal(got["gin"][0], g),
            "gin0_is_input_grad": torch.equal(got["gin"][0], x.grad), "warned": warned}
