// C = A @ B (fp32, row-major, n a multiple of 16): a 16x16 block of threads computes a 16x16 tile of C,
// staging a 16 x BK slice of A and a BK x 16 slice of B in shared memory per step.
#ifndef BK
#define BK 16
#endif

extern "C" __global__ void tiled_mm(float* __restrict__ c, const float* __restrict__ a,
                                    const float* __restrict__ b, int n) {
  __shared__ float as[16][BK];
  __shared__ float bs[BK][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += BK) {
    for (int k = tx; k < BK; k += 16) as[ty][k] = a[row * n + k0 + k];
    for (int k = ty; k < BK; k += 16) bs[k][tx] = b[(k0 + k) * n + col];
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < BK; ++k) acc += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}
