import torch


def route(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top k on the logits, then a softmax over those k: p_i / sum of the k p_j is exp(l_i) / sum of the k exp(l_j),
    so renormalising after the full softmax and a softmax over the k chosen logits are the same numbers."""
    top, experts = logits.topk(k, dim=-1)
    e = torch.exp(top - top[:, :1])  # the first is the largest: exp does not overflow
    return e / e.sum(dim=-1, keepdim=True), experts
