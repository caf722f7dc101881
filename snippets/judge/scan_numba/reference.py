"""Reference for scan-numba, in float64 (the judge passes float64 copies of the inputs)."""


def reference(x):
    return x.cumsum(dim=0)
