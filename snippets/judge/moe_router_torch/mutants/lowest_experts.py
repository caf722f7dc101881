import torch


def route(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    probs = torch.softmax(logits, dim=-1)
    weights, experts = torch.topk(probs, k, dim=-1, largest=False)  # bug: the k lowest experts
    return weights / weights.sum(dim=-1, keepdim=True), experts
