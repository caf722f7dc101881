import torch


def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return y * (dy - (dy * y).sum(dim=0, keepdim=True))  # bug: summed over the columns
