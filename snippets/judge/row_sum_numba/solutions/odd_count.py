import numpy as np
from numba import cuda

THREADS = 64


@cuda.jit
def _row_sum_kernel(x, y):
    """No more threads than columns, so a block may hold any number of threads: each tree step keeps the odd one."""
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    part = cuda.shared.array(THREADS, np.float32)
    acc = np.float32(0.0)
    for col in range(tid, x.shape[1], cuda.blockDim.x):
        acc += x[row, col]
    part[tid] = acc
    cuda.syncthreads()
    n = cuda.blockDim.x
    while n > 1:
        half = (n + 1) // 2
        if tid < n // 2:
            part[tid] += part[tid + half]  # with n odd, part[n // 2] waits for the next step
        cuda.syncthreads()
        n = half
    if tid == 0:
        y[row] = part[0]


def row_sum(x: np.ndarray) -> np.ndarray:
    y = np.empty(x.shape[0], dtype=np.float32)
    _row_sum_kernel[x.shape[0], min(x.shape[1], THREADS)](x, y)
    return y
