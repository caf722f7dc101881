import torch


def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return dy * y * (1 - y)  # bug: only the Jacobian's diagonal
