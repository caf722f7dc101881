"""Load width and loads in flight, read from what the compilers make of a copy kernel for sm_90a.

Triton 3.9: a launch marks a pointer whose address is a multiple of 16 bytes, and an integer divisible
by 16, with ``tt.divisibility=16`` (its launcher's specialisation, here called on CPU tensors with the
CUDA backend, the same function a GPU launch calls); the copy is then compiled for sm_90a with exactly
those marks. nvcc 13.0: a grid-stride copy loop, with and without ``__restrict__``. The SASS says how
wide each load is and how many loads a thread issues before it must wait for the first one; nothing
here runs on a GPU, so nothing here is a time.
"""

from __future__ import annotations

import torch

from snippets._gpu import compiled, occupancy, specs
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton.language as tl  # noqa: E402

Q = "bandwidth-diagnosis"
SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
ALL = ("x_ptr", "y_ptr", "n")  # every argument marked divisible by 16, as a launch on aligned, round tensors marks them
N = 1 << 20
LATENCY_S = 600e-9  # the assumed DRAM latency of the page's spec claims


def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def gather_even(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + 2 * offs, mask=mask), mask=mask)  # every other float: stride 2


def _launch_marks(*args):
    """The arguments Triton 3.9's launcher would mark divisible by 16 for a CUDA launch of ``copy``."""
    from triton.backends.nvidia.compiler import CUDABackend  # noqa: PLC0415
    from triton.runtime.jit import native_specialize_impl  # noqa: PLC0415

    return tuple(name for name, arg in zip(SIG, args) if native_specialize_impl(CUDABackend, arg, False, True, True)[1] == "D")


def _loads(c):
    """Per thread: LDG opcodes, how many, and the most issued back to back before a store must wait for one."""
    ops = [op for op in (m.group(1) for m in map(compiled._SASS_LINE.search, c.sass.splitlines()) if m)
           if op.startswith(("LDG", "STG"))]
    run = best = 0
    for op in ops:
        run = run + 1 if op.startswith("LDG") else 0
        best = max(best, run)
    return {"ldg": " ".join(sorted({op for op in ops if op.startswith("LDG")})),
            "n_ldg": sum(op.startswith("LDG") for op in ops), "before_store": best}


def _compile(ctx, fn, marks, block=1024):
    """``fn`` compiled for sm_90a with ``marks`` as the launch's divisibility: its loads, stores and resources."""
    c = compiled.triton_kernel(ctx, fn, SIG, {"BLOCK": block}, num_warps=4, divisible=marks)
    return {**_loads(c), "stg": " ".join(sorted({op for op in c.sass_ops if op.startswith("STG")})),
            "registers": c.registers, "shared": c.shared}


def _flat(key, row):
    return {f"{key}_{k}": v for k, v in row.items()}


@claim(
    "bw.triton-launch-marks",
    question=Q,
    statement="Triton 3.9 的 launch 对三组 fp32 参数做特化，再照它标的记号为 sm_90a 编译同一个 copy（BLOCK={=1024}，"
              "num_warps={=4}）：整块张量、长度 {aligned_n} 时标了 {aligned_marks}，load 是 {aligned_n_ldg} 条 {aligned_ldg}；"
              "源换成 `x[1:]`（起点晚 {offset_shift} 字节）时只标 {offset_marks}，load 变成 {offset_n_ldg} 条 {offset_ldg}；"
              "指针都对齐、长度 {tail_n} 不能被 16 整除时标 {tail_marks}，也是 {tail_n_ldg} 条 {tail_ldg}。",
    expect={"aligned_marks": "x_ptr, y_ptr, n", "aligned_ldg": "LDG.E.128", "aligned_n_ldg": 2,
            "offset_marks": "y_ptr, n", "offset_ldg": "LDG.E", "offset_n_ldg": 8, "offset_shift": 4,
            "tail_marks": "x_ptr, y_ptr", "tail_ldg": "LDG.E", "tail_n_ldg": 8},
    needs=["triton"],
)
def _(ctx):
    """Triton's launch specialisation on real tensors, then the compile it leads to.

    范围：Triton 3.9 的 launch 特化，sm_90a 编译
    """
    x, y = torch.empty(N + 1), torch.empty(N + 1)
    out = {}
    for key, args in (("aligned", (x, y, N)), ("offset", (x[1:], y, N)), ("tail", (x, y, N - 1))):
        marks = _launch_marks(*args)
        out |= _flat(key, {"marks": ", ".join(marks), "n": args[2], "shift": args[0].data_ptr() - x.data_ptr(),
                           **_compile(ctx, copy, marks)})
    return out


@claim(
    "bw.triton-stride2",
    question=Q,
    statement="对齐和整除的记号都给齐，读偶数位 float（`x_ptr + 2 * offs`，步长 2）的同一个 kernel 为 sm_90a 编译出来仍是 "
              "{gather_n_ldg} 条 {gather_ldg}，而连续读是 {copy_n_ldg} 条 {copy_ldg}；写出那一侧是连续的，照样是 {gather_stg}："
              "地址不连续，对齐也换不来宽 load。",
    expect={"gather_ldg": "LDG.E", "gather_n_ldg": 8, "gather_stg": "STG.E.128", "copy_ldg": "LDG.E.128", "copy_n_ldg": 2},
    needs=["triton"],
)
def _(ctx):
    """A strided load is not vectorised even when every argument is marked divisible by 16.

    范围：Triton 3.9，sm_90a
    """
    return {**_flat("copy", _compile(ctx, copy, ALL)), **_flat("gather", _compile(ctx, gather_even, ALL))}


@claim(
    "bw.triton-copy-in-flight",
    question=Q,
    statement="Triton 的 copy 为 sm_90a 编译：每个线程先把自己的 load 全部发出去再 store，在途字节是 BLOCK × {=4 字节} ÷ 线程数。"
              "BLOCK={=1024}、num_warps={=4} 时，窄 load 版发 {narrow_before_store} 条 {narrow_ldg}、宽 load 版发 "
              "{wide_before_store} 条 {wide_ldg}，每线程在途都是 {wide_per_thread} 字节；按寄存器 {wide_registers} 个算，"
              "compute capability 9.0 上每 SM 驻留 {wide_warps} 个 warp，grid 够大、每个 SM 都住满时在途 {wide_per_sm:bytes}，是 H100 SXM 在假设的 "
              "{=600 ns} 延迟下所需的 {wide_times_need:.1f} 倍。BLOCK={=4096} 时每线程 {big_per_thread} 字节、寄存器 "
              "{big_registers} 个、{big_warps} 个 warp，在途 {big_per_sm:bytes}。",
    expect={"narrow_ldg": "LDG.E", "narrow_before_store": 8, "narrow_per_thread": 32,
            "wide_ldg": "LDG.E.128", "wide_before_store": 2, "wide_per_thread": 32, "wide_warps": 64,
            "wide_times_need": {">": 1}, "big_ldg": "LDG.E.128", "big_per_thread": 128, "big_times_need": {">": 1},
            "same_bytes_in_flight": True},
    needs=["triton"],
)
def _(ctx):
    """Bytes in flight per SM of a compiled Triton copy: loads before the first store, times resident threads.

    范围：Triton 3.9，sm_90a；H100 SXM，假设的延迟
    """
    need = specs.get(ctx, "H100 SXM", "hbm_bytes_per_s") * LATENCY_S / specs.get(ctx, "H100 SXM", "sms")
    out = {}
    for key, block, marks in (("narrow", 1024, ()), ("wide", 1024, ALL), ("big", 4096, ALL)):
        row = _compile(ctx, copy, marks, block)
        per_thread = row["before_store"] * (16 if row["ldg"] == "LDG.E.128" else 4)
        occ = occupancy.blocks_per_sm(ctx, "9.0", 4 * 32, row["registers"], row["shared"])
        per_sm = occ["warps"] * 32 * per_thread
        out |= _flat(key, {**row, "per_thread": per_thread, "warps": occ["warps"], "per_sm": per_sm,
                           "times_need": per_sm / need})
    out["same_bytes_in_flight"] = out["narrow_per_thread"] == out["wide_per_thread"]
    return out


CUDA_COPY = r"""
#ifdef RESTRICT
#define R __restrict__
#else
#define R
#endif
extern "C" __global__ void copy(const float* R x, float* R y, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i];
}
"""


def _segments(c):
    """LDGs in each straight-line stretch of the SASS (split at branches and exits), in program order, empty ones left out."""
    counts, run = [], 0
    for m in map(compiled._SASS_LINE.search, c.sass.splitlines()):
        if not m:
            continue
        op = m.group(1)
        run += op.startswith("LDG")
        if op.startswith(("BRA", "EXIT")):
            counts.append(run)
            run = 0
    return [k for k in [*counts, run] if k]


@claim(
    "bw.nvcc-restrict-ilp",
    question=Q,
    statement="同一个 grid-stride 的 copy 循环，nvcc 13.0 为 sm_90a 编译：`x`、`y` 是普通指针时，循环体展开成每轮 {plain_unrolled} 条 "
              "load 后仍是一条 load 一条 store 交替（store 之前最多 {plain_before_store} 条 load），因为 `y[i]` 可能写到下一次要读的 "
              "`x`，load 不能提到 store 前面；加上 `__restrict__` 后展开的循环体连发 {restrict_before_store} 条 {restrict_ldg} 再 "
              "store。两版都先走一个每轮 {restrict_remainder_ldg} 条 load 的余数循环，再进展开的循环体：每个线程至少走 {=4} 轮"
              "（线程总数不超过 n 的四分之一）时，在途的 load 是原来的 {gain} 倍；grid 大到每个线程只分到 {=1} 个元素时只走余数循环，"
              "仍是一条。",
    expect={"plain_before_store": 1, "plain_ldg": "LDG.E", "plain_unrolled": 4, "plain_segments": [1, 4],
            "restrict_before_store": 4, "restrict_ldg": "LDG.E.CONSTANT", "restrict_segments": [1, 4],
            "restrict_remainder_ldg": 1, "gain": 4},
    needs=["nvcc"],
)
def _(ctx):
    """Loads a thread issues before its first dependent store, with and without ``__restrict__``.

    范围：nvcc 13.0，sm_90a，-O3
    """
    out = {}
    for key, flags in (("plain", ()), ("restrict", ("-DRESTRICT",))):
        c = compiled.cuda_source(ctx, CUDA_COPY, name=f"copy_{key}", flags=flags)
        seg = _segments(c)
        out |= _flat(key, {**_loads(c), "registers": c.registers, "segments": seg, "unrolled": max(seg),
                           "remainder_ldg": seg[0]})
    out["gain"] = out["restrict_before_store"] // out["plain_before_store"]
    return out
