"""The 32x32 transpose through shared memory, and bank conflicts, in numba's simulator.

The kernels mirror ``transpose.cu`` (compiled in ``sass.py``): 32x32 tiles, a block of 32x8 threads,
each thread moves 4 elements. The trace gives the sectors of each global request and, per
shared-memory request, the worst number of distinct 4-byte words in one of the 32 banks.
"""

from __future__ import annotations

import numpy as np

from snippets._gpu import sim
from verify.claim import claim

Q = "gpu-memory-hierarchy"
TILE, ROWS = 32, 8
N = 64  # a 64x64 matrix: 2x2 blocks
cuda = sim.cuda()


def transpose_naive(a, out):
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        out[y + j, x] = a[x, y + j]  # reads down a column of a


def transpose_tile32(a, out):
    tile = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        tile[ty + j, tx] = a[y + j, x]  # a row of a -> a row of the tile
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[tx, ty + j]  # a column of the tile -> a row of out


def transpose_tile33(a, out):
    tile = cuda.shared.array((TILE, TILE + 1), np.float32)  # one padding column
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[tx, ty + j]


def shared_read(idx, out):
    buf = cuda.shared.array(1024, np.float32)
    i = cuda.threadIdx.x
    for k in range(32):
        buf[i * 32 + k] = i * 32 + k  # fill (each of these writes is a request too)
    cuda.syncthreads()
    out[i] = buf[idx[i]]


def _run(ctx, fn):
    a = np.arange(N * N, dtype=np.float32).reshape(N, N)
    trace, arrays = sim.traced(ctx, fn, (N // TILE, N // TILE), (TILE, ROWS), a=a, out=np.zeros_like(a))
    return trace, bool(np.array_equal(arrays["out"], a.T))


def _one(values):
    """The value every request shares, or the sorted distinct values when they differ."""
    distinct = sorted(set(values))
    return distinct[0] if len(distinct) == 1 else distinct


def _shared(trace, write):
    return _one(c for req, c in zip(trace.requests("shared0"), trace.conflicts("shared0")) if req[0].write == write)


@claim(
    "smem.transpose-sectors",
    question=Q,
    statement="64×64 的 fp32 转置（32×32 的块、每块 32×8 个线程）：直接在 global memory 里转置，读的一侧每个 request "
              "要 {naive.read} 个 sector、写的一侧 {naive.write} 个；经 shared memory 中转后读的一侧 "
              "{tiled.read} 个、写的一侧 {tiled.write} 个；global request 总数不变（各 {naive.requests} 个），"
              "各 request 的 sector 数加起来从 {naive.total} 降到 {tiled.total}（这是 L1 收到的请求量，不是 HBM 字节：列访问的那些 sector "
              "会被相邻的 request 再用到，有多少在 L1/L2 命中，模拟器不算）。两种写法的结果{correct:?都等于|并不都等于} `a.T`。",
    expect={"naive": {"read": 32, "write": 4, "requests": 256, "total": 4608},
            "tiled": {"read": 4, "write": 4, "requests": 256, "total": 1024}, "correct": True},
    needs=["numba"],
)
def _(ctx):
    out, ok = {}, True
    for key, fn in (("naive", transpose_naive), ("tiled", transpose_tile33)):
        trace, good = _run(ctx, fn)
        ok &= good
        read, write = trace.sectors("a"), trace.sectors("out")
        out[key] = {"read": _one(read), "write": _one(write),
                    "requests": len(read) + len(write), "total": sum(read) + sum(write)}
    return {**out, "correct": ok}


@claim(
    "smem.transpose-conflicts",
    question=Q,
    statement="`tile[32][32]` 按行写入的冲突度是 {tile32.write}（无冲突），按列读出时每个 request 是 {tile32.read} 路冲突："
              "一列的 32 个 float 相隔 {=128 字节}，全落在同一个 bank；补一列成 `tile[32][33]` 后，一行跨 33 个 word，"
              "一列的 32 个 float 错开到 32 个不同的 bank，按行写入 {tile33.write} 路、按列读出 {tile33.read} 路。两种 tile 转置的结果{correct:?都等于|并不都等于} `a.T`。",
    expect={"tile32": {"write": 1, "read": 32}, "tile33": {"write": 1, "read": 1}, "correct": True},
    needs=["numba"],
)
def _(ctx):
    out, ok = {}, True
    for key, fn in (("tile32", transpose_tile32), ("tile33", transpose_tile33)):
        trace, good = _run(ctx, fn)
        ok &= good
        out[key] = {"write": _shared(trace, True), "read": _shared(trace, False)}
    return {**out, "correct": ok}


@claim(
    "smem.broadcast",
    question=Q,
    statement="bank conflict 的度数是同一个 bank 里被访问的不同 word 数，不是访问这个 bank 的线程数：32 个线程读同一个 word "
              "是广播，{same_word} 路；每两个线程读同一个 word（16 个不同 word、连续）也是 {pairs} 路；"
              "16 个线程读 word 0、另 16 个读 word 32（同一个 bank 的两个 word）是 {two_words} 路；word 步长为 2 时 {stride2} 路，"
              "步长为 32 时 {stride32} 路。读出的值{correct:?都正确|有错}。",
    expect={"same_word": 1, "pairs": 1, "two_words": 2, "stride2": 2, "stride32": 32, "correct": True},
    needs=["numba"],
)
def _(ctx):
    i = np.arange(32)
    patterns = {"same_word": np.zeros(32), "pairs": i // 2, "two_words": np.where(i < 16, 0, 32),
                "stride2": i * 2, "stride32": i * 32}
    out, threads, ok = {}, {}, True
    for key, idx in patterns.items():
        idx = idx.astype(np.int32)
        trace, arrays = sim.traced(ctx, shared_read, 1, 32, idx=idx, out=np.zeros(32, np.float32))
        ok &= bool(np.array_equal(arrays["out"], idx.astype(np.float32)))
        read = trace.requests("shared0")[-1]  # the last request: the read
        assert all(not a.write for a in read)
        out[key] = trace.conflicts("shared0")[-1]
        banks = [a.byte // sim.BANK_WIDTH % sim.BANKS for a in read]
        threads[key] = max(banks.count(b) for b in set(banks))  # threads on the busiest bank
    return {**out, "threads_on_one_bank": threads, "correct": ok}
