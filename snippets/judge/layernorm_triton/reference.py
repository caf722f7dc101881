"""Reference for layernorm-triton, in float64 (the judge passes float64 copies of the inputs)."""


def reference(x, weight, bias, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * weight + bias
