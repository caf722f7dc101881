import torch


def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return y * dy  # bug: the row-sum term is never subtracted
