"""Reference for rmsnorm-torch, in float64 (the judge passes float64 copies of the inputs)."""


def reference(x, weight, eps):
    return x / (x.pow(2).mean(dim=-1, keepdim=True) + eps).sqrt() * weight
