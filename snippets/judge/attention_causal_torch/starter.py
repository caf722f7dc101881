import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal self-attention: softmax(q @ k^T / sqrt(dim), masked to j <= i) @ v, shapes (batch, heads, seq, dim)."""
    raise NotImplementedError
