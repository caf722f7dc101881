"""Reference for softmax-backward-torch, in float64 (the judge passes float64 copies of the inputs)."""


def reference(dy, y):
    return y * (dy - (dy * y).sum(dim=1, keepdim=True))
