// Transpose of a row-major n x n float matrix in 32x32 tiles; a block of 32x8 threads, each thread
// moves 4 elements (the layout of NVIDIA's transpose sample; shared.py simulates the same kernels).
// -DNAIVE: straight in global memory. Otherwise through a shared tile: PAD=0 tile[32][32], PAD=1 tile[32][33].
#define TILE 32
#define ROWS 8

#if defined(NAIVE)
extern "C" __global__ void transpose(const float* __restrict__ a, float* __restrict__ out, int n) {
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * n + x] = a[x * n + (y + j)];  // reads down a column of a
}
#else
#ifndef PAD
#define PAD 0
#endif
extern "C" __global__ void transpose(const float* __restrict__ a, float* __restrict__ out, int n) {
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = a[(y + j) * n + x];  // a row of a -> a row of the tile
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];  // a column of the tile -> a row of out
}
#endif
