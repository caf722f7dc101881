// row-sum-numba's reference in CUDA C++: the numba reference's algorithm (one block per row, a strided
// partial sum per thread, a tree in shared memory), with float4 loads for the aligned body of each row.
// Compiled for the report (sm_80 / sm_90a); nothing runs it here.

constexpr int THREADS = 64;  // threads per block (a power of two), as in the numba version

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float part[THREADS];
    const float* row = x + (size_t)blockIdx.x * cols;
    int tid = threadIdx.x;
    // A row starts on a 16-byte boundary only when cols % 4 == 0: up to 3 floats before the first
    // float4, the float4 body, then up to 3 floats after it.
    int head = min((int)((4 - (reinterpret_cast<size_t>(row) / sizeof(float)) % 4) % 4), cols);
    int quads = (cols - head) / 4;
    const float4* body = reinterpret_cast<const float4*>(row + head);
    float acc = 0.f;
    if (tid < head) acc += row[tid];
    for (int i = tid; i < quads; i += THREADS) {  // consecutive threads read consecutive float4
        float4 v = body[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    int tail = head + 4 * quads + tid;
    if (tail < cols) acc += row[tail];
    part[tid] = acc;
    __syncthreads();
    for (int step = THREADS / 2; step > 0; step >>= 1) {
        if (tid < step) part[tid] += part[tid + step];
        __syncthreads();  // every thread finishes this step before the next one reads
    }
    if (tid == 0) y[blockIdx.x] = part[0];
}

// x: rows × cols floats on the device (cudaMalloc'd, so the first row is 16-byte aligned); y: rows floats
void row_sum(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    row_sum_kernel<<<rows, THREADS, 0, stream>>>(x, y, cols);
}
