import torch


def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # the Jacobian of each row, J = diag(y) - y yᵀ (symmetric), applied to that row's dy
    jac = torch.diag_embed(y) - y.unsqueeze(2) * y.unsqueeze(1)
    return torch.bmm(jac, dy.unsqueeze(2)).squeeze(2)
