import torch


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * torch.sigmoid(x)
        ctx.save_for_backward(y)  # bug: the output saved, then used as if it were x
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad * s * (1 + x * (1 - s))


def silu_and_grad(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    leaf = x.detach().clone().requires_grad_(True)
    y = SiLU.apply(leaf)
    y.backward(dy)
    dx = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)  # None: no gradient reached x
    return y.detach(), dx
