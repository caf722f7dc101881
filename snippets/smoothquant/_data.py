"""The synthetic linear layer and the int8 quantizers shared by the SmoothQuant claims.

The activation imitates what the SmoothQuant paper reports for LLMs: a few input channels are much
larger than the rest, in every token. The weight is an ordinary Gaussian matrix. Everything is
float64 so that the errors below are quantization errors, not float rounding.
"""

from __future__ import annotations

import torch

TOKENS, CHANNELS, OUT = 256, 512, 512
OUTLIERS = 4          # how many input channels carry outliers
OUTLIER_SCALE = 60.0  # how much larger those channels are
QMAX = 127            # symmetric int8: [-127, 127]


def activations(outlier_scale: float = OUTLIER_SCALE, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """X of shape (TOKENS, CHANNELS) and the indices of its outlier channels."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(TOKENS, CHANNELS, generator=g, dtype=torch.float64)
    idx = torch.randperm(CHANNELS, generator=g)[:OUTLIERS].sort().values
    x[:, idx] *= outlier_scale
    return x, idx


def weight(seed: int = 1) -> torch.Tensor:
    """W of shape (OUT, CHANNELS), as nn.Linear stores it: y = x @ W.T."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(OUT, CHANNELS, generator=g, dtype=torch.float64) * 0.02


def quantize(t: torch.Tensor, dim: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric absmax int8: integer values and the scale, one per tensor (dim=None) or along ``dim``.

    dim=-1 gives one scale per row: per token for X, per output channel for W.
    dim=0 gives one scale per column: per input channel.
    """
    amax = t.abs().amax() if dim is None else t.abs().amax(dim=dim, keepdim=True)
    scale = amax.clamp(min=1e-12) / QMAX
    return (t / scale).round().clamp(-QMAX, QMAX), scale


def fake(t: torch.Tensor, dim: int | None) -> torch.Tensor:
    """Quantize and dequantize: the value the int8 kernel effectively computes with."""
    q, scale = quantize(t, dim)
    return q * scale


def rel_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """Relative Frobenius error ||approx - exact|| / ||exact||."""
    return ((approx - exact).norm() / exact.norm()).item()


def smooth_scales(x: torch.Tensor, w: torch.Tensor, alpha: float) -> torch.Tensor:
    """s_j = max|X_j|^alpha / max|W_j|^(1 - alpha), per input channel j (as smoothquant/smooth.py does)."""
    act = x.abs().amax(dim=0)
    wt = w.abs().amax(dim=0)
    return (act.pow(alpha) / wt.pow(1 - alpha)).clamp(min=1e-5)


def w8a8_error(x: torch.Tensor, w: torch.Tensor, alpha: float | None, act_dim: int | None) -> float:
    """Output error of W8A8 after smoothing with ``alpha`` (None: no smoothing, s = 1): weights per output
    channel, activations per token (act_dim=-1) or per tensor (act_dim=None)."""
    y = x @ w.T
    s = torch.ones(x.shape[-1], dtype=x.dtype) if alpha is None else smooth_scales(x, w, alpha)
    return rel_error(fake(x / s, act_dim) @ fake(w * s, -1).T, y)
