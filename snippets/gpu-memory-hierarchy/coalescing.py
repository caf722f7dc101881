"""Coalescing: the 32-byte sectors one warp's load asks for, by access pattern (numba's simulator).

A request is one load instruction of the 32 threads of a warp; the trace counts the distinct
32-byte sectors (and, here, 128-byte lines) its addresses fall in. That is what L1 must look up
and what goes on to L2 on a miss; caches that serve a later request are not modelled.
"""

from __future__ import annotations

import numpy as np

from snippets._gpu import sim
from verify.claim import claim

Q = "gpu-memory-hierarchy"
WARP = 32
LINE = 128  # bytes of a cache line: 4 sectors
cuda = sim.cuda()

#: a 16-byte element (x, y, z, w) viewed over a float32 buffer: the footprint of a float4
FLOAT4 = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32), ("w", np.float32)])


def strided_copy(x, out, stride, start):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = x[start + i * stride]


def gather(x, idx, out):
    i = cuda.threadIdx.x
    out[i] = x[idx[i]]


def copy_float4(x, out):
    i = cuda.threadIdx.x
    v = x[i]  # one 16-byte access per thread
    out[4 * i] = v["x"]
    out[4 * i + 1] = v["y"]
    out[4 * i + 2] = v["z"]
    out[4 * i + 3] = v["w"]


def copy_four_scalars(x, out):
    i = cuda.threadIdx.x
    for k in range(4):  # four 4-byte accesses per thread, each a request of its own
        out[4 * i + k] = x[4 * i + k]


def _lines(trace, name):
    return [len({b // LINE for a in req for b in range(a.byte, a.byte + a.size)}) for req in trace.requests(name)]


def _strided(ctx, stride, start, warps=1, dtype=np.float32):
    n = WARP * warps
    x = np.arange(start + n * stride + WARP, dtype=dtype)
    trace, arrays = sim.traced(ctx, strided_copy, warps, WARP, x=x, out=np.zeros(n, dtype), stride=stride, start=start)
    ok = bool(np.array_equal(arrays["out"], x[start:start + n * stride:stride]))
    return trace, ok


@claim(
    "gmem.sectors-by-stride",
    question=Q,
    statement="一个 warp 读 32 个 fp32（每线程 {=4 字节}），按 {=32 字节} 的 sector 计：连续读要 {unit} 个 sector，"
              "字节利用率 {eff.unit:pct}；元素步长为 2 时要 {stride2} 个，利用率 {eff.stride2:pct}；步长为 32 时要 {stride32} 个，"
              "利用率只剩 {eff.stride32:.1%}，每个 sector 只用到一个 float。",
    expect={"unit": 4, "stride2": 8, "stride32": 32, "eff": {"unit": 1.0, "stride2": 0.5, "stride32": 0.125},
            "copies_correct": True},
    needs=["numba"],
)
def _(ctx):
    out, eff, ok = {}, {}, True
    for key, stride in (("unit", 1), ("stride2", 2), ("stride32", 32)):
        trace, good = _strided(ctx, stride, 0)
        ok &= good
        (out[key],) = trace.sectors("x")
        (asked,) = trace.bytes_requested("x")
        eff[key] = asked / (out[key] * sim.SECTOR)
    return {**out, "eff": eff, "copies_correct": ok}


@claim(
    "gmem.misaligned",
    question=Q,
    statement="起点错开一个 fp32 时，同样 32 个连续 float 落进 {sectors.misaligned} 个 sector（对齐时 {sectors.aligned} 个），"
              "利用率 {eff:pct}；按 {=128 字节} 的 line 算是 {lines.misaligned} 条对 {lines.aligned} 条。"
              "{warps} 个相邻 warp 一起读时，各 request 的 sector 数加起来是 {total.misaligned} 对 {total.aligned}，"
              "但去重后只有 {distinct.misaligned} 对 {distinct.aligned} 个不同的 sector：边界上的 sector 被相邻 warp 共用。",
    expect={"sectors": {"aligned": 4, "misaligned": 5}, "lines": {"aligned": 1, "misaligned": 2}, "extra": 0.25,
            "eff": 0.8, "total": {"aligned": 32, "misaligned": 40}, "distinct": {"aligned": 32, "misaligned": 33},
            "copies_correct": True},
    needs=["numba"],
)
def _(ctx):
    sectors, lines, total, distinct, ok = {}, {}, {}, {}, True
    warps = 8
    for key, start in (("aligned", 0), ("misaligned", 1)):
        trace, good = _strided(ctx, 1, start)
        ok &= good
        (sectors[key],), (lines[key],) = trace.sectors("x"), _lines(trace, "x")
        trace, good = _strided(ctx, 1, start, warps=warps)
        ok &= good
        total[key] = sum(trace.sectors("x"))
        distinct[key] = len({b // sim.SECTOR for a in trace.accesses if a.array == "x"
                             for b in range(a.byte, a.byte + a.size)})
    return {"sectors": sectors, "lines": lines, "extra": sectors["misaligned"] / sectors["aligned"] - 1,
            "eff": WARP * 4 / (sectors["misaligned"] * sim.SECTOR), "warps": warps, "total": total,
            "distinct": distinct, "copies_correct": ok}


@claim(
    "gmem.order-and-broadcast",
    question=Q,
    statement="合并看的是一个 warp 的地址落进几个 sector，不看线程的顺序：32 个线程以打乱的顺序读同样 {=128 字节}，"
              "仍是 {permuted} 个 sector；32 个线程读同一个 float，只要 {same} 个 sector。",
    expect={"permuted": 4, "same": 1, "gathers_correct": True},
    needs=["numba"],
)
def _(ctx):
    x = np.arange(64, dtype=np.float32)
    out, ok = {}, True
    for key, idx in (("permuted", np.random.default_rng(0).permutation(WARP)), ("same", np.full(WARP, 7))):
        idx = idx.astype(np.int32)
        trace, arrays = sim.traced(ctx, gather, 1, WARP, x=x, idx=idx, out=np.zeros(WARP, np.float32))
        ok &= bool(np.array_equal(arrays["out"], x[idx]))
        (out[key],) = trace.sectors("x")
    return {**out, "gathers_correct": ok}


@claim(
    "gmem.access-width",
    question=Q,
    statement="每线程的访问宽度决定一个 request 搬多少：fp16（{=2 字节}）连续读，一个 warp 只要 {fp16.sectors} 个 sector"
              "（{fp16.bytes} 字节）；每线程一个 {=16 字节} 的 float4，一个 request 拿到 {float4.bytes} 字节、"
              "{float4.sectors} 个 sector，利用率 {float4.eff:pct}。同样 4 个连续 float 若拆成 4 次标量读，"
              "是 {scalars.requests} 个 request、每个 {scalars.sectors} 个 sector，每个 request 的利用率只有 {scalars.eff:pct}"
              "（后 3 次靠 L1 命中才不重复从 L2 搬）。",
    expect={"fp16": {"sectors": 2, "bytes": 64}, "float4": {"sectors": 16, "bytes": 512, "eff": 1.0},
            "scalars": {"requests": 4, "sectors": 16, "eff": 0.25}, "copies_correct": True},
    needs=["numba"],
)
def _(ctx):
    trace, ok = _strided(ctx, 1, 0, dtype=np.float16)
    (fp16_sectors,), (fp16_bytes,) = trace.sectors("x"), trace.bytes_requested("x")

    buf = np.arange(4 * WARP, dtype=np.float32)
    trace, arrays = sim.traced(ctx, copy_float4, 1, WARP, x=buf.view(FLOAT4), out=np.zeros_like(buf))
    ok &= bool(np.array_equal(arrays["out"], buf))
    (v_sectors,), (v_bytes,) = trace.sectors("x"), trace.bytes_requested("x")

    trace, arrays = sim.traced(ctx, copy_four_scalars, 1, WARP, x=buf, out=np.zeros_like(buf))
    ok &= bool(np.array_equal(arrays["out"], buf))
    s_sectors, s_bytes = trace.sectors("x"), trace.bytes_requested("x")
    assert len(set(s_sectors)) == 1 and len(set(s_bytes)) == 1
    return {"fp16": {"sectors": fp16_sectors, "bytes": fp16_bytes},
            "float4": {"sectors": v_sectors, "bytes": v_bytes, "eff": v_bytes / (v_sectors * sim.SECTOR)},
            "scalars": {"requests": len(s_sectors), "sectors": s_sectors[0],
                        "eff": s_bytes[0] / (s_sectors[0] * sim.SECTOR)},
            "copies_correct": ok}
