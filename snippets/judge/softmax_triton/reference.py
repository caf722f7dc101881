"""Reference for softmax-triton, in float64 (the judge passes float64 copies of the inputs)."""


def reference(x):
    e = (x - x.max(dim=1, keepdim=True).values).exp()
    return e / e.sum(dim=1, keepdim=True)
