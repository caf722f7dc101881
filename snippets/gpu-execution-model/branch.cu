// One if/else whose condition is either different inside a warp (threadIdx.x % 2) or the same for all
// 32 threads of a warp ((threadIdx.x / 32) % 2). N: how many dependent FMAs each path does.
#ifndef N
#define N 16
#endif
#if UNIFORM
#define COND ((threadIdx.x / 32) % 2)
#else
#define COND (threadIdx.x % 2)
#endif

extern "C" __global__ void branch(float* __restrict__ out, const float* __restrict__ x) {
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
