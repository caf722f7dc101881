import torch


def fold(conv_w: torch.Tensor, conv_b: torch.Tensor | None, bn_mean: torch.Tensor, bn_var: torch.Tensor,
         bn_gamma: torch.Tensor, bn_beta: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The weight flattened to (out_channels, rest), so one column of scales covers 1-D, 2-D and 3-D kernels."""
    inv_std = torch.rsqrt(bn_var + eps)
    scale = bn_gamma * inv_std
    w = (conv_w.reshape(conv_w.shape[0], -1) * scale[:, None]).reshape(conv_w.shape)
    b = bn_beta - bn_mean * scale
    if conv_b is not None:
        b = b + conv_b * scale
    return w, b
