// Register-heavy: each thread keeps an 8x8 block of C (64 fp32 accumulators) and adds an outer product per step of k.
#define TM 8
#define TN 8
extern "C" __global__ void outer(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int k) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc[TM][TN] = {};
    for (int p = 0; p < k; ++p) {
        float ra[TM], rb[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) ra[i] = a[(p * TM + i) * 1024 + t];
#pragma unroll
        for (int j = 0; j < TN; ++j) rb[j] = b[(p * TN + j) * 1024 + t];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) c[(i * TN + j) * 1024 + t] = acc[i][j];
}
