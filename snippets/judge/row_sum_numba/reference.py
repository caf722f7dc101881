"""Reference for row-sum-numba, in float64 (the judge passes float64 copies of the inputs)."""


def reference(x):
    return x.sum(dim=1)
