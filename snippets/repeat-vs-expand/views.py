"""transpose, view, contiguous and reshape: what strides allow."""

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


@claim("transpose.strides", question=Q,
       statement="(3, 4) 张量的 stride 是 (4, 1)；t() 只交换 stride 得到 (1, 4)，不拷贝，结果不 contiguous。",
       expect={"stride": [4, 1], "t_stride": [1, 4], "t_contiguous": False, "same_data_ptr": True})
def _(ctx):
    x = torch.randn(3, 4, device=ctx.device)
    y = x.t()
    return {"stride": x.stride(), "t_stride": y.stride(), "t_contiguous": y.is_contiguous(),
            "same_data_ptr": y.data_ptr() == x.data_ptr()}


@claim("view.after-transpose-raises", question=Q,
       statement="转置后的张量 view(12) 报错，错误信息建议改用 reshape。",
       raises=("RuntimeError", "view size is not compatible with input tensor's size and stride"))
def _(ctx):
    y = torch.randn(3, 4, device=ctx.device).t()
    ctx.observe(stride=y.stride())
    y.view(12)


@claim("contiguous.then-view", question=Q,
       statement="contiguous() 把转置结果拷贝成紧密布局（stride (3, 1)、新内存），之后 view(12) 成功。",
       expect={"stride": [3, 1], "new_memory": True, "view_ok": True})
def _(ctx):
    y = torch.randn(3, 4, device=ctx.device).t()
    c = y.contiguous()
    flat = c.view(12)
    return {"stride": c.stride(), "new_memory": c.data_ptr() != y.data_ptr(),
            "view_ok": torch.equal(flat, y.flatten())}


@claim("reshape.view-or-copy", question=Q,
       statement="reshape 能 view 就 view（连续张量上共享内存），不能就拷贝（转置后 reshape 得到新内存）。",
       expect={"contiguous_shares": True, "contiguous_is_view": True, "transposed_shares": False,
               "transposed_is_view": False})
def _(ctx):
    x = torch.randn(3, 4, device=ctx.device)
    r1 = x.reshape(12)
    y = x.t()
    r2 = y.reshape(12)
    return {"contiguous_shares": r1.data_ptr() == x.data_ptr(), "contiguous_is_view": r1._base is x,
            "transposed_shares": r2.data_ptr() == y.data_ptr(), "transposed_is_view": r2._is_view()}


@claim("contiguous.noop-when-contiguous", question=Q,
       statement="对已经 contiguous 的张量调用 contiguous() 直接返回它自己，不拷贝。",
       expect={"returns_self": True})
def _(ctx):
    x = torch.randn(3, 4, device=ctx.device)
    return {"returns_self": x.contiguous() is x}


@claim("view.needs-compatible-strides", question=Q,
       statement="view 并不要求 contiguous，只要求新形状能用原 stride 表达：不连续的切片和 expand 结果也能 view。",
       expect={"slice_contiguous": False, "slice_view_stride": [12, 6, 1], "expanded_view_stride": [0, 0, 1]})
def _(ctx):
    a = torch.randn(4, 6, device=ctx.device)[:, :4]  # (4, 4), stride (6, 1)
    y = torch.tensor([[1, 2, 3]], device=ctx.device).expand(4, 3)
    return {"slice_contiguous": a.is_contiguous(), "slice_view_stride": a.view(2, 2, 4).stride(),
            "expanded_view_stride": y.view(2, 2, 3).stride()}


@claim("expand.contiguous-materialises", question=Q,
       statement="对 expand 的结果调用 contiguous() 才真正分配 4 行的内存（96 字节）。",
       expect={"before_bytes": 24, "after_bytes": 96, "after_stride": [3, 1]})
def _(ctx):
    y = torch.tensor([[1, 2, 3]], device=ctx.device).expand(4, 3)
    c = y.contiguous()
    return {"before_bytes": y.untyped_storage().nbytes(), "after_bytes": c.untyped_storage().nbytes(),
            "after_stride": c.stride()}
