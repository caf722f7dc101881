"""``detach()`` and ``.data``: both share the storage; only ``detach()`` shares the version counter that
lets autograd notice an in-place change of a tensor it saved for backward."""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "autograd-engine"
INPLACE = ("RuntimeError", "one of the variables needed for gradient computation has been modified by an inplace operation")


@claim("autograd.detach-shares", question=Q,
       statement="`d = s.detach()` 不复制数据：`d.data_ptr() == s.data_ptr()` {same_ptr:?成立|不成立}，`d` "
                 "{d_requires_grad:?仍要求梯度|不要求梯度}、{d_leaf:?是|不是}叶子；两者还共用一个版本计数器："
                 "`d.mul_(2)` 之后 `s._version` 从 {version_before} 变成 {version_after}，`s` 的值也跟着{changed:?变了|没变}。"
                 "要一份独立的副本得用 `clone()`（数据指针{clone_same_ptr:?相同|不同}）。",
       expect={"same_ptr": True, "d_requires_grad": False, "d_leaf": True, "version_before": 0, "version_after": 1,
               "changed": True, "clone_same_ptr": False})
def _(ctx):
    a = torch.randn(5, requires_grad=True)
    s = a.sigmoid()
    d = s.detach()
    before = s._version
    old = s.clone()
    d.mul_(2)
    return {"same_ptr": d.data_ptr() == s.data_ptr(), "d_requires_grad": d.requires_grad, "d_leaf": d.is_leaf,
            "version_before": before, "version_after": s._version, "changed": not torch.equal(s, old),
            "clone_same_ptr": s.clone().data_ptr() == s.data_ptr()}


@claim("autograd.detach-inplace-raises", question=Q,
       statement="`sigmoid` 的反向要用它的输出，autograd 把输出存进图里并记下当时的版本号；对 `s.detach()` 原地 `mul_` "
                 "会让版本号加一，于是 `s.sum().backward()` 抛出 RuntimeError（one of the variables needed for gradient "
                 "computation has been modified by an inplace operation）：此时 s 的版本号是 {version}，信息里同时给出图里记下的版本号。",
       raises=INPLACE, expect={"version": 1})
def _(ctx):
    a = torch.randn(5, requires_grad=True)
    s = a.sigmoid()
    s.detach().mul_(2)
    ctx.observe(version=s._version)
    s.sum().backward()


@claim("autograd.data-silent-wrong", kind="measured", question=Q,
       statement="换成 `s.data.mul_(2)`：`.data` 同样共享存储，但版本号{version_bumped:?加了一|没有变}（仍是 {version}），"
                 "backward {raised:?报错|不报错}，却用改过的 s 算出 `σ'`：`a.grad` 与正确梯度的最大差 {max_err:.3f}，"
                 "恰好等于用乘过 2 的 `t = s.detach()` 算出的 `t·(1−t)`（{matches_formula:?逐位相等|不相等}），这组输入里有 {n_negative} 个分量成了负数（个数随输入而变），"
                 "而 sigmoid 的导数处处为正。",
       expect={"version_bumped": False, "version": 0, "raised": False, "max_err": {">": 0.1}, "matches_formula": True})
def _(ctx):
    a = torch.randn(5, requires_grad=True)
    s = a.sigmoid()
    correct = (s * (1 - s)).detach()
    s.data.mul_(2)
    try:
        s.sum().backward()
        raised = False
    except RuntimeError:
        raised = True
    s2 = s.detach()
    return {"version_bumped": s._version != 0, "version": s._version, "raised": raised,
            "max_err": (a.grad - correct).abs().max().item(),
            "matches_formula": torch.equal(a.grad, s2 * (1 - s2)),
            "n_negative": int((a.grad < 0).sum())}


@claim("autograd.no-grad-inplace", question=Q,
       statement="不想记录梯度、又要原地改值时用 `torch.no_grad()`：在它里面 `s.mul_(2)` 照样让版本号变成 {version}，"
                 "若 `s` 正被图保存着，之后的 backward {raised:?照样报 inplace 错误|不报错}，而不会像 `.data` 那样悄悄算错。",
       expect={"version": 1, "raised": True})
def _(ctx):
    a = torch.randn(5, requires_grad=True)
    s = a.sigmoid()
    with torch.no_grad():
        s.mul_(2)
    try:
        s.sum().backward()
        raised = False
    except RuntimeError as exc:
        raised = "modified by an inplace operation" in str(exc)
    return {"version": s._version, "raised": raised}
