// C = A @ B with register blocking: each of 256 threads keeps an 8x8 tile of C in registers
// (64 accumulators), so the kernel wants many registers. MIN_BLOCKS=m adds __launch_bounds__(256, m):
// 256 threads a block, and at least m blocks resident on one SM.
#if MIN_BLOCKS
#define BOUNDS __launch_bounds__(256, MIN_BLOCKS)
#else
#define BOUNDS
#endif
#define TM 8
#define TN 8

extern "C" __global__ void BOUNDS micro_tile(float* __restrict__ c, const float* __restrict__ a,
                                             const float* __restrict__ b, int n) {
  int t = threadIdx.x;
  int row0 = (blockIdx.y * 16 + t / 16) * TM, col0 = (blockIdx.x * 16 + t % 16) * TN;
  float acc[TM][TN] = {};
  for (int k = 0; k < n; ++k) {
    float ar[TM], br[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) ar[i] = a[(row0 + i) * n + k];
#pragma unroll
    for (int j = 0; j < TN; ++j) br[j] = b[k * n + col0 + j];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] += ar[i] * br[j];
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) c[(row0 + i) * n + col0 + j] = acc[i][j];
}
