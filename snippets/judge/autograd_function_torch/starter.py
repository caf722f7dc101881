import torch


class SiLU(torch.autograd.Function):
    """y = x * sigmoid(x), with a backward written by hand."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


def silu_and_grad(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the judge calls (keep it as it is): SiLU on a leaf copy of x, then backpropagate dy."""
    leaf = x.detach().clone().requires_grad_(True)
    y = SiLU.apply(leaf)
    y.backward(dy)
    dx = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)  # None: no gradient reached x
    return y.detach(), dx
