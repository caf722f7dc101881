"""Reference for transpose-numba: the exact transpose (the judge passes float64 copies; float32 values survive)."""


def reference(x):
    return x.t().contiguous()
