// transpose-numba's reference in CUDA C++: the numba reference's algorithm. A block of 32×8 threads moves
// one 32×32 tile: coalesced reads of x into shared memory, a barrier, coalesced writes of y with the
// tile's indices swapped. The tile has one extra column so that a column of it lies in 32 banks.
// Compiled for the report (sm_80 / sm_90a); nothing runs it here.

constexpr int TILE = 32, ROWS = 8;  // each thread moves TILE / ROWS = 4 elements

__global__ void transpose_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    for (int k = 0; k < TILE; k += ROWS) {
        int row = blockIdx.y * TILE + ty + k;
        if (row < rows && col < cols) tile[ty + k][tx] = x[(size_t)row * cols + col];
    }
    __syncthreads();  // the tile is complete before any thread reads another thread's element
    col = blockIdx.y * TILE + tx;  // y's column: x's row
    for (int k = 0; k < TILE; k += ROWS) {
        int row = blockIdx.x * TILE + ty + k;  // y's row: x's column
        if (row < cols && col < rows) y[(size_t)row * rows + col] = tile[tx][ty + k];
    }
}

// x: rows × cols floats on the device; y: cols × rows floats
void transpose(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE), block(TILE, ROWS);
    transpose_kernel<<<grid, block, 0, stream>>>(x, y, rows, cols);
}
