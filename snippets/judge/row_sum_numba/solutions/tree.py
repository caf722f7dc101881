import numpy as np
from numba import cuda

THREADS = 64


@cuda.jit
def _row_sum_kernel(x, y):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    part = cuda.shared.array(THREADS, np.float32)
    acc = np.float32(0.0)
    col = tid
    while col < x.shape[1]:  # a strided loop: any number of columns
        acc += x[row, col]
        col += THREADS
    part[tid] = acc
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            part[tid] += part[tid + step]
        cuda.syncthreads()  # every thread finishes this step before the next one reads
        step //= 2
    if tid == 0:
        y[row] = part[0]


def row_sum(x: np.ndarray) -> np.ndarray:
    y = np.empty(x.shape[0], dtype=np.float32)
    _row_sum_kernel[x.shape[0], THREADS](x, y)
    return y
