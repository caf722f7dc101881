import torch


def route(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax over experts, the top k per token by weight (descending), the k weights renormalised to sum to 1."""
    raise NotImplementedError
