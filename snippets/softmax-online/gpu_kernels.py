"""The shape of a GPU softmax kernel: one warp per row, one block per row, or a loop when the row does not fit.

Kernels in Triton's language, checked in Triton's interpreter (CPU tensors, fp32) and compiled by the pinned
Triton for sm_90a to count what the compiler made of them (SASS opcodes, shared memory, loops). Nothing here
runs on a GPU: no time. The compile has no launch, so loads are not vectorised (see the page
"手写 CUDA/Triton 算子", which compiles the same one-row softmax and its three-sweep form).
"""

from __future__ import annotations

import re

import torch

from snippets._gpu import compiled, interp
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton.language as tl  # noqa: E402

Q = "softmax-online"
F32 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
NEG_INF = float("-inf")


def softmax_row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)                       # one program per row, the whole row in registers
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))            # reduction 1: the row max
    tl.store(y_ptr + row * n + offs, e / tl.sum(e, axis=0), mask=mask)  # reduction 2: the sum


def softmax_online(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)                       # rows longer than BLOCK: loop over the row in chunks
    base = x_ptr + row * n
    m = tl.full([BLOCK], -float("inf"), tl.float32)  # every lane keeps its own (m, l)
    l = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):             # sweep 1: (m, l) online
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < n, other=-float("inf"))
        m_new = tl.maximum(m, x)
        ref = tl.where(m_new == -float("inf"), 0.0, m_new)  # a lane past the end has seen only -inf
        l = l * tl.exp(m - ref) + tl.exp(x - ref)
        m = m_new
    m_row = tl.max(m, axis=0)                    # merge the lanes' states: max, then rescale and add
    l_row = tl.sum(l * tl.exp(m - m_row), axis=0)
    for start in range(0, n, BLOCK):             # sweep 2: write the normalised row
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < n, other=-float("inf"))
        tl.store(y_ptr + row * n + offs, tl.exp(x - m_row) / l_row, mask=offs < n)


_BRA = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?BRA\S*\s+(?:`\()?(?:\.L_x_\d+\)?)?\s*(0x[0-9a-f]+)")


def back_edges(c: compiled.Compiled) -> int:
    """Branches to an earlier address (loops); the ``BRA`` to itself that ends every kernel is not one."""
    return sum(int(target, 16) < int(here, 16) for here, target in _BRA.findall(c.sass))


@claim(
    "softmax.gpu-warp-vs-block",
    question=Q,
    statement="一行一个 program、BLOCK={=1024} 盖住整行的 softmax 编译到 sm_90a（两次归约：最大值和求和）："
              "num_warps={=1}，也就是一个 warp 一行时，SASS 里 {w1_shfl} 条 SHFL、{w1_bar} 个 barrier、shared memory {w1_shared} 字节，"
              "每个线程在寄存器里放 {w1_per_thread} 个元素；num_warps={=8}，一个 block（{w8_threads} 个线程）一行时，"
              "SHFL 变成 {w8_shfl} 条，多出 {w8_bar} 个 `BAR.SYNC` 和 {w8_shared} 字节 shared memory：每个 warp 先用 shuffle 归约出"
              "自己的部分结果，跨 warp 必须经 shared memory 交换、用 barrier 等齐。",
    expect={"w1_shfl": 10, "w1_bar": 0, "w1_shared": 0, "w8_shfl": {">": 10}, "w8_bar": {">=": 2}, "w8_shared": {">": 0}},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for w in (1, 8):
        c = compiled.triton_kernel(ctx, softmax_row, F32, {"BLOCK": 1024}, num_warps=w)
        out |= {f"w{w}_shfl": c.sass_count("SHFL"), f"w{w}_bar": c.sass_count("BAR"), f"w{w}_shared": c.shared,
                f"w{w}_threads": 32 * w, f"w{w}_per_thread": 1024 // (32 * w), f"w{w}_registers": c.registers,
                f"w{w}_sts": c.sass_count("STS"), f"w{w}_lds": c.sass_count("LDS")}
    return out


@claim(
    "online-softmax.triton-interp", kind="measured",
    question=Q,
    statement="行长过 BLOCK 时改成循环：`softmax_online` 按 BLOCK={=1024} 一段扫两遍，第一遍每个 lane 在线维护自己的 `(m, l)`，"
              "扫完按合并公式归成整行的一对，第二遍写出概率。在 Triton 解释器里对 {shape} 的 fp32（其中一行的值都在 {big_row_min:.0f} 以上）"
              "与 `torch.softmax` 最多差 {max_err:.1e}，{any_nan:?出现了|没有} NaN；行尾不满一段的 lane 只见过 `-inf`，"
              "靠与“整行都被 mask”一节同样的设防（减数取 0）才不出 NaN。",
    expect={"max_err": {"<": 1e-6}, "any_nan": False, "big_row_min": {">": 1000}},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 5000, generator=g) * 3
    x[1] = x[1] * 100 + 5000.0                  # exp(5000) is inf in fp32: only a max-relative sum survives
    y = torch.empty_like(x)
    interp.kernel(ctx, softmax_online)[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return {"shape": list(x.shape), "big_row_min": x[1].min().item(),
            "max_err": (y - torch.softmax(x, -1)).abs().max().item(), "any_nan": bool(y.isnan().any())}


@claim(
    "online-softmax.triton-two-sweeps",
    question=Q,
    statement="同一个 `softmax_online` 编译到 sm_90a（num_warps={=4}）：带 LDG 的代码分在 {loops} 个循环里，也就是对显存扫两遍；"
              "“手写 CUDA/Triton 算子”一题里同样分段的三遍版是三个循环。寄存器 {registers} 个、{stl} 条 STL，"
              "不随行长增长：行再长也只是循环多转几圈。",
    expect={"loops": 2, "stl": 0},
    needs=["triton"],
)
def _(ctx):
    c = compiled.triton_kernel(ctx, softmax_online, F32, {"BLOCK": 1024}, num_warps=4)
    return {"loops": back_edges(c), "registers": c.registers, "stl": c.sass_count("STL"),
            "ldg": c.sass_count("LDG"), "stg": c.sass_count("STG"), "shared": c.shared}
