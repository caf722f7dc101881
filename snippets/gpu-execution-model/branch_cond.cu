// The same if/else as branch.cu (N dependent FMAs a path), with the condition picked by COND_KIND:
// 0: threadIdx.x % 2 (differs inside a warp), 1: blockIdx.x % 2 (the same for the whole block),
// 2: a kernel argument (the same for the whole grid), 3: (threadIdx.x / 32) % 2 (the same inside a warp,
// but only because of how warps are formed: the compiler cannot see that).
#ifndef N
#define N 16
#endif
#if COND_KIND == 0
#define COND (threadIdx.x % 2)
#elif COND_KIND == 1
#define COND (blockIdx.x % 2)
#elif COND_KIND == 2
#define COND (flag)
#else
#define COND ((threadIdx.x / 32) % 2)
#endif

extern "C" __global__ void branch(float* __restrict__ out, const float* __restrict__ x, int flag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  if (COND) {
#pragma unroll
    for (int j = 0; j < N; ++j) v = v * 1.0001f + 0.5f;
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) v = v * v - 0.25f;
  }
  out[i] = v;
}
