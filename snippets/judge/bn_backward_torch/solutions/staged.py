import torch


def bn_backward(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor,
                eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # the chain rule node by node: xhat -> var -> mu -> x
    n = x.shape[0]
    mu = x.mean(dim=0)
    xc = x - mu
    var = xc.pow(2).sum(dim=0) / n
    std = torch.sqrt(var + eps)
    xhat = xc / std
    dxhat = dy * gamma
    dvar = (dxhat * xc).sum(dim=0) * -0.5 / (std * std * std)
    dmu = -(dxhat / std).sum(dim=0) + dvar * (-2.0 * xc).sum(dim=0) / n
    dx = dxhat / std + dvar * 2.0 * xc / n + dmu / n
    return dx, (dy * xhat).sum(dim=0), dy.sum(dim=0)
