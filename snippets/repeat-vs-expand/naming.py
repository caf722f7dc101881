"""The naming trap: np.repeat is torch.repeat_interleave, np.tile is torch.tile, and torch.repeat tiles."""

import numpy as np  # a dependency of matplotlib, which the site needs
import torch

from verify.claim import claim

Q = "repeat-vs-expand"


@claim("repeat.numpy-naming", question=Q,
       statement="名字是反的：对 `v = [1, 2, 3]`，`np.repeat(v, 2)` 得到 {np_repeat}，等于 `torch.repeat_interleave`"
                 "（{torch_repeat_interleave}）；`np.tile(v, 2)` 得到 {np_tile}，等于 `torch.tile`（{torch_tile}），"
                 "也等于 `torch.Tensor.repeat`（{torch_repeat}）。按轴和按每个元素不同次数重复时也一一对应：二维 `m` 上 "
                 "`np.repeat(m, 2, axis=0)` 和 `m.repeat_interleave(2, dim=0)` {axis_match:?结果相同|结果不同}；"
                 "`np.repeat(v, [1, 2, 3])` 和 `v.repeat_interleave(torch.tensor([1, 2, 3]))` 都是 {np_variable}。",
       expect={"np_repeat": [1, 1, 2, 2, 3, 3], "torch_repeat_interleave": [1, 1, 2, 2, 3, 3],
               "np_tile": [1, 2, 3, 1, 2, 3], "torch_tile": [1, 2, 3, 1, 2, 3], "torch_repeat": [1, 2, 3, 1, 2, 3],
               "axis_match": True, "np_variable": [1, 2, 2, 3, 3, 3], "torch_variable": [1, 2, 2, 3, 3, 3]})
def _(ctx):
    v = [1, 2, 3]
    m = [[1, 2], [3, 4]]
    tv = torch.tensor(v, device=ctx.device)
    tm = torch.tensor(m, device=ctx.device)
    return {"np_repeat": np.repeat(v, 2).tolist(), "torch_repeat_interleave": tv.repeat_interleave(2).tolist(),
            "np_tile": np.tile(v, 2).tolist(), "torch_tile": torch.tile(tv, (2,)).tolist(),
            "torch_repeat": tv.repeat(2).tolist(),
            "axis_match": np.repeat(m, 2, axis=0).tolist() == tm.repeat_interleave(2, dim=0).tolist(),
            "np_variable": np.repeat(v, [1, 2, 3]).tolist(),
            "torch_variable": tv.repeat_interleave(torch.tensor([1, 2, 3], device=ctx.device)).tolist(),
            "numpy_version": np.__version__}


@claim("repeat.tile-pads-dims", question=Q,
       statement="`torch.tile` 和 `repeat` 只在次数少于维数时不同：对二维 `m = [[1, 2], [3, 4]]`，`torch.tile(m, (2,))` "
                 "像 `np.tile` 一样在前面补 1、当作 (1, 2)，得到 {tile}（和 `np.tile(m, 2)` {matches_numpy:?相同|不同}）；"
                 "而 `m.repeat(2)` {repeat_raises:?抛出|不抛出} RuntimeError。",
       expect={"tile": [[1, 2, 1, 2], [3, 4, 3, 4]], "matches_numpy": True, "repeat_raises": True,
               "tile_copies": True})
def _(ctx):
    m = [[1, 2], [3, 4]]
    tm = torch.tensor(m, device=ctx.device)
    t = torch.tile(tm, (2,))
    try:
        tm.repeat(2)
        raises = False
    except RuntimeError as exc:
        ctx.observe(repeat_message=str(exc)[:160])
        raises = True
    return {"tile": t.tolist(), "matches_numpy": t.tolist() == np.tile(m, 2).tolist(), "repeat_raises": raises,
            "tile_copies": t.data_ptr() != tm.data_ptr()}
