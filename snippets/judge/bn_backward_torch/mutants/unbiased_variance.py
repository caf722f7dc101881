import torch


def bn_backward(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor,
                eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    rstd = torch.rsqrt(x.var(dim=0) + eps)  # bug: torch.var divides by N - 1 by default
    xhat = (x - x.mean(dim=0)) * rstd
    dbeta = dy.sum(dim=0)
    dgamma = (dy * xhat).sum(dim=0)
    dx = gamma * rstd * (dy - dy.mean(dim=0) - xhat * (dy * xhat).mean(dim=0))
    return dx, dgamma, dbeta
