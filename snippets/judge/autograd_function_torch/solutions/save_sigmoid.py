import torch


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + torch.exp(-x))  # exp(-x) = inf for very negative x gives s = 0, not NaN
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * (s + x * s * (1 - s))


def silu_and_grad(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    leaf = x.detach().clone().requires_grad_(True)
    y = SiLU.apply(leaf)
    y.backward(dy)
    dx = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)  # None: no gradient reached x
    return y.detach(), dx
