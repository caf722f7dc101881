"""expand against repeat: strides, storage, views and what writes do."""

import warnings

import torch

from verify.claim import claim

Q = "repeat-vs-expand"
# TensorIterator's internal-overlap check, raised when the written tensor has elements that alias
OVERLAP = ("RuntimeError", "more than one element of the written-to tensor refers to a single memory location")

# What torch._debug_has_internal_overlap returns, by the names of ATen's MemOverlap enum.
_OVERLAP = {0: "No", 1: "Yes", 2: "TooHard"}


def _row(device):
    return torch.tensor([[1, 2, 3]], device=device)  # (1, 3) int64


@claim("expand.stride-zero", question=Q,
       statement="对形状 {x_shape} 的 `x` 做 `y = x.expand(4, 3)`，得到形状 {shape}、stride {stride} 的张量："
                 "被扩展的那一维 stride 为 0，沿它走一步地址不动，所以每一行读到的都是同一行数据。",
       expect={"x_shape": [1, 3], "shape": [4, 3], "stride": [0, 1], "x_stride": [3, 1]})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    return {"x_shape": list(x.shape), "shape": list(y.shape), "stride": y.stride(), "x_stride": x.stride()}


@claim("expand.shares-storage", question=Q,
       statement="`y` 和 `x` 共用同一块存储：数据指针相同，`y` 的存储仍然只有 {y_storage_numel} 个 int64、"
                 "共 {y_storage_bytes:bytes}，而它逻辑上有 {logical_numel} 个元素（{logical_bytes:bytes}）。",
       expect={"same_data_ptr": True, "same_storage_ptr": True, "x_storage_bytes": 24, "y_storage_bytes": 24,
               "y_storage_numel": 3, "logical_numel": 12, "logical_bytes": 96})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    return {
        "same_data_ptr": y.data_ptr() == x.data_ptr(),
        "same_storage_ptr": y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
        "x_storage_bytes": x.untyped_storage().nbytes(),
        "y_storage_bytes": y.untyped_storage().nbytes(),
        "y_storage_numel": y.untyped_storage().nbytes() // y.element_size(),
        "logical_numel": y.numel(),
        "logical_bytes": y.numel() * y.element_size(),
    }


@claim("expand.not-contiguous", question=Q,
       statement="stride 为 0 的布局不是紧密排列，所以 `y` 不是 contiguous 的。",
       expect={"is_contiguous": False})
def _(ctx):
    return {"is_contiguous": _row(ctx.device).expand(4, 3).is_contiguous()}


@claim("expand.is-view", question=Q,
       statement="`y` 是 `x` 的一个 view：`y._base` 就是 `x`。",
       expect={"is_view": True, "base_is_x": True})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    return {"is_view": y._is_view(), "base_is_x": y._base is x}


@claim("repeat.copies", question=Q,
       statement="`z = x.repeat(4, 1)` 分配新内存、把数据复制 4 份：stride 是 {stride}，是 contiguous 的，"
                 "存储有 {storage_bytes:bytes}，是 `x` 的 {storage_ratio} 倍，数据指针和 `x` 不同。",
       expect={"shape": [4, 3], "stride": [3, 1], "is_contiguous": True, "storage_bytes": 96, "storage_ratio": 4,
               "same_data_ptr": False, "values": [[1, 2, 3]] * 4})
def _(ctx):
    x = _row(ctx.device)
    z = x.repeat(4, 1)
    return {"shape": list(z.shape), "stride": z.stride(), "is_contiguous": z.is_contiguous(),
            "storage_bytes": z.untyped_storage().nbytes(),
            "storage_ratio": z.untyped_storage().nbytes() // x.untyped_storage().nbytes(),
            "same_data_ptr": z.data_ptr() == x.data_ptr(), "values": z.tolist()}


@claim("repeat.new-tensor", question=Q,
       statement="`z` 是一个全新的张量，不是 view：它没有 `_base`。",
       expect={"is_view": False, "base_is_none": True})
def _(ctx):
    z = _row(ctx.device).repeat(4, 1)
    return {"is_view": z._is_view(), "base_is_none": z._base is None}


# --- writing into an expanded tensor ------------------------------------------------------------

@claim("expand.overlap-rule", question=Q,
       statement="在 CPU 张量上，`torch._debug_has_internal_overlap` 给出的正是这项检查的结论：`y[:]`（stride "
                 "{written_stride.all}）和 `y[:, 0]`（stride {written_stride.col}）的结果是 {overlap.all}、"
                 "{overlap.col}，对它们赋值 5 都抛出 RuntimeError；`y[0]`（stride {written_stride.row}）和单个元素 "
                 "`y[0, 0]` 的结果是 {overlap.row}、{overlap.elem}，赋值成功。",
       expect={"overlap": {"all": "Yes", "col": "Yes", "row": "No", "elem": "No"},
               "assign_raises": {"all": True, "col": True, "row": False, "elem": False},
               "written_stride": {"all": [0, 1], "col": [0], "row": [1], "elem": []}})
def _(ctx):
    # CPU on purpose: on a CUDA tensor the Python scalar stays on the CPU and the assignment takes
    # another path (see expand.cuda-scalar-assign).
    targets = {"all": (slice(None),), "col": (slice(None), 0), "row": (0,), "elem": (0, 0)}
    overlap, raises, strides, messages = {}, {}, {}, {}
    for name, index in targets.items():
        y = _row("cpu").expand(4, 3)
        view = y[index]
        overlap[name] = _OVERLAP[torch._debug_has_internal_overlap(view)]
        strides[name] = view.stride()
        try:
            y[index] = 5
            raises[name] = False
        except RuntimeError as exc:
            raises[name] = True
            messages[name] = str(exc)[:100]
    return {"overlap": overlap, "assign_raises": raises, "written_stride": strides, "messages": messages}


@claim("expand.inplace-op-raises", question=Q,
       statement="原地算术写的是 `y` 本身：`y.add_(1)` 抛出 RuntimeError（“more than one element of the "
                 "written-to tensor refers to a single memory location”），并提示先 `clone()`。",
       raises=OVERLAP)
def _(ctx):
    y = _row(ctx.device).expand(4, 3)
    ctx.observe(stride=y.stride())
    y.add_(1)


@claim("expand.index-column-raises", question=Q,
       statement="索引赋值同样可能报错：在 CPU 张量上，`y[:, 0] = 5` 写的是 `y[:, 0]` 这个 view，它的 stride 是 "
                 "{col_stride}，{col_numel} 个元素落在同一个地址上，于是抛出同一个 RuntimeError。",
       raises=OVERLAP)
def _(ctx):
    y = _row("cpu").expand(4, 3)  # CPU on purpose, as in expand.overlap-rule
    ctx.observe(col_stride=y[:, 0].stride(), col_numel=y[:, 0].numel())
    y[:, 0] = 5


@claim("expand.index-write-aliases", question=Q,
       statement="`y[0, 0] = 100` 写的是单个元素的 view，没有重叠，所以不报错：它写进那个唯一的共享元素，"
                 "`y[:, 0]` 变成 {column0_after}，`x` 那一行变成 {x_after}。",
       expect={"x_after": [100, 2, 3], "column0_after": [100, 100, 100, 100]})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    y[0, 0] = 100
    return {"x_after": x[0].tolist(), "column0_after": y[:, 0].tolist()}


@claim("expand.index-row-writes-through", question=Q,
       statement="`y[0] = torch.tensor([7, 8, 9])` 也成功：`y[0]` 的 stride 是 {row_stride}，没有重叠，"
                 "而它就是 `x` 的那一行，于是 `x` 变成 {x_after}，`y` 的 {rows} 行全部跟着变成同样的值。",
       expect={"row_stride": [1], "x_after": [7, 8, 9], "rows": 4, "all_rows": [[7, 8, 9]] * 4})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    row_stride = y[0].stride()
    y[0] = torch.tensor([7, 8, 9], device=ctx.device)
    return {"row_stride": row_stride, "x_after": x[0].tolist(), "rows": y.shape[0], "all_rows": y.tolist()}


@claim("expand.fill-writes-through", question=Q,
       statement="`fill_` 和 `zero_` 虽然也是对整个 `y` 的原地写，却都成功并写穿到原张量：`y.fill_(7)` 之后 "
                 "`x` 那一行是 {x_after_fill}，`y.zero_()` 之后是 {x_after_zero}。",
       expect={"x_after_fill": [7, 7, 7], "x_after_zero": [0, 0, 0], "overlap": "Yes",
               "column0_after_fill": [7, 7, 7, 7]})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    overlap = _OVERLAP[torch._debug_has_internal_overlap(y)]
    y.fill_(7)
    after_fill, column0 = x[0].tolist(), y[:, 0].tolist()
    y.zero_()
    return {"overlap": overlap, "x_after_fill": after_fill, "column0_after_fill": column0,
            "x_after_zero": x[0].tolist()}


@claim("expand.fill-tensor-raises", question=Q,
       statement="豁免只属于标量版本：把 7 换成同一设备上的零维张量，`y.fill_(torch.tensor(7))` 就和 `add_` "
                 "一样抛出 RuntimeError。",
       raises=OVERLAP)
def _(ctx):
    y = _row(ctx.device).expand(4, 3)
    y.fill_(torch.tensor(7, device=ctx.device))


@claim("expand.cuda-scalar-assign", question=Q, needs=["cuda"],
       statement="GPU 张量上 `y[:, 0] = 5` {raised:?抛出 RuntimeError|不报错、直接写穿}：`x` 那一行变成 {x_after}。",
       expect={"raised": False, "x_after": [5, 2, 3]})
def _(ctx):
    """GPU 张量的 expand 结果上 y[:, 0] = 5 是否报错，以及 x 那一行被写成什么。"""
    x = _row("cuda")
    y = x.expand(4, 3)
    try:
        y[:, 0] = 5
        raised = False
    except RuntimeError as exc:
        ctx.observe(message=str(exc)[:160])
        raised = True
    return {"raised": raised, "x_after": x[0].tolist()}


@claim("expand.advanced-index-warns", question=Q,
       statement="高级索引也不走这项检查：`y[torch.tensor([0, 1]), 0] = 5` 由 `index_put_` 执行，只发出一条"
                 "弃用警告（“Use of index_put_ on expanded tensors is deprecated”），照样写穿，`x` 那一行变成 "
                 "{x_after}。",
       expect={"warning": {"contains": "index_put_ on expanded tensors is deprecated"}, "x_after": [5, 2, 3]})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y[torch.tensor([0, 1], device=ctx.device), 0] = 5
    found = [str(w.message) for w in caught if "expanded tensors" in str(w.message)]
    return {"warning": found[0][:160] if found else "", "x_after": x[0].tolist()}


@claim("repeat.independent-write", question=Q,
       statement="`z` 是独立的内存：`z[0, 0] = 100` 只改这一处，`z` 的其他行和原张量 `x` 都不变。",
       expect={"z_after": [[100, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]], "x_after": [[1, 2, 3]]})
def _(ctx):
    x = _row(ctx.device)
    z = x.repeat(4, 1)
    z[0, 0] = 100
    return {"z_after": z.tolist(), "x_after": x.tolist()}


# --- arguments ------------------------------------------------------------------------------------

@claim("expand.args-target-shape", question=Q,
       statement="expand 的参数是目标形状：`x.expand(4, -1)` 里的 `-1` 表示这一维保持不变，得到 "
                 "{keep_with_minus_one}；也可以在前面添加新维，`x.expand(2, 4, 3)` 的 stride 是 "
                 "{new_leading_stride}，新维的 stride 同样是 0。",
       expect={"keep_with_minus_one": [4, 3], "new_leading_dim": [2, 4, 3], "new_leading_stride": [0, 0, 1]})
def _(ctx):
    x = _row(ctx.device)
    lead = x.expand(2, 4, 3)
    return {"keep_with_minus_one": list(x.expand(4, -1).shape), "new_leading_dim": list(lead.shape),
            "new_leading_stride": lead.stride()}


@claim("expand.only-singleton-dims", question=Q,
       statement="但 expand 只能扩展大小为 1 的维：`x.expand(4, 6)` 要把大小为 3 的维扩成 6，抛出 RuntimeError。",
       raises=("RuntimeError", "must match the existing size (3) at non-singleton dimension 1"))
def _(ctx):
    _row(ctx.device).expand(4, 6)


@claim("repeat.args-repeat-counts", question=Q,
       statement="repeat 的参数是每一维的重复次数：`x.repeat(2, 2)` 把 (1, 3) 变成 {repeat_2_2}；"
                 "给出的次数多于维数时在前面补新维，`x.repeat(2, 1, 1)` 得到 {repeat_2_1_1}。",
       expect={"repeat_2_2": [2, 6], "repeat_2_1_1": [2, 1, 3], "values_2_2": [[1, 2, 3, 1, 2, 3]] * 2})
def _(ctx):
    x = _row(ctx.device)
    return {"repeat_2_2": list(x.repeat(2, 2).shape), "repeat_2_1_1": list(x.repeat(2, 1, 1).shape),
            "values_2_2": x.repeat(2, 2).tolist()}


@claim("repeat.too-few-counts", question=Q,
       statement="次数少于维数则报错：对二维的 `x` 调用 `x.repeat(2)` 抛出 RuntimeError。",
       raises=("RuntimeError", "can not be smaller than number of dimensions of tensor"))
def _(ctx):
    _row(ctx.device).repeat(2)


@claim("repeat.vs-repeat-interleave", question=Q,
       statement="repeat 是整块平铺，`v.repeat(2)` 得到 {repeat}；`repeat_interleave` 是逐元素重复，"
                 "`v.repeat_interleave(2)` 得到 {repeat_interleave}。",
       expect={"repeat": [1, 2, 3, 1, 2, 3], "repeat_interleave": [1, 1, 2, 2, 3, 3]})
def _(ctx):
    v = torch.tensor([1, 2, 3], device=ctx.device)
    return {"repeat": v.repeat(2).tolist(), "repeat_interleave": v.repeat_interleave(2).tolist()}


@claim("expand.backward-sums", question=Q,
       statement="反向传播时，expand 和 repeat 都把梯度沿被扩展的维求和：对 `x.expand(4, 3).sum()` 和 "
                 "`x.repeat(4, 1).sum()` 求导，`x` 每个元素的梯度都是 {grad_each:int}，正好是扩展出的行数。",
       expect={"grad_expand": [[4.0, 4.0, 4.0]], "grad_repeat": [[4.0, 4.0, 4.0]], "grad_each": 4.0})
def _(ctx):
    grads = {}
    for name, op in (("expand", lambda t: t.expand(4, 3)), ("repeat", lambda t: t.repeat(4, 1))):
        x = torch.ones(1, 3, device=ctx.device, requires_grad=True)
        op(x).sum().backward()
        grads[f"grad_{name}"] = x.grad.tolist()
    grads["grad_each"] = grads["grad_expand"][0][0]
    return grads


@claim("storage.typed-storage-deprecated", question=Q,
       statement="今天的 PyTorch 里 `y.storage()` 返回的是已弃用的 TypedStorage，一调用就发出弃用警告"
                 "（“TypedStorage is deprecated”）；应改用 `y.untyped_storage()`，它不告警。",
       expect={"warning": {"contains": "TypedStorage is deprecated"}, "untyped_warns": False})
def _(ctx):
    y = _row(ctx.device).expand(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.storage().data_ptr()
    first = str(caught[0].message) if caught else ""
    with warnings.catch_warnings(record=True) as caught_untyped:
        warnings.simplefilter("always")
        y.untyped_storage().data_ptr()
    return {"warning": first[:160], "untyped_warns": bool(caught_untyped)}


@claim("expand.cuda-no-allocation", question=Q, needs=["cuda"],
       statement="在 GPU 上，`x.expand(4096, -1)` 把一行 {=4 MiB} 的 `x` 扩成逻辑上 {=16 GiB} 的张量，"
                 "`memory_allocated` 增加 {expand_delta_bytes:bytes}；而 `x[:, :1024].repeat(4096, 1)` 得到 "
                 "{=16 MiB} 的张量，它增加 {repeat_delta_bytes:bytes}。",
       expect={"expand_delta_bytes": 0, "repeat_delta_bytes": {">=": 4096 * 1024 * 4}})
def _(ctx):
    """把 1024×1024 个 fp32 的一行 expand 成 4096 行、把它的前 1024 列 repeat 成 4096 行时 memory_allocated 的增量。"""
    x = torch.randn(1, 1024 * 1024, device="cuda")  # 4 MiB
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    y = x.expand(4096, -1)
    expand_delta = torch.cuda.memory_allocated() - base
    z = x[:, :1024].repeat(4096, 1)  # 4096 x 1024 fp32 = 16 MiB
    repeat_delta = torch.cuda.memory_allocated() - base
    out = {"row_bytes": x.numel() * x.element_size(), "expand_logical_bytes": y.numel() * y.element_size(),
           "expand_delta_bytes": expand_delta, "repeat_logical_bytes": z.numel() * z.element_size(),
           "repeat_delta_bytes": repeat_delta}
    del y, z
    return out
