"""The Python route into the same dispatcher: torch.library.custom_op and torch.library.Library."""

from __future__ import annotations

import torch

from verify.claim import claim


def registered_keys(op: str) -> list[str]:
    keys = []
    for line in torch._C._dispatch_dump(op).splitlines():
        key, sep, _ = line.partition(": registered at")
        if sep and "::" not in key and key.strip() != "debug":
            keys.append(key.strip())
    return keys


def _triple(name: str):
    @torch.library.custom_op(name, mutates_args=())
    def triple(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    return triple


@claim(
    "pylib.custom-op-same-table",
    question="op-registration",
    statement="`torch.library.custom_op` 注册进的是同一个 dispatcher，而且同样是执行代码的副作用：装饰器执行之前 "
    "`torch.ops` 下没有它，执行之后就能调用，表里登记了 CompositeExplicitAutograd（实现）、Autograd 和 Meta；"
    "但在 `register_fake` 之前对 Meta tensor 调用仍然报错，注册 fake 之后才能只推形状。",
    expect={
        "before_define": False,
        "registered": ["Autograd[alias]", "CompositeExplicitAutograd[alias]", "Meta"],
        "result": [3.0, 3.0],
        "meta_before_fake": {"contains": "no fake impl"},
        "meta_after_fake": [2],
    },
)
def _(ctx):
    before = hasattr(torch.ops.opreg_py, "triple")
    triple = _triple("opreg_py::triple")
    keys = sorted(registered_keys("opreg_py::triple"))
    result = torch.ops.opreg_py.triple(torch.ones(2)).tolist()
    try:
        torch.ops.opreg_py.triple(torch.empty(2, device="meta"))
        meta_before = "no error"
    except RuntimeError as exc:
        meta_before = str(exc).split(". ")[0]

    @triple.register_fake
    def _(x):
        return torch.empty_like(x)

    meta_after = list(torch.ops.opreg_py.triple(torch.empty(2, device="meta")).shape)
    return {"before_define": before, "registered": keys, "result": result, "meta_before_fake": meta_before,
            "meta_after_fake": meta_after}


@claim(
    "pylib.custom-op-no-autograd",
    question="op-registration",
    statement="和 C++ 路线不同，`custom_op` 没有 `register_autograd` 时，反向直接报错，不会给一条警告后悄悄算出错的梯度。",
    raises=("RuntimeError", "no autograd formula was registered"),
)
def _(ctx):
    _triple("opreg_py::triple_nograd")
    x = torch.ones(2, requires_grad=True)
    y = torch.ops.opreg_py.triple_nograd(x)
    ctx.observe(forward_ok=True, output_requires_grad=y.requires_grad)
    y.sum().backward()


@claim(
    "pylib.library-missing-backend",
    question="op-registration",
    statement="用 `torch.library.Library` 只为 CPU 注册 kernel 的算子，拿稀疏 tensor（SparseCPU 键，表里这一列没有 kernel）"
    "调用时，得到那条熟悉的“Could not run … with arguments from the 'SparseCPU' backend”，错误信息后面列出它能处理的键。",
    raises=("NotImplementedError", "with arguments from the 'SparseCPU' backend"),
)
def _(ctx):
    lib = torch.library.Library("opreg_py2", "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.impl("neg", lambda x: -x, "CPU")
    ctx.observe(registered=registered_keys("opreg_py2::neg"), cpu_result=torch.ops.opreg_py2.neg(torch.ones(2)).tolist())
    try:
        torch.ops.opreg_py2.neg(torch.eye(2).to_sparse())  # keys: SparseCPU, AutogradCPU, ...
    except NotImplementedError as exc:
        text = str(exc)
        ctx.observe(message=text.split(". ")[0],
                    available_for=text[text.find("only available for these backends"):].split(".")[0])
        raise
    finally:
        lib._destroy()


@claim(
    "pylib.dispatch-order",
    question="op-registration",
    statement="调用时先执行优先级最高的键：给一个算子在 AutogradCPU 和 CPU 两列各注册一个会记下名字的 kernel，"
    "普通 tensor 的调用（无论 `requires_grad`）先进 AutogradCPU，它在 autograd 之下重新分发，才进 CPU；"
    "`torch.inference_mode()` 里新建的 tensor 直接进 CPU。",
    expect={
        "plain": ["AutogradCPU", "CPU"],
        "requires_grad": ["AutogradCPU", "CPU"],
        "inference_mode": ["CPU"],
    },
)
def _(ctx):
    calls: list[str] = []
    lib = torch.library.Library("opreg_py3", "DEF")
    try:
        lib.define("trace(Tensor x) -> Tensor")

        def cpu_kernel(x):
            calls.append("CPU")
            return x.clone()

        def autograd_kernel(x):
            calls.append("AutogradCPU")
            with torch._C._AutoDispatchBelowAutograd():  # skip the autograd keys on the way down
                return torch.ops.opreg_py3.trace(x)

        lib.impl("trace", cpu_kernel, "CPU")
        lib.impl("trace", autograd_kernel, "AutogradCPU")
        seen = {}
        for name, make in (("plain", lambda: torch.ones(2)), ("requires_grad", lambda: torch.ones(2, requires_grad=True))):
            calls.clear()
            torch.ops.opreg_py3.trace(make())
            seen[name] = list(calls)
        with torch.inference_mode():
            calls.clear()
            torch.ops.opreg_py3.trace(torch.ones(2))
            seen["inference_mode"] = list(calls)
    finally:
        lib._destroy()
    return seen
