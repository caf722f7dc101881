"""channels_last: the same NCHW shape with NHWC strides, and what contiguous() means for it."""

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


def _nchw(device):
    return torch.arange(2 * 3 * 4 * 5, dtype=torch.float32, device=device).reshape(2, 3, 4, 5)


@claim("channels-last.strides", question=Q,
       statement="形状 {shape} 的 NCHW 张量默认 stride 是 {nchw_stride}；`x.to(memory_format=torch.channels_last)` "
                 "形状不变、值不变，stride 变成 {cl_stride}：C 维的 stride 为 1，同一像素的各通道在内存里挨着放，"
                 "存储开头依次是 {storage_head}。这一步{copied:?拷贝了数据（数据指针变了）|没有拷贝数据}。之后它"
                 "{is_contiguous:?算|不算} NCHW 连续（`is_contiguous()`），却{is_cl:?算|不算} channels_last 连续"
                 "（`is_contiguous(memory_format=torch.channels_last)`）。",
       expect={"shape": [2, 3, 4, 5], "nchw_stride": [60, 20, 5, 1], "cl_shape": [2, 3, 4, 5],
               "cl_stride": [60, 1, 15, 3], "same_values": True, "storage_head": [0.0, 20.0, 40.0, 1.0, 21.0, 41.0],
               "copied": True, "is_contiguous": False, "is_cl": True})
def _(ctx):
    x = _nchw(ctx.device)
    cl = x.to(memory_format=torch.channels_last)
    return {"shape": list(x.shape), "nchw_stride": x.stride(), "cl_shape": list(cl.shape), "cl_stride": cl.stride(),
            "same_values": torch.equal(cl, x), "storage_head": cl.as_strided((6,), (1,)).tolist(),
            "copied": cl.data_ptr() != x.data_ptr(), "is_contiguous": cl.is_contiguous(),
            "is_cl": cl.is_contiguous(memory_format=torch.channels_last)}


@claim("channels-last.contiguous", question=Q,
       statement="对 channels_last 张量 `cl`，不带参数的 `contiguous()` 指的是 NCHW 连续，所以它会拷贝，stride 回到 "
                 "{contiguous_stride}（{contiguous_copies:?换了一块新内存|仍是原内存}）；`contiguous(memory_format=torch.channels_last)` "
                 "{cl_returns_self:?直接返回它自己|另拷了一份}。逐元素运算和 `clone()` 保持输入的布局，`cl + 1` 的 stride 仍是 "
                 "{add_stride}；而 `cl.permute(0, 2, 3, 1)` 是一个普通的连续 NHWC 张量（stride {nhwc_stride}）。",
       expect={"contiguous_stride": [60, 20, 5, 1], "contiguous_copies": True, "cl_returns_self": True,
               "add_stride": [60, 1, 15, 3], "clone_stride": [60, 1, 15, 3], "nhwc_stride": [60, 15, 3, 1],
               "nhwc_contiguous": True, "nhwc_shares": True})
def _(ctx):
    cl = _nchw(ctx.device).to(memory_format=torch.channels_last)
    c = cl.contiguous()
    nhwc = cl.permute(0, 2, 3, 1)
    return {"contiguous_stride": c.stride(), "contiguous_copies": c.data_ptr() != cl.data_ptr(),
            "cl_returns_self": cl.contiguous(memory_format=torch.channels_last) is cl,
            "add_stride": (cl + 1).stride(), "clone_stride": cl.clone().stride(), "nhwc_stride": nhwc.stride(),
            "nhwc_contiguous": nhwc.is_contiguous(), "nhwc_shares": nhwc.data_ptr() == cl.data_ptr()}
