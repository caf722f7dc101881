"""as_strided: any size, stride and offset over an existing storage, and the overlapping views it allows."""

import torch

from verify.claim import claim

Q = "repeat-vs-expand"

# What torch._debug_has_internal_overlap returns, by the names of ATen's MemOverlap enum.
_OVERLAP = {0: "No", 1: "Yes", 2: "TooHard"}


@claim("as-strided.arbitrary-strides", question=Q,
       statement="`as_strided` 直接指定 size 和 stride，expand 只是它的一个特例：`x.as_strided((4, 3), (0, 1))` 和 "
                 "`x.expand(4, 3)` {matches_expand:?相等|不相等}。它还能造出 expand 造不出的布局：stride 设成 {windows_stride}，"
                 "`torch.arange(5).as_strided((3, 3), (1, 1))` 就是三个互相重叠的滑动窗口 {windows}，"
                 "和 `unfold(0, 3, 1)` {matches_unfold:?相同|不同}，仍然只是原存储上的 view。",
       expect={"matches_expand": True, "windows": [[0, 1, 2], [1, 2, 3], [2, 3, 4]], "matches_unfold": True,
               "windows_share": True, "windows_stride": [1, 1]})
def _(ctx):
    x = torch.tensor([[1, 2, 3]], device=ctx.device)
    base = torch.arange(5, device=ctx.device)
    w = base.as_strided((3, 3), (1, 1))
    return {"matches_expand": torch.equal(x.as_strided((4, 3), (0, 1)), x.expand(4, 3)),
            "windows": w.tolist(), "matches_unfold": torch.equal(w, base.unfold(0, 3, 1)),
            "windows_share": w.data_ptr() == base.data_ptr(), "windows_stride": w.stride()}


@claim("as-strided.storage-order", question=Q,
       statement="`as_strided` 按存储寻址，不看张量的逻辑顺序：对转置后的 `t`（stride {t_stride}）调用 "
                 "`t.as_strided((6,), (1,))` 得到的是存储顺序 {storage_order}，而 `t.flatten()` 按逻辑顺序得到 "
                 "{logical_order}。同一句代码，结果取决于输入此刻在内存里怎么排。",
       expect={"t_stride": [1, 3], "storage_order": [0, 1, 2, 3, 4, 5], "logical_order": [0, 3, 1, 4, 2, 5]})
def _(ctx):
    t = torch.arange(6, device=ctx.device).reshape(2, 3).t()
    return {"t_stride": t.stride(), "storage_order": t.as_strided((6,), (1,)).tolist(),
            "logical_order": t.flatten().tolist()}


@claim("as-strided.out-of-bounds-raises", question=Q,
       statement="它只检查一件事：view 够得着的最远元素必须还在存储里。对 5 个 int64 的存储调用 "
                 "`as_strided((3, 3), (2, 1))` 需要 {needed_bytes:bytes}，超出存储的 {storage_bytes:bytes}，"
                 "抛出 RuntimeError。",
       raises=("RuntimeError", "out of bounds for storage of size"),
       expect={"needed_bytes": 56, "storage_bytes": 40})
def _(ctx):
    base = torch.arange(5, device=ctx.device)
    # the farthest element is at (3-1)*2 + (3-1)*1 = 6, so 7 elements are needed
    ctx.observe(needed_bytes=(2 * 2 + 2 * 1 + 1) * base.element_size(), storage_bytes=base.untyped_storage().nbytes())
    base.as_strided((3, 3), (2, 1))


@claim("as-strided.overlap-inplace-silent", question=Q,
       statement="重叠检查拦不住这种重叠：在 CPU 上，对滑动窗口 `w = b.as_strided((3, 3), (1, 1))` 调用 "
                 "`torch._debug_has_internal_overlap` 得到 {overlap}（判断不了，放行），于是 `w.add_(1)` 不报错，"
                 "而 `b` 从 {before} 变成 {after}：中间那个元素同时属于 {max_windows} 个窗口，被加了 {max_increment} 次。",
       expect={"overlap": "TooHard", "raised": False, "before": [0, 1, 2, 3, 4], "after": [1, 3, 5, 5, 5],
               "increments": [1, 2, 3, 2, 1], "max_windows": 3, "max_increment": 3})
def _(ctx):
    # CPU on purpose: the increments happen one read-modify-write after another there; on a GPU the
    # threads race and the documented answer is only "undefined".
    b = torch.arange(5)
    before = b.tolist()
    w = b.as_strided((3, 3), (1, 1))
    overlap = _OVERLAP[torch._debug_has_internal_overlap(w)]
    try:
        w.add_(1)
        raised = False
    except RuntimeError as exc:
        ctx.observe(message=str(exc)[:160])
        raised = True
    after = b.tolist()
    increments = [a - s for a, s in zip(after, before)]
    windows = [sum(1 for r in range(3) if r <= i < r + 3) for i in range(5)]
    return {"overlap": overlap, "raised": raised, "before": before, "after": after, "increments": increments,
            "max_windows": max(windows), "max_increment": max(increments)}
