"""expand against repeat as the tensor grows: a view that costs nothing against a real copy.

A row ``x`` of shape ``(1, n)`` is broadcast to ``(k, n)``. ``expand`` returns a view whose first
stride is 0, so its cost does not depend on ``k * n``; ``repeat`` writes ``k * n`` elements. Once
the result is consumed by an element-wise op the picture changes: the op reads the expanded view
through its zero stride, while after ``repeat`` it must read the copy back from memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

ROWS = 64  # k: how many times the row is broadcast


def make_row(n: int, device: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(1, n, device=device, dtype=dtype)  # (1, n)


def expand_rows(x: torch.Tensor, k: int = ROWS) -> torch.Tensor:
    return x.expand(k, x.shape[1])  # (k, n), stride (0, 1), no copy


def repeat_rows(x: torch.Tensor, k: int = ROWS) -> torch.Tensor:
    return x.repeat(k, 1)  # (k, n), a fresh contiguous copy


def variants(n: int, device: str, k: int = ROWS, consume: bool = False) -> dict[str, Callable[[], Any]]:
    """Callables for the two variants at row length ``n``.

    With ``consume`` each variant is followed by ``* 2`` into a preallocated output, the way the
    broadcast tensor is usually used.
    """
    x = make_row(n, device)
    if not consume:
        return {"expand": lambda: expand_rows(x, k), "repeat": lambda: repeat_rows(x, k)}
    out = torch.empty(k, n, device=device)
    return {
        "expand": lambda: torch.mul(expand_rows(x, k), 2, out=out),
        "repeat": lambda: torch.mul(repeat_rows(x, k), 2, out=out),
    }


def bytes_moved(n: int, k: int = ROWS, itemsize: int = 4, consume: bool = False) -> dict[str, int]:
    """Memory traffic each variant needs at least (reads + writes), for GB/s figures.

    ``repeat`` reads the row and writes ``k * n``; consumed, it also reads the copy back and
    writes the output. ``expand`` moves nothing; consumed, it reads the row and writes ``k * n``.
    """
    row, full = n * itemsize, k * n * itemsize
    if not consume:
        return {"expand": 0, "repeat": row + full}
    return {"expand": row + full, "repeat": row + full + full + full}
