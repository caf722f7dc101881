import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)
