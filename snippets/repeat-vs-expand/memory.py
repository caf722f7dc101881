"""expand against repeat: strides, storage, views and what writes do."""

import warnings

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


def _row(device):
    return torch.tensor([[1, 2, 3]], device=device)  # (1, 3) int64


@claim("expand.stride-zero", question=Q,
       statement="x.expand(4, 3) 得到形状 (4, 3)、stride (0, 1) 的张量：扩展出来的那一维 stride 为 0。",
       expect={"shape": [4, 3], "stride": [0, 1], "x_stride": [3, 1]})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    return {"shape": list(y.shape), "stride": y.stride(), "x_stride": x.stride()}


@claim("expand.shares-storage", question=Q,
       statement="expand 的结果和原张量共用同一块存储：数据指针相同，存储仍只有 3 个 int64（24 字节）。",
       expect={"same_data_ptr": True, "same_storage_ptr": True, "x_storage_bytes": 24, "y_storage_bytes": 24,
               "logical_bytes": 96})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    return {
        "same_data_ptr": y.data_ptr() == x.data_ptr(),
        "same_storage_ptr": y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
        "x_storage_bytes": x.untyped_storage().nbytes(),
        "y_storage_bytes": y.untyped_storage().nbytes(),
        "logical_bytes": y.numel() * y.element_size(),
    }


@claim("expand.not-contiguous", question=Q,
       statement="expand 的结果不是 contiguous 的（stride 0 不是紧密布局）。",
       expect={"is_contiguous": False})
def _(ctx):
    return {"is_contiguous": _row(ctx.device).expand(4, 3).is_contiguous()}


@claim("expand.is-view", question=Q,
       statement="expand 返回 view：结果的 _base 就是原张量。",
       expect={"is_view": True, "base_is_x": True})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    return {"is_view": y._is_view(), "base_is_x": y._base is x}


@claim("repeat.copies", question=Q,
       statement="x.repeat(4, 1) 真正拷贝数据：stride (3, 1)、contiguous，存储是原来的 4 倍（96 字节），数据指针不同。",
       expect={"shape": [4, 3], "stride": [3, 1], "is_contiguous": True, "storage_bytes": 96,
               "same_data_ptr": False, "values": [[1, 2, 3]] * 4})
def _(ctx):
    x = _row(ctx.device)
    z = x.repeat(4, 1)
    return {"shape": list(z.shape), "stride": z.stride(), "is_contiguous": z.is_contiguous(),
            "storage_bytes": z.untyped_storage().nbytes(), "same_data_ptr": z.data_ptr() == x.data_ptr(),
            "values": z.tolist()}


@claim("repeat.new-tensor", question=Q,
       statement="repeat 返回的是新张量，不是 view：没有 _base。",
       expect={"is_view": False, "base_is_none": True})
def _(ctx):
    z = _row(ctx.device).repeat(4, 1)
    return {"is_view": z._is_view(), "base_is_none": z._base is None}


@claim("expand.inplace-op-raises", question=Q,
       statement="对 expand 的结果做原地运算（add_）会直接报错，而不是“广播覆盖”。",
       raises=("RuntimeError", "more than one element of the written-to tensor refers to a single memory location"))
def _(ctx):
    y = _row(ctx.device).expand(4, 3)
    ctx.observe(stride=y.stride())
    y.add_(1)


@claim("expand.index-write-aliases", question=Q,
       statement="对 expand 的结果做索引赋值 y[0, 0] = 100 不报错：写进共享的那个元素，4 行和原张量一起变。",
       expect={"x_after": [[100, 2, 3]], "column0_after": [100, 100, 100, 100]})
def _(ctx):
    x = _row(ctx.device)
    y = x.expand(4, 3)
    y[0, 0] = 100
    return {"x_after": x.tolist(), "column0_after": y[:, 0].tolist()}


@claim("repeat.independent-write", question=Q,
       statement="对 repeat 的结果写入只改这一处：其他行和原张量不受影响。",
       expect={"z_after": [[100, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]], "x_after": [[1, 2, 3]]})
def _(ctx):
    x = _row(ctx.device)
    z = x.repeat(4, 1)
    z[0, 0] = 100
    return {"z_after": z.tolist(), "x_after": x.tolist()}


@claim("expand.args-target-shape", question=Q,
       statement="expand 的参数是目标形状：-1 表示保持该维，可以在前面加新维，但只能扩展大小为 1 的维。",
       expect={"keep_with_minus_one": [4, 3], "new_leading_dim": [2, 4, 3], "new_leading_stride": [0, 0, 1]})
def _(ctx):
    x = _row(ctx.device)
    lead = x.expand(2, 4, 3)
    return {"keep_with_minus_one": list(x.expand(4, -1).shape), "new_leading_dim": list(lead.shape),
            "new_leading_stride": lead.stride()}


@claim("expand.only-singleton-dims", question=Q,
       statement="expand 不能把大小为 3 的维扩成 6：非 1 的维必须和目标大小一致。",
       raises=("RuntimeError", "must match the existing size (3) at non-singleton dimension 1"))
def _(ctx):
    _row(ctx.device).expand(4, 6)


@claim("repeat.args-repeat-counts", question=Q,
       statement="repeat 的参数是每一维的重复次数：repeat(2, 2) 得到 (2, 6)，多给的次数会在前面加新维。",
       expect={"repeat_2_2": [2, 6], "repeat_2_1_1": [2, 1, 3], "values_2_2": [[1, 2, 3, 1, 2, 3]] * 2})
def _(ctx):
    x = _row(ctx.device)
    return {"repeat_2_2": list(x.repeat(2, 2).shape), "repeat_2_1_1": list(x.repeat(2, 1, 1).shape),
            "values_2_2": x.repeat(2, 2).tolist()}


@claim("repeat.too-few-counts", question=Q,
       statement="repeat 的次数个数不能少于张量的维数。",
       raises=("RuntimeError", "can not be smaller than number of dimensions of tensor"))
def _(ctx):
    _row(ctx.device).repeat(2)


@claim("repeat.vs-repeat-interleave", question=Q,
       statement="repeat 整块平铺（1,2,3,1,2,3），repeat_interleave 逐元素重复（1,1,2,2,3,3）。",
       expect={"repeat": [1, 2, 3, 1, 2, 3], "repeat_interleave": [1, 1, 2, 2, 3, 3]})
def _(ctx):
    v = torch.tensor([1, 2, 3], device=ctx.device)
    return {"repeat": v.repeat(2).tolist(), "repeat_interleave": v.repeat_interleave(2).tolist()}


@claim("expand.backward-sums", question=Q,
       statement="反向传播时 expand 和 repeat 都把梯度沿扩展的维求和：x 的梯度都是 4。",
       expect={"grad_expand": [[4.0, 4.0, 4.0]], "grad_repeat": [[4.0, 4.0, 4.0]]})
def _(ctx):
    grads = {}
    for name, op in (("expand", lambda t: t.expand(4, 3)), ("repeat", lambda t: t.repeat(4, 1))):
        x = torch.ones(1, 3, device=ctx.device, requires_grad=True)
        op(x).sum().backward()
        grads[f"grad_{name}"] = x.grad.tolist()
    return grads


@claim("storage.typed-storage-deprecated", question=Q,
       statement="常见写法 y.storage().data_ptr() 会触发 TypedStorage 弃用警告；今天应写 y.untyped_storage()。",
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
       statement="在 GPU 上 expand 不分配显存，repeat 按倍数分配（memory_allocated 的增量）。",
       expect={"expand_delta_bytes": 0, "repeat_delta_bytes": {">=": 4096 * 1024 * 4}})
def _(ctx):
    x = torch.randn(1, 1024 * 1024, device="cuda")  # 4 MiB
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    y = x.expand(4096, -1)
    expand_delta = torch.cuda.memory_allocated() - base
    z = x[:, :1024].repeat(4096, 1)  # 4096 x 1024 fp32 = 16 MiB
    repeat_delta = torch.cuda.memory_allocated() - base
    del y, z
    return {"expand_delta_bytes": expand_delta, "repeat_delta_bytes": repeat_delta}
