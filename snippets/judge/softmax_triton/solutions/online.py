"""One program per row, the row in blocks: a first pass keeps a running max and a running sum rescaled when
the max grows (online softmax), a second pass writes exp(x - max) / sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_online(x_ptr, y_ptr, n_cols, x_row, x_col, y_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row + cols * x_col, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        # lanes still at -inf have nothing to rescale (and -inf - -inf would be NaN)
        s = tl.where(m_new == -float("inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
        m = m_new
    m_row = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - m_row)), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row + cols * x_col, mask=cols < n_cols, other=-float("inf"))
        tl.store(y_ptr + row * y_row + cols, tl.exp(x - m_row) / total, mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype)
    _softmax_online[(rows,)](x, y, cols, x.stride(0), x.stride(1), y.stride(0), BLOCK=128)
    return y
