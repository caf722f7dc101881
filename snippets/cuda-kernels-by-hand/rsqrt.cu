// One rsqrtf per element; built with and without -ftz=true (Triton's tl.rsqrt is rsqrt.approx.ftz.f32).
extern "C" __global__ void rsqrt_kernel(float* __restrict__ y, const float* __restrict__ x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = rsqrtf(x[i]);
}
