"""Thread numbering, warps and divergence in numba's CUDA simulator (no time: which thread is where, which path it takes)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from snippets._gpu import sim
from verify.claim import claim

Q = "gpu-execution-model"
cuda = sim.cuda()


def where_am_i(out, warp_size):
    x, y, z = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    out[z, y, x] = cuda.laneid
    if x == 0 and y == 0 and z == 0:
        warp_size[0] = cuda.warpsize


@claim(
    "exec.linear-id-and-warp",
    question=Q,
    statement="numba 的模拟器在 {=blockDim=(6,5,3)} 的 block 里给 {threads} 个线程编号：{matches} 个线程的线性编号和 lane 号"
              "与编程指南的规则一致（线性编号 `x + y*Dx + z*Dx*Dy`，lane 是它除以 warp 大小 {warp_size} 的余数；"
              "{all_match:?全部一致|有不一致的线程}）。这个形状能分辨错的规则：换成 y 变化最快，有 {wrong_y_fastest} 个线程的 lane 对不上；"
              "换成每个 z 平面从 lane 0 重新开始，有 {wrong_plane_restart} 个对不上。按模拟器自己给的编号和 lane 分组（编号减 lane 相同的线程"
              "算一个 warp），是 {warps} 个 warp：warp 0 含 z=0 平面的 {warp0_z0} 个线程和 z=1 的 {warp0_z1} 个"
              "（{straddles:?跨了两个 z 平面|只在一个 z 平面里}），最后一个 warp 只有 {last_warp_threads} 个线程。",
    expect={"threads": 90, "matches": 90, "all_match": True, "warp_size": 32, "wrong_y_fastest": {">": 0},
            "wrong_plane_restart": 60, "warps": 3, "warp0_z0": 30, "warp0_z1": 2, "straddles": True, "last_warp_threads": 26},
    needs=["numba"],
)
def _(ctx):
    dx, dy, dz = 6, 5, 3
    out = np.full((dz, dy, dx), -1, np.int32)
    trace, arrays = sim.traced(ctx, where_am_i, 1, (dx, dy, dz), out=out, warp_size=np.zeros(1, np.int32))
    lanes, warp_size = arrays["out"], int(arrays["warp_size"][0])
    matches, wrong_y, wrong_plane = 0, 0, 0
    members = defaultdict(list)
    for acc in (a for req in trace.requests("out") for a in req):
        z, rem = divmod((acc.byte - (acc.byte >> 32 << 32)) // 4, dx * dy)
        y, x = divmod(rem, dx)
        seen = int(lanes[z, y, x])
        guide = x + y * dx + z * dx * dy  # CUDA C++ Programming Guide, Thread Hierarchy: x varies fastest
        matches += acc.thread == guide and seen == guide % 32
        wrong_y += seen != (y + x * dy + z * dx * dy) % 32
        wrong_plane += seen != (x + y * dx) % 32
        members[acc.thread - seen].append(z)  # the simulator's own warps: threads whose lane 0 is the same thread
    return {"threads": sum(map(len, members.values())), "matches": int(matches), "all_match": bool(matches == dx * dy * dz),
            "warp_size": warp_size, "wrong_y_fastest": int(wrong_y), "wrong_plane_restart": int(wrong_plane),
            "warps": len(members), "warp0_z0": members[0].count(0), "warp0_z1": members[0].count(1),
            "straddles": len(set(members[0])) > 1, "last_warp_threads": len(members[max(members)])}


def tile_copy(a, out):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[row, col] = a[row, col]


@claim(
    "exec.warp-spans-two-rows",
    question=Q,
    statement="{=blockDim=(16,16)}、{=grid=(2,2)} 的 block 按 `row = blockIdx.y*blockDim.y + threadIdx.y`、"
              "`col = blockIdx.x*blockDim.x + threadIdx.x` 读一个 {=64} 列的 fp32 矩阵：模拟器记下的地址{address_ok:?每个都|并不都}等于 "
              "`(row*64 + col)*4`；{requests} 次 warp 请求里，每次的 32 个线程落在 {rows_per_warp} 行上，"
              "碰到 {lines_per_request} 条 {=128 字节} 的 cache line、{sectors_per_request} 个 {=32 字节} sector"
              "（{uniform:?每次请求都一样|各次请求不全相同}）；拷贝结果{copy_ok:?正确|有错}。",
    expect={"address_ok": True, "rows_per_warp": 2, "lines_per_request": 2, "sectors_per_request": 4, "uniform": True,
            "requests": 32, "copy_ok": True},
    needs=["numba"],
)
def _(ctx):
    n, b = 64, 16
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    # a quarter of the matrix (2 x 2 blocks, the top-left 32 x 32) keeps the simulator quick: 4 blocks x 8 warps
    trace, arrays = sim.traced(ctx, tile_copy, (2, 2), (b, b), a=a, out=np.zeros_like(a))
    reqs = trace.requests("a")
    address_ok = True
    rows, lines = set(), set()
    for req in reqs:
        bx, by, _ = req[0].block
        rs = set()
        for acc in req:
            ty, tx = divmod(acc.thread, b)
            row, col = by * b + ty, bx * b + tx
            address_ok &= acc.byte - (acc.byte >> 32 << 32) == (row * n + col) * 4
            rs.add(row)
        rows.add(len(rs))
        lines.add(len({(acc.byte >> 7) for acc in req}))
    sectors = set(trace.sectors("a"))
    copy_ok = bool(np.array_equal(arrays["out"][:32, :32], a[:32, :32]))
    return {"address_ok": bool(address_ok), "rows_per_warp": max(rows), "lines_per_request": max(lines),
            "sectors_per_request": max(sectors), "uniform": len(rows) == len(lines) == len(sectors) == 1,
            "requests": len(reqs), "copy_ok": copy_ok}


def branchy(x, odd_out, even_out, uniform):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = cuda.threadIdx.x
    c = (t // 32) % 2 if uniform else t % 2
    if c:
        odd_out[i] = x[i] * 3.0 + 1.0
    else:
        even_out[i] = x[i] * x[i] - 0.25


@claim(
    "exec.divergence-paths-per-warp",
    question=Q,
    statement="同一个 {=128} 线程的 block（{warps} 个 warp），按 `threadIdx.x % 2` 分支时各 warp 的线程分别走 "
              "{divergent_paths} 条路径，每条路径上只有 {divergent_active} 个 lane；按 `(threadIdx.x / 32) % 2` 分支时各 warp 走 "
              "{uniform_paths} 条，路径上 {uniform_active} 个 lane 都在；两种写法的结果{results_ok:?都正确|有错}。",
    expect={"warps": 4, "divergent_paths": [2, 2, 2, 2], "divergent_active": 16, "uniform_paths": [1, 1, 1, 1],
            "uniform_active": 32, "results_ok": True},
    needs=["numba"],
)
def _(ctx):
    n = 128
    x = np.linspace(-1, 1, n, dtype=np.float32)
    out, ok = {}, True
    for name, uniform in (("divergent", 0), ("uniform", 1)):
        trace, arrays = sim.traced(ctx, branchy, 1, n, x=x, odd_out=np.zeros(n, np.float32),
                                   even_out=np.zeros(n, np.float32), uniform=uniform)
        paths, active = defaultdict(set), set()
        for path in ("odd_out", "even_out"):
            for req in trace.requests(path):
                paths[req[0].warp].add(path)
                active.add(len(req))
        out[f"{name}_paths"] = [len(paths[w]) for w in sorted(paths)]
        out["warps"] = len(paths)
        (out[f"{name}_active"],) = active  # every path of every warp: the same number of lanes
        t = np.arange(n)
        c = (t // 32) % 2 if uniform else t % 2
        ok &= bool(np.allclose(arrays["odd_out"][c == 1], x[c == 1] * 3 + 1)
                   and np.allclose(arrays["even_out"][c == 0], x[c == 0] ** 2 - 0.25))
    out["results_ok"] = ok
    return out
