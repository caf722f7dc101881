import torch


def fold(conv_w: torch.Tensor, conv_b: torch.Tensor | None, bn_mean: torch.Tensor, bn_var: torch.Tensor,
         bn_gamma: torch.Tensor, bn_beta: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    scale = bn_gamma / (bn_var + eps)  # bug: divided by the variance, not the standard deviation
    b = conv_b if conv_b is not None else torch.zeros_like(bn_mean)
    w = conv_w * scale.view(-1, *([1] * (conv_w.dim() - 1)))
    return w, (b - bn_mean) * scale + bn_beta
