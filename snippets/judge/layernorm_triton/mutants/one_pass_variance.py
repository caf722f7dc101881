"""A known-wrong solution: the variance in one pass, E[x²] − E[x]², which in float32 loses its digits when the
mean is much larger than the spread (the difference of two nearly equal large numbers)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_row(x_ptr, w_ptr, b_ptr, y_ptr, n, x_row, x_col, y_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * x_row + cols * x_col, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(x * x, axis=0) / n - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * y_row + cols, diff * rstd * w + b, mask=mask)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    rows, n = x.shape
    y = torch.empty((rows, n), dtype=x.dtype)
    _layer_norm_row[(rows,)](x, weight, bias, y, n, x.stride(0), x.stride(1), y.stride(0), eps,
                             BLOCK=triton.next_power_of_2(n))
    return y
