"""Hand-written CUDA kernels in numba's simulator: a shared-memory transpose and a block scan.

The simulator runs every thread of a block as a Python thread: indices, shared memory,
``syncthreads`` work, and the address trace gives sectors and bank conflicts. It has no warps in
lockstep and no timing: a correct result there shows the algorithm, not that the kernel is free
of races on a GPU.
"""

from __future__ import annotations

import numpy as np

from snippets._gpu import sim
from verify.claim import claim

Q = "cuda-kernels-by-hand"
cuda = sim.cuda()
TILE, ROWS = 32, 8     # a 32x32 tile, a block of 32x8 threads: each thread moves 4 elements
SCAN_N = 128           # one block of 128 threads scans 128 values


def make_transpose(pad):
    def transpose(x, out):
        tile = cuda.shared.array((TILE, TILE + pad), np.float32)
        bx, by = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        for j in range(0, TILE, ROWS):
            tile[ty + j, tx] = x[by + ty + j, bx + tx]        # read a row of x: coalesced
        cuda.syncthreads()
        for j in range(0, TILE, ROWS):
            out[bx + ty + j, by + tx] = tile[tx, ty + j]      # read a column of the tile, write a row of out
    return transpose


def hillis_steele_scan(x, out):
    buf = cuda.shared.array((2, SCAN_N), np.float32)          # double buffer: read one, write the other
    i = cuda.threadIdx.x
    buf[0, i] = x[i]
    cuda.syncthreads()
    src, d = 0, 1
    while d < SCAN_N:                                          # log2(128) = 7 steps
        v = buf[src, i]
        if i >= d:
            v += buf[src, i - d]
        buf[1 - src, i] = v
        cuda.syncthreads()                                     # everyone's step d is written before step 2d reads
        src, d = 1 - src, d * 2
    out[i] = buf[src, i]


def scan_without_sync(x, out):
    buf = cuda.shared.array(SCAN_N, np.float32)               # in place, no syncthreads: a race
    i = cuda.threadIdx.x
    buf[i] = x[i]
    d = 1
    while d < SCAN_N:
        v = buf[i]
        if i >= d:
            v += buf[i - d]
        buf[i] = v
        d *= 2
    out[i] = buf[i]


@claim(
    "kernels.transpose-padding",
    question=Q,
    statement="numba 模拟器里跑 32×32 tile 的 shared memory 转置（{shape}，结果{equal:?等于|不等于} `x.T`）：tile 每行 {=32} 个 float 时，"
              "按列读 tile 的每个 warp 请求有 {conflict_32}-way bank conflict；每行补一列成 {=33} 个后是 {conflict_33}（无冲突）。"
              "两种写法读 x、写 out 的每个 warp 请求都是 {sectors} 个 sector（合并访问）。",
    expect={"equal": True, "conflict_32": 32, "conflict_33": 1, "store_conflict_33": 1, "sectors": 4},
    needs=["numba"],
)
def _(ctx):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    out, equal, sectors = {}, True, set()
    for pad in (0, 1):
        trace, arrays = sim.traced(ctx, make_transpose(pad), (2, 2), (TILE, ROWS), x=x, out=np.zeros_like(x))
        equal &= bool(np.array_equal(arrays["out"], x.T))
        reqs, degree = trace.requests("shared0"), trace.conflicts("shared0")
        out[f"conflict_{TILE + pad}"] = max(c for r, c in zip(reqs, degree) if not r[0].write)
        out[f"store_conflict_{TILE + pad}"] = max(c for r, c in zip(reqs, degree) if r[0].write)
        sectors |= set(trace.sectors("x")) | set(trace.sectors("out"))
    (out["sectors"],) = sectors
    return {"shape": list(x.shape), "equal": equal, **out}


@claim(
    "kernels.block-scan-numba",
    question=Q,
    statement="Hillis–Steele 块内扫描（{=128} 个线程、shared memory 双缓冲、每步后 `syncthreads`）在 numba 模拟器里与 `np.cumsum` "
              "最大相差 {max_abs_err:.1e}，{close:?在 fp32 容差内|超出 fp32 容差}，共 {steps} 步；去掉双缓冲和 `syncthreads` 的原地版本这次"
              "与 `np.cumsum` {nosync_close:?相符|不符，算错了}。",
    expect={"close": True, "steps": 7, "nosync_close": False},
    needs=["numba"],
)
def _(ctx):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SCAN_N).astype(np.float32)
    ref = np.cumsum(x.astype(np.float64))
    trace, arrays = sim.traced(ctx, hillis_steele_scan, 1, SCAN_N, x=x, out=np.zeros_like(x))
    writes = sum(1 for a in trace.accesses if a.array == "shared0" and a.write and a.thread == 0)
    _, racy = sim.traced(ctx, scan_without_sync, 1, SCAN_N, x=x, out=np.zeros_like(x))
    return {"n": SCAN_N, "steps": writes - 1,  # thread 0 writes its value once, then once per step
            "max_abs_err": float(np.abs(arrays["out"] - ref).max()),
            "close": bool(np.allclose(arrays["out"], ref, rtol=1.3e-6, atol=1e-5)),
            "nosync_close": bool(np.allclose(racy["out"], ref, rtol=1.3e-6, atol=1e-5))}
