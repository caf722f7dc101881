// Copy kernels: one float per thread, one float4 per thread (with and without const __restrict__),
// and four consecutive floats per thread through a float* (with and without a promise of 16-byte alignment).
#include <cuda_runtime.h>
// the alignment the float4 type carries (and that a 128-bit load of one needs)
__constant__ int float4_alignment = alignof(float4);

#if defined(SCALAR)
extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
#elif defined(VEC4)
extern "C" __global__ void copy(const float4* __restrict__ x, float4* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) y[i] = x[i];
}
#elif defined(VEC4_PLAIN)
extern "C" __global__ void copy(const float4* x, float4* y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) y[i] = x[i];
}
#elif defined(FOUR_SCALARS)
extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4)
        for (int k = 0; k < 4; ++k) y[4 * i + k] = x[4 * i + k];
}
#elif defined(FOUR_ALIGNED)
extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, int n4) {
    const float* xa = static_cast<const float*>(__builtin_assume_aligned(x, 16));
    float* ya = static_cast<float*>(__builtin_assume_aligned(y, 16));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4)
        for (int k = 0; k < 4; ++k) ya[4 * i + k] = xa[4 * i + k];
}
#endif
