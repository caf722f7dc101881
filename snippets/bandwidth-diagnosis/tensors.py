"""What ``x[1:]`` is, and which call gives an aligned copy of it (PyTorch, CPU tensors).

A slice that drops the first element is still contiguous: ``.contiguous()`` has nothing to do and
returns the same tensor, four bytes past an aligned start. ``.clone()`` allocates new storage, which
starts where the allocator puts a fresh block.
"""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "bandwidth-diagnosis"


@claim(
    "bw.slice-clone-aligns",
    question=Q,
    statement="PyTorch 的 fp32 CPU 张量：`x[1:]` 本身就是连续的，`.contiguous()` 原样返回它（`y.contiguous() is y`），起点仍比 "
              "{=16 字节} 的倍数多 {slice_mod16} 字节；`.clone()` 新分配存储，起点除以 {=16 字节} 余 {clone_mod16}，值不变。",
    expect={"slice_contiguous": True, "contiguous_is_self": True, "slice_mod16": 4, "clone_mod16": 0, "clone_equal": True},
)
def _(ctx):
    """Alignment of a one-element-offset slice, after ``.contiguous()`` and after ``.clone()``.

    范围：PyTorch 的 CPU 分配器，fp32
    """
    x = torch.arange(1 << 12, dtype=torch.float32)
    y = x[1:]
    c = y.clone()
    return {"slice_contiguous": y.is_contiguous(), "contiguous_is_self": y.contiguous() is y,
            "slice_mod16": y.data_ptr() % 16, "clone_mod16": c.data_ptr() % 16, "clone_equal": bool(torch.equal(c, y)),
            "base_mod16": x.data_ptr() % 16}
