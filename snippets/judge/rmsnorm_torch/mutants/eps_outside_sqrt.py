import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    rms = x.pow(2).mean(dim=-1, keepdim=True).sqrt() + eps  # bug: eps after the square root
    return x / rms * weight
