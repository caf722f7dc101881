// Row statistics of a block-per-row LayerNorm (256 threads, 8 elements a thread), two ways.
// ONE_PASS=0: block-reduce sum(x) for the mean, then block-reduce sum((x-mean)^2): two block reductions.
// ONE_PASS=1: block-reduce the pair (sum(x), sum(x*x)) once, var = E[x^2] - E[x]^2 (fewer rounds, cancels in fp32).
#define THREADS 256
#define PER 8

template <typename T>
__device__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ float2 warp_sum2(float2 v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  return v;
}

template <typename T, typename F>
__device__ T block_sum(T v, T* smem, F wsum) {  // warp shuffle, one barrier to publish, one to read back
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = wsum(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = lane < THREADS / 32 ? smem[lane] : T{};  // one partial a lane, the other lanes add zero
  v = wsum(v);
  __syncthreads();  // smem is reused by the next reduction
  return v;
}

extern "C" __global__ void layernorm_stats(float2* __restrict__ out, const float* __restrict__ x) {
  const float* row = x + blockIdx.x * THREADS * PER;
  float v[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) v[i] = row[threadIdx.x + i * THREADS];
  const float n = THREADS * PER;
#if ONE_PASS
  __shared__ float2 s2[THREADS / 32];
  float2 acc = make_float2(0.f, 0.f);
#pragma unroll
  for (int i = 0; i < PER; ++i) { acc.x += v[i]; acc.y += v[i] * v[i]; }
  acc = block_sum(acc, s2, warp_sum2);
  float mean = acc.x / n, var = acc.y / n - mean * mean;
#else
  __shared__ float s1[THREADS / 32];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < PER; ++i) s += v[i];
  float mean = block_sum(s, s1, warp_sum<float>) / n;
  float q = 0.f;
#pragma unroll
  for (int i = 0; i < PER; ++i) q += (v[i] - mean) * (v[i] - mean);
  float var = block_sum(q, s1, warp_sum<float>) / n;
#endif
  if (threadIdx.x == 0) out[blockIdx.x] = make_float2(mean, var);
}
