import torch


def bn_backward(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor,
                eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xc = x - x.mean(dim=0)
    rstd = torch.rsqrt((xc * xc).mean(dim=0) + eps)
    xhat = xc * rstd
    dx = dy * gamma * rstd  # bug: mu and var treated as constants, their two terms dropped
    return dx, (dy * xhat).sum(dim=0), dy.sum(dim=0)
