"""transpose, view, contiguous and reshape: what strides allow."""

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


@claim("transpose.strides", question=Q,
       statement="(3, 4) 张量的 stride 是 {stride}；`t()` 只交换 stride，得到 {t_stride}，数据指针不变、不拷贝，"
                 "结果不再是 contiguous 的。",
       expect={"stride": [4, 1], "t_stride": [1, 4], "t_contiguous": False, "same_data_ptr": True})
def _(ctx):
    x = torch.randn(3, 4, device=ctx.device)
    y = x.t()
    return {"stride": x.stride(), "t_stride": y.stride(), "t_contiguous": y.is_contiguous(),
            "same_data_ptr": y.data_ptr() == x.data_ptr()}


@claim("view.after-transpose-raises", question=Q,
       statement="对转置结果（stride {stride}）调用 `view(12)` 会抛出 RuntimeError，错误信息本身就建议改用 `reshape`。",
       raises=("RuntimeError", "view size is not compatible with input tensor's size and stride"))
def _(ctx):
    y = torch.randn(3, 4, device=ctx.device).t()
    ctx.observe(stride=y.stride())
    y.view(12)


@claim("contiguous.then-view", question=Q,
       statement="先 `contiguous()` 把它拷贝成紧密布局（stride 变为 {stride}，换了一块新内存），再 `view(12)` 就可以。",
       expect={"stride": [3, 1], "new_memory": True, "view_ok": True})
def _(ctx):
    y = torch.randn(3, 4, device=ctx.device).t()
    c = y.contiguous()
    flat = c.view(12)
    return {"stride": c.stride(), "new_memory": c.data_ptr() != y.data_ptr(),
            "view_ok": torch.equal(flat, y.flatten())}


@claim("reshape.view-or-copy", question=Q,
       statement="`reshape` 能 view 就 view：在连续张量上它和原张量共享内存，结果的 `_base` 就是原张量；"
                 "在转置结果上它只能拷贝，得到新内存。",
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
       statement="对已经 contiguous 的张量，`contiguous()` 直接返回它自己（`x.contiguous() is x`），不做任何拷贝。",
       expect={"returns_self": True})
def _(ctx):
    x = torch.randn(3, 4, device=ctx.device)
    return {"returns_self": x.contiguous() is x}


@claim("view.needs-compatible-strides", question=Q,
       statement="不连续的切片 `randn(4, 6)[:, :4]`（stride {slice_stride}）照样可以 `view(2, 2, 4)`，得到 stride "
                 "{slice_view_stride}；expand 的结果也可以 `view(2, 2, 3)`，stride 变成 {expanded_view_stride}。",
       expect={"slice_contiguous": False, "slice_stride": [6, 1], "slice_view_stride": [12, 6, 1],
               "expanded_view_stride": [0, 0, 1]})
def _(ctx):
    a = torch.randn(4, 6, device=ctx.device)[:, :4]  # (4, 4), stride (6, 1)
    y = torch.tensor([[1, 2, 3]], device=ctx.device).expand(4, 3)
    return {"slice_contiguous": a.is_contiguous(), "slice_stride": a.stride(), "slice_view_stride": a.view(2, 2, 4).stride(),
            "expanded_view_stride": y.view(2, 2, 3).stride()}


@claim("expand.contiguous-materialises", question=Q,
       statement="真正分配 4 行内存的时刻，是对 `y` 调用 `contiguous()` 的时候：存储从 {before_bytes:bytes}"
                 "变成 {after_bytes:bytes}，stride 变为 {after_stride}。",
       expect={"before_bytes": 24, "after_bytes": 96, "after_stride": [3, 1]})
def _(ctx):
    y = torch.tensor([[1, 2, 3]], device=ctx.device).expand(4, 3)
    c = y.contiguous()
    return {"before_bytes": y.untyped_storage().nbytes(), "after_bytes": c.untyped_storage().nbytes(),
            "after_stride": c.stride()}
