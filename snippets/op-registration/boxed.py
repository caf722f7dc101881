"""Boxed kernels and the Python dispatch key: __torch_dispatch__, TorchDispatchMode and a boxed fallback."""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "op-registration"
DK = torch._C.DispatchKey


def names(ks) -> list[str]:
    text = str(ks)  # "DispatchKeySet(CPU, AutogradCPU)", lowest priority first
    return [k.strip() for k in text[text.index("(") + 1 : text.rindex(")")].split(",") if k.strip()]


def table_rows(op: str, keys: tuple[str, ...]) -> dict[str, str]:
    """Key -> "<kind>（<file>）" of the op's dispatch table, for the keys asked for."""
    out = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        key, _, rest = line.partition(":")
        if key in keys and "[" in rest:
            kind = rest[rest.rfind("[") + 1 : rest.rfind("]")]
            where = rest.split("registered at", 1)[-1].strip().split(" ")[0].rsplit("/", 1)[-1].split(":")[0]
            out[key] = f"{kind}（{where}）"
    return out


def _subclass_tensor():
    class Passthrough(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    return torch.Tensor._make_subclass(Passthrough, torch.ones(2))


@claim("boxed.python-key", question=Q,
       statement="Python 也只是表里的一列。普通 CPU tensor 的 keyset 是 {plain}（按优先级从低到高）；一个定义了 "
                 "`__torch_dispatch__` 的子类 tensor 是 {subclass}：多出的 Python 键排在 CPU 之上、ADInplaceOrView 和 "
                 "AutogradCPU 之下，PythonTLSSnapshot 排在最前。`aten::add.Tensor` 这两列都是 {rows.Python}："
                 "C++ 里一个通用的 boxed kernel，对任何算子都是同一个函数，由它把调用交给 Python。`TorchDispatchMode` "
                 "不改 tensor，而是在进入时把这两个键放进线程局部 included 集合（Python {mode_includes_python:?在其中|不在其中}，"
                 "PythonTLSSnapshot {mode_includes_snapshot:?也在|不在}）。",
       expect={"plain": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
               "subclass": ["CPU", "Python", "ADInplaceOrView", "AutogradCPU", "AutocastCPU", "PythonTLSSnapshot"],
               "rows": {"Python": "backend fallback（PythonFallbackKernel.cpp）",
                        "PythonTLSSnapshot": "backend fallback（PythonFallbackKernel.cpp）"},
               "mode_includes_python": True, "mode_includes_snapshot": True, "included_outside": False})
def _(ctx):
    from snippets._workloads.modes import Mode  # noqa: PLC0415

    class Nothing(Mode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    outside = torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)
    with Nothing():
        inc_python = torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)
        inc_snapshot = torch._C._dispatch_tls_is_dispatch_key_included(DK.PythonTLSSnapshot)
    return {"plain": names(torch._C._dispatch_keys(torch.ones(2))),
            "subclass": names(torch._C._dispatch_keys(_subclass_tensor())),
            "rows": table_rows("aten::add.Tensor", ("Python", "PythonTLSSnapshot")),
            "mode_includes_python": inc_python, "mode_includes_snapshot": inc_snapshot, "included_outside": outside}


@claim("boxed.mode-below-autograd", question=Q,
       statement="所以 `__torch_dispatch__` 看到的是 autograd 之后的调用。一个记下每个 aten 调用的 `TorchDispatchMode` 里，"
                 "对要梯度的 `x`、`w` 做 `y = torch.matmul(x, w).sum()`，前向看到 {forward}：`matmul` 是 "
                 "CompositeImplicitAutograd，在 Autograd 列就拆成了 `mm`；它拿到的每个输出{outputs_plain:?都还没有|已经有} `grad_fn`"
                 "（上一层的 autograd kernel 等它返回才接上计算图），而 `y` 是 {y_grad_fn}。`y.backward()` 时它看到 "
                 "{backward}：反向也是一串普通的 aten 调用，同样经过它。",
       expect={"forward": ["aten.mm.default", "aten.sum.default"],
               "backward": ["aten.ones_like.default", "aten.expand.default", "aten.t.default", "aten.mm.default",
                            "aten.t.default", "aten.mm.default", "aten.detach.default", "aten.detach.default"],
               "outputs_plain": True, "y_grad_fn": "SumBackward0", "grads_match": True})
def _(ctx):
    from snippets._workloads.modes import Mode  # noqa: PLC0415

    class Record(Mode):
        def __init__(self):
            super().__init__()
            self.ops, self.grad_fns = [], []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.ops.append(str(func))
            self.grad_fns.append(getattr(out, "grad_fn", None))
            return out

    torch.manual_seed(0)
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    with Record() as rec:
        y = torch.matmul(x, w).sum()
        forward, forward_grad_fns = list(rec.ops), list(rec.grad_fns)
        rec.ops.clear()
        y.backward()
        backward = list(rec.ops)
    ones = torch.ones(2, 4)
    return {"forward": forward, "backward": backward, "outputs_plain": all(g is None for g in forward_grad_fns),
            "y_grad_fn": type(y.grad_fn).__name__,
            "grads_match": torch.allclose(x.grad, ones @ w.detach().t()) and torch.allclose(w.grad, x.detach().t() @ ones)}


@claim("boxed.cpu-fallback-any-schema", question=Q,
       statement="boxed kernel 的用处是一个函数接住所有算子。用 `Library(\"_\", \"IMPL\").fallback(fn, \"CPU\")` 在 CPU 列注册一个 "
                 "Python 的 backend fallback，再定义两个没有 CPU kernel、签名不同的算子：表里它们的 CPU 列是 {scale_cpu_row}，"
                 "同一个 `fn` 先后收到 {calls}（算子句柄加一串参数，对应 C++ 里的 `OperatorHandle` 和 `Stack`），按算子名算出结果 "
                 "{results}。`torch.ones(2) + 1` 有自己的 CPU kernel，不经过它：被接住的 aten 调用有 {aten_calls} 个。",
       expect={"scale_cpu_row": "backend fallback",
               "calls": [["opreg_box.scale.default", ["Tensor", "float"], []],
                         ["opreg_box.pair.default", ["Tensor", "Tensor"], ["n"]]],
               "results": [[3.0, 3.0], [3.0, 3.0]], "aten_calls": 0})
def _(ctx):
    calls: list = []
    ops = torch.library.Library("opreg_box", "DEF")
    fb = torch.library.Library("_", "IMPL")
    try:
        ops.define("scale(Tensor x, float s) -> Tensor")
        ops.define("pair(Tensor x, Tensor y, *, int n=1) -> Tensor")

        def fallback(op, *args, **kwargs):
            calls.append([str(op), [type(a).__name__ for a in args], sorted(kwargs)])
            if str(op) == "opreg_box.scale.default":
                return args[0] * args[1]
            if str(op) == "opreg_box.pair.default":
                return args[0] + args[1] * kwargs.get("n", 1)
            raise NotImplementedError(str(op))

        fb.fallback(fallback, "CPU")
        a = torch.ones(2)
        results = [torch.ops.opreg_box.scale(a, 3.0).tolist(), torch.ops.opreg_box.pair(a, a, n=2).tolist()]
        row = table_rows("opreg_box::scale", ("CPU",)).get("CPU", "").split("（")[0]
        seen = len(calls)
        _ = torch.ones(2) + 1
        aten_calls = sum(1 for c in calls[seen:] if c[0].startswith("aten."))
    finally:
        fb._destroy()
        ops._destroy()
    return {"scale_cpu_row": row, "calls": calls[:seen], "results": results, "aten_calls": aten_calls}
