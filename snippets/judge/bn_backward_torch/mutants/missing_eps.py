import torch


def bn_backward(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor,
                eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xc = x - x.mean(dim=0)
    rstd = torch.rsqrt((xc * xc).mean(dim=0))  # bug: eps never added
    xhat = xc * rstd
    dbeta = dy.sum(dim=0)
    dgamma = (dy * xhat).sum(dim=0)
    dx = gamma * rstd * (dy - dy.mean(dim=0) - xhat * (dy * xhat).mean(dim=0))
    return dx, dgamma, dbeta
