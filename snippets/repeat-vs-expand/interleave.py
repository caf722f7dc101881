"""repeat_interleave: an int count is expand + one copy; a tensor of counts makes the output size data-dependent."""

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


def _aten_ops(fn):
    """The aten overloads ``fn`` reaches, in order, as a TorchDispatchMode sees them."""
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Record() as rec:
        fn()
    return rec.ops


@claim("repeat-interleave.two-paths", question=Q,
       statement="`repeat_interleave` 按次数的类型走两条路（用 `TorchDispatchMode` 记下到达的 aten 算子）：次数是整数时，"
                 "`x.repeat_interleave(2)` 是 {int_ops}，也就是“插一维、expand、拷成连续、摊平”，输出大小在调用前就算得出；"
                 "次数是张量时，`x.repeat_interleave(torch.tensor([1, 2, 3]))` 是 {tensor_ops}：先由次数算出下标，再按下标取。",
       expect={"int_ops": ["aten.unsqueeze.default", "aten.expand.default", "aten.clone.default", "aten.view.default"],
               "tensor_ops": ["aten.repeat_interleave.Tensor", "aten.index_select.default"],
               "int_result": [10, 10, 20, 20, 30, 30], "tensor_result": [10, 20, 20, 30, 30, 30]})
def _(ctx):
    x = torch.tensor([10, 20, 30], device=ctx.device)
    r = torch.tensor([1, 2, 3], device=ctx.device)
    return {"int_ops": _aten_ops(lambda: x.repeat_interleave(2)),
            "tensor_ops": _aten_ops(lambda: x.repeat_interleave(r)),
            "int_result": x.repeat_interleave(2).tolist(), "tensor_result": x.repeat_interleave(r).tolist()}


@claim("repeat-interleave.size-from-values", question=Q,
       statement="次数是张量时，输出有多长取决于次数的值，不只是形状：在只有形状、没有数据的 meta 张量上，"
                 "`repeat_interleave(r)` {meta_raises:?抛出|不抛出} RuntimeError（“{meta_message}”），"
                 "不带 ShapeEnv 的 `FakeTensorMode` 里抛出 {fake_error}；传入 `output_size=6`，两者都直接给出形状 "
                 "{meta_shape}。",
       expect={"meta_raises": True, "meta_message": {"contains": "without output_size"},
               "fake_error": "DynamicOutputShapeException", "meta_shape": [6], "fake_shape": [6]})
def _(ctx):
    from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: PLC0415

    x = torch.tensor([10, 20, 30], device="meta")
    r = torch.tensor([1, 2, 3], device="meta")
    try:
        x.repeat_interleave(r)
        meta_raises, meta_message = False, ""
    except RuntimeError as exc:
        meta_raises, meta_message = True, str(exc)[:120]
    meta_shape = list(x.repeat_interleave(r, output_size=6).shape)
    with FakeTensorMode() as mode:
        fx = mode.from_tensor(torch.tensor([10, 20, 30]))
        fr = mode.from_tensor(torch.tensor([1, 2, 3]))
        try:
            fx.repeat_interleave(fr)
            fake_error = ""
        except Exception as exc:  # noqa: BLE001 - the exception's type is what is observed
            fake_error = type(exc).__name__
        fake_shape = list(fx.repeat_interleave(fr, output_size=6).shape)
    return {"meta_raises": meta_raises, "meta_message": meta_message, "fake_error": fake_error,
            "meta_shape": meta_shape, "fake_shape": fake_shape}


@claim("repeat-interleave.output-size-checked", question=Q,
       statement="`output_size` 必须正好等于次数之和：CPU 上 `x.repeat_interleave(torch.tensor([1, 2, 3]), output_size=6)` "
                 "和不传时{same:?结果相同|结果不同}；传 5 或 7，CPU kernel 在写结果前比对累加和，{wrong_raise:?都抛出|并不都抛出} "
                 "RuntimeError（“{message}”），既不截断也不补齐。",
       expect={"same": True, "wrong_raise": True, "message": "allocated size does not match required size",
               "raised_for": [5, 7]})
def _(ctx):
    # CPU on purpose: compute_cpu checks the size on the host; the CUDA kernel's check is a device-side assert.
    x = torch.tensor([10, 20, 30])
    r = torch.tensor([1, 2, 3])
    same = torch.equal(x.repeat_interleave(r, output_size=6), x.repeat_interleave(r))
    raised_for, message = [], ""
    for n in (5, 7):
        try:
            x.repeat_interleave(r, output_size=n)
        except RuntimeError as exc:
            raised_for.append(n)
            message = str(exc).splitlines()[0][:120]
    return {"same": same, "wrong_raise": raised_for == [5, 7], "message": message, "raised_for": raised_for}


@claim("repeat-interleave.compile-graph-break", question=Q, timeout=120,
       statement="`torch.compile` 也卡在这里：用一个只记下图的后端编译 `f(x, r) = x.repeat_interleave(r) * 2`（`r` 是张量），"
                 "得到的图是 {graphs_without}：`repeat_interleave` 不在图里，Dynamo 在它前面断图、把它留给 eager 执行；"
                 "传入 `output_size=6`，图是 {graphs_with}，它进了图。",
       expect={"graphs_without": [["mul"]], "graphs_with": [["repeat_interleave", "mul"]], "same": True})
def _(ctx):
    import operator  # noqa: PLC0415

    x = torch.tensor([10.0, 20.0, 30.0])
    r = torch.tensor([1, 2, 3])

    def graphs_of(**kwargs):
        graphs = []

        def backend(gm, example_inputs):
            graphs.append([("mul" if n.target is operator.mul else str(n.target)) for n in gm.graph.nodes
                           if n.op in ("call_function", "call_method")])
            return gm

        torch._dynamo.reset()
        out = torch.compile(lambda a, b: a.repeat_interleave(b, **kwargs) * 2, backend=backend)(x, r)
        return graphs, out

    without, out_without = graphs_of()
    with_size, out_with = graphs_of(output_size=6)
    torch._dynamo.reset()
    return {"graphs_without": without, "graphs_with": with_size,
            "same": torch.equal(out_without, out_with) and torch.equal(out_with, x.repeat_interleave(r) * 2)}


@claim("repeat-interleave.cuda-sync", question=Q, needs=["cuda"],
       statement="在 GPU 上打开 `torch.cuda.set_sync_debug_mode(\"error\")`：次数 `r` 是 GPU 张量时，"
                 "`x.repeat_interleave(r)` {sync_without:?抛出|不抛出} RuntimeError（它要把次数之和拷回主机，是一次同步）；"
                 "传入 `output_size=` 后{sync_with:?仍然抛出|不抛出}，结果{same:?和不传时相同|和不传时不同}；整数次数 "
                 "`x.repeat_interleave(2)` {sync_int:?抛出|不抛出}。",
       expect={"sync_without": True, "message": {"contains": "synchroniz"}, "sync_with": False, "same": True,
               "sync_int": False})
def _(ctx):
    """sync debug 模式设为 error 时，次数为 GPU 张量的 repeat_interleave 带与不带 output_size、以及整数次数是否触发同步。"""
    x = torch.arange(3, device="cuda")
    r = torch.tensor([1, 2, 3], device="cuda")
    reference = x.repeat_interleave(r)  # before the debug mode: the result to compare with
    torch.cuda.synchronize()

    def raises(fn):
        try:  # no torch.cuda.synchronize() in here: under this mode it would raise itself
            fn()
            return False, ""
        except RuntimeError as exc:
            return True, str(exc)[:160]

    torch.cuda.set_sync_debug_mode("error")
    try:
        sync_without, message = raises(lambda: x.repeat_interleave(r))
        sync_with, _ = raises(lambda: x.repeat_interleave(r, output_size=6))
        sync_int, _ = raises(lambda: x.repeat_interleave(2))
        with_size = x.repeat_interleave(r, output_size=6)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    return {"sync_without": sync_without, "message": message, "sync_with": sync_with,
            "same": torch.equal(with_size, reference), "sync_int": sync_int}
