"""Reference for conv-bn-fold-torch, in float64 (the judge passes float64 copies of the inputs)."""

import torch


def reference(conv_w, conv_b, bn_mean, bn_var, bn_gamma, bn_beta, eps):
    scale = bn_gamma / torch.sqrt(bn_var + eps)
    b = conv_b if conv_b is not None else torch.zeros_like(bn_mean)
    w = conv_w * scale.reshape(-1, *([1] * (conv_w.dim() - 1)))
    return w, (b - bn_mean) * scale + bn_beta
