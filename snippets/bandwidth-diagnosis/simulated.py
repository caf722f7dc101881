"""Two ways a kernel asks for more sectors than it uses, told apart from an address trace (numba's simulator).

Three read patterns over the same 64x64 fp32 matrix (16 KiB): row by row, every other float, and down
the columns (a naive transpose's read). Per request (one load of a warp) the trace gives the 32-byte
sectors touched; bytes asked for over sectors x 32 is the average bytes used per sector. Over the
whole kernel the distinct sectors are the least any cache could have fetched. The simulator counts
addresses, not hits: what L1 and L2 actually serve is a measurement on a GPU.
"""

from __future__ import annotations

import numpy as np

from snippets._gpu import sim
from verify.claim import claim

Q = "bandwidth-diagnosis"
N = 64  # the matrix is N x N fp32
BX, BY = 32, 8  # a block of 32 x 8 threads: 8 warps, one row of 32 threads each
cuda = sim.cuda()


def read_rows(a, out):
    r = cuda.blockIdx.y * BY + cuda.threadIdx.y
    c = cuda.blockIdx.x * BX + cuda.threadIdx.x
    out[r, c] = a[r, c]


def read_even(a, out):
    r = cuda.blockIdx.y * BY + cuda.threadIdx.y
    c = cuda.blockIdx.x * BX + cuda.threadIdx.x
    out[r, c] = a[r, (2 * c) % N]  # every other float of the row: stride 2 (both halves of the grid read the evens)


def read_columns(a, out):
    r = cuda.blockIdx.y * BY + cuda.threadIdx.y
    c = cuda.blockIdx.x * BX + cuda.threadIdx.x
    out[r, c] = a[c, r]  # the warp's 32 threads walk down a column: 32 rows apart


def _trace(ctx, fn):
    a = np.arange(N * N, dtype=np.float32).reshape(N, N)
    trace, arrays = sim.traced(ctx, fn, (N // BX, N // BY), (BX, BY), a=a, out=np.zeros_like(a))
    return trace, a, arrays["out"]


def _sectors_of(accesses):
    return {b // sim.SECTOR for x in accesses for b in range(x.byte, x.byte + x.size)}


def _pattern(trace):
    per_request, asked = trace.sectors("a"), trace.bytes_requested("a")
    distinct = _sectors_of(a for a in trace.accesses if a.array == "a")
    used = {b for a in trace.accesses if a.array == "a" for b in range(a.byte, a.byte + a.size)}
    return {"per_request": sorted(set(per_request)), "bytes_per_sector": sum(asked) / sum(per_request),
            "request_sectors": sum(per_request), "distinct_sectors": len(distinct),
            "fetch_over_used": len(distinct) * sim.SECTOR / len(used)}


@claim(
    "bw.sector-waste-kinds",
    question=Q,
    statement="同一块 {=64}×{=64} 的 fp32 矩阵，三种读法在模拟器里按 {=32 字节} 的 sector 数：按行读每个 sector 平均用到 "
              "{rows_bytes_per_sector:.0f} 字节；隔一个读一个 float 用到 {even_bytes_per_sector:.0f} 字节，整个 kernel 碰到的不同 sector "
              "合起来是真正要用的字节的 {even_fetch_over_used:x}，另一半哪级缓存都省不掉；按列读每个 sector 只用 "
              "{columns_bytes_per_sector:.0f} 字节、各 request 的 sector 加起来 {columns_request_sectors} 个，可整个 kernel 碰到的不同 sector "
              "只有 {columns_distinct_sectors} 个，合起来正好是要用的字节（{columns_fetch_over_used:x}）：多出来的全是重复读同一批 sector。",
    expect={"rows_bytes_per_sector": 32.0, "rows_fetch_over_used": 1.0,
            "even_bytes_per_sector": 16.0, "even_fetch_over_used": 2.0,
            "columns_bytes_per_sector": 4.0, "columns_request_sectors": 4096, "columns_distinct_sectors": 512,
            "columns_fetch_over_used": 1.0, "results_correct": True},
    needs=["numba"],
)
def _(ctx):
    """Bytes used per sector per request, against the distinct sectors of the whole kernel, for three reads.

    范围：64×64 的 fp32 矩阵，32×8 线程的 block
    """
    out, ok = {}, True
    for key, fn in (("rows", read_rows), ("even", read_even), ("columns", read_columns)):
        trace, a, got = _trace(ctx, fn)
        want = {"rows": a, "even": a[:, (2 * np.arange(N)) % N], "columns": a.T}[key]
        ok &= bool(np.array_equal(got, want))
        out |= {f"{key}_{k}": v for k, v in _pattern(trace).items()}
    return {**out, "results_correct": ok}


@claim(
    "bw.column-reuse-in-block",
    question=Q,
    statement="按列读时，一个 {=32}×{=8} 线程的 block 里 {=8} 个 warp 读相邻的 {=8} 列，一个 sector 正好装下一行里这 {=8} 个 float："
              "每个 block 的 request 加起来 {per_block_requested} 个 sector，不同的只有 {per_block} 个，{reused:.1%} 是同一个 block 里"
              "别的 warp 已经碰过的（warp 按什么顺序执行都一样）。这些重读在 L1 或 L2 里命中与否，决定 DRAM 实际搬的是要用字节的 "
              "{=1} 倍，还是按 {=32 字节} sector 计的 {worst:.0f} 倍（L2 按更大粒度取时还会更多）；模拟器看不到命中，要在 GPU 上比 "
              "DRAM 读的字节和要用的字节。",
    expect={"reused": 0.875, "per_block": 32, "per_block_requested": 256, "worst": 8.0},
    needs=["numba"],
)
def _(ctx):
    """The share of a column read's sectors an earlier warp of the same block already touched.

    范围：64×64 的 fp32 矩阵，32×8 线程的 block
    """
    trace, _, _ = _trace(ctx, read_columns)
    seen, again, total = {}, 0, 0
    for req in trace.requests("a"):  # in (block, warp, n) order: earlier warps of a block come first
        block = req[0].block
        mine = _sectors_of(req)
        again += len(mine & seen.setdefault(block, set()))
        total += len(mine)
        seen[block] |= mine
    (one,) = {len(s) for s in seen.values()}
    return {"reused": again / total, "per_block": one, "per_block_requested": total // len(seen),
            "requests": len(trace.requests("a")),
            "worst": total / len(_sectors_of(a for a in trace.accesses if a.array == "a"))}
