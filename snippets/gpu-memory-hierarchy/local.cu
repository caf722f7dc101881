// A per-thread array of 16 floats indexed by a value known only at run time.
#define N 16
#if defined(READ)
// filled with constant indices, read once at idx[t]
extern "C" __global__ void pick(const float* __restrict__ x, const int* __restrict__ idx, float* __restrict__ out) {
    float buf[N];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < N; ++k) buf[k] = x[t * N + k];
    out[t] = buf[idx[t] & (N - 1)];
}
#elif defined(HIST)
// a per-thread histogram: read-modify-write at a run-time index, 64 times
extern "C" __global__ void pick(const float* __restrict__ x, const int* __restrict__ idx, float* __restrict__ out) {
    float h[N];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < N; ++k) h[k] = 0.f;
    for (int k = 0; k < 64; ++k) h[idx[t * 64 + k] & (N - 1)] += x[t * 64 + k];
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += h[k] * k;
    out[t] = s;
}
#endif
