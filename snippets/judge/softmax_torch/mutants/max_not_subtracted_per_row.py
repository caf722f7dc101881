import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.max())  # bug: one max for the whole tensor
    return e / e.sum(dim=1, keepdim=True)
