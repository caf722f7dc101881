"""A CUDA C++ row sum by hand: a warp-shuffle reduction, and a block reduction across warps (nvcc, sm_90a).

The CUDA sources are string literals inside the claim, so the claim's code shows them. Compiled
only: nothing runs, so nothing here says how fast either is.
"""

from __future__ import annotations

from snippets._gpu import compiled
from verify.claim import claim

Q = "cuda-kernels-by-hand"


@claim(
    "kernels.cuda-warp-reduce",
    question=Q,
    statement="nvcc 把一个 warp 一行的 `row_sum_warp` 编译到 sm_90a：{warp_shfl} 条 `SHFL.DOWN`（偏移 {warp_offsets}），"
              "{warp_bar} 个 barrier、shared memory {warp_shared} 字节，float4 读成 {warp_ldg}；一个 block 一行的 "
              "`row_sum_block` 要 {block_shfl} 条 SHFL.DOWN（两轮 warp 归约）、{block_bar} 个 `BAR.SYNC`（`__syncthreads`）和 "
              "{block_shared} 字节 shared memory（每个 warp 一个部分和）。",
    expect={"warp_shfl": 5, "warp_bar": 0, "warp_shared": 0, "warp_ldg": "LDG.E.128.CONSTANT",
            "block_shfl": 10, "block_bar": 1, "block_shared": 128},
    needs=["nvcc"],
)
def _(ctx):
    warp_sum = r"""
__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)      // 16, 8, 4, 2, 1: five steps
        v += __shfl_down_sync(0xffffffffu, v, offset);   // the mask names the lanes; no __syncthreads
    return v;                                            // lane 0 holds the warp's sum
}
"""
    row_sum_warp = warp_sum + r"""
// one warp per row; n % 4 == 0 and rows 16-byte aligned, so a row is n / 4 float4
__global__ void row_sum_warp(const float* __restrict__ x, float* __restrict__ y, int rows, int n) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float4* r = reinterpret_cast<const float4*>(x + (size_t)row * n);
    float s = 0.f;
    for (int i = lane; i < n / 4; i += 32) {            // consecutive lanes read consecutive float4
        float4 v = r[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    s = warp_sum(s);
    if (lane == 0) y[row] = s;
}
"""
    row_sum_block = warp_sum + r"""
// one block per row (blockDim.x a multiple of 32, at most 1024): warp sums meet in shared memory
__global__ void row_sum_block(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float partial[32];
    const float* r = x + (size_t)blockIdx.x * n;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += r[i];
    s = warp_sum(s);
    if (lane == 0) partial[warp] = s;
    __syncthreads();                                     // other warps' partial sums are visible after this
    if (warp == 0) {
        s = lane < blockDim.x / 32 ? partial[lane] : 0.f;
        s = warp_sum(s);
        if (lane == 0) y[blockIdx.x] = s;
    }
}
"""
    out = {}
    for key, src in (("warp", row_sum_warp), ("block", row_sum_block)):
        c = compiled.cuda_source(ctx, src, target="sm_90a", name=f"row_sum_{key}")
        out[f"{key}_shfl"] = c.sass_count("SHFL.DOWN")
        out[f"{key}_offsets"] = [int(s.split(",")[-2], 16) for s in c.sass_lines("SHFL")[:5]]
        out[f"{key}_bar"] = c.sass_count("BAR")
        out[f"{key}_shared"] = c.shared
        out[f"{key}_ldg"] = " ".join(sorted(op for op in c.sass_ops if op.startswith("LDG")))
        out[f"{key}_registers"] = c.registers
        out[f"{key}_spills"] = c.info.get("spill_stores", 0)
    return out
