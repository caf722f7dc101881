import math

import numpy as np
from numba import cuda

TILE, ROWS = 32, 8


@cuda.jit
def _transpose_kernel(x, y):
    tile = cuda.shared.array((TILE, TILE + 1), np.float32)  # the extra column: a column read hits 32 banks
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    for k in range(0, TILE, ROWS):
        row = cuda.blockIdx.y * TILE + ty + k
        if row < x.shape[0] and col < x.shape[1]:
            tile[ty + k, tx] = x[row, col]
    cuda.syncthreads()
    col = cuda.blockIdx.y * TILE + tx  # y's column: x's row
    for k in range(0, TILE, ROWS):
        row = cuda.blockIdx.x * TILE + ty + k
        if row < y.shape[0] and col < y.shape[1]:
            y[row, col] = tile[tx, ty + k]


def transpose(x: np.ndarray) -> np.ndarray:
    y = np.empty((x.shape[1], x.shape[0]), dtype=np.float32)
    grid = (math.ceil(x.shape[1] / TILE), math.ceil(x.shape[0] / TILE))
    _transpose_kernel[grid, (TILE, ROWS)](x, y)
    return y
