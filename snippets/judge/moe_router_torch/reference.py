"""Reference for moe-router-torch, in float64 (the judge passes float64 copies of the inputs)."""

import torch


def reference(logits, k):
    probs = torch.softmax(logits, dim=-1)
    weights, experts = torch.topk(probs, k, dim=-1, largest=True, sorted=True)
    return weights / weights.sum(dim=-1, keepdim=True), experts
