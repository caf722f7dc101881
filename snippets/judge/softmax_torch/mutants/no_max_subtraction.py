import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x)  # bug: exp(1000) overflows to inf
    return e / e.sum(dim=1, keepdim=True)
