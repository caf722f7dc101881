"""A tiled Triton GEMM (BM x BN tiles, K streamed in BK slices, fp32 accumulator), run in Triton's
interpreter on CPU tensors and compiled for sm_80 and sm_90a: what tl.dot becomes, how shared
memory grows with num_stages, what loads the tiles, and the occupancy that follows.

Nothing here runs on a GPU: the interpreter checks the arithmetic, the compiler shows the code.

The helper compiles without a launch, so it cannot see what Triton's JIT learns from the arguments
at launch time: a pointer 16-byte aligned and an integer divisible by 16 get ``tt.divisibility=16``,
an integer equal to 1 becomes a constant. With ``ALIGNED`` the kernel writes the same facts as hints
(``tl.multiple_of`` on the tile pointers, ``tl.max_constancy`` on the masks); the unit strides are
passed as constants. Without them the compiler must assume the worst (2-byte alignment, masks that
change every element), which is what a launch with ragged sizes such as K=50 gets.
"""

from __future__ import annotations

import re

import torch

from snippets._gpu import compiled, interp, occupancy, specs
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton.language as tl  # noqa: E402  (the pinned Triton is on the path only after activate())

Q = "tiled-gemm"


def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                  ALIGNED: tl.constexpr, PRECISION: tl.constexpr):
    """C[M, N] = A[M, K] @ B[K, N]: one BM x BN tile of C per program, K streamed in BK slices."""
    # Grouped tile order (as in Triton's matmul tutorial): GROUP_M tile rows are walked column by column.
    pid = tl.program_id(0)
    num_pid_m = (M + BM - 1) // BM
    num_pid_n = (N + BN - 1) // BN
    per_group = GROUP_M * num_pid_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows

    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.full((BM, BN), 0.0, tl.float32)  # tl.zeros is a @jit helper the interpreter here cannot call
    for k0 in range(0, K, BK):
        # masks cover the ragged edges: rows past M, columns past N, the last partial K slice
        mask_a = (rm[:, None] < M) & (rk[None, :] < K - k0)
        mask_b = (rk[:, None] < K - k0) & (rn[None, :] < N)
        pa = a_ptrs
        pb = b_ptrs
        if ALIGNED:
            # what tt.divisibility=16 on the pointers, M, N, K and the row strides lets the compiler derive:
            # each tile row starts 16-byte aligned, and a mask is constant over 16 neighbouring columns
            pa = tl.multiple_of(pa, [2, 16])
            pb = tl.multiple_of(pb, [2, 16])
            mask_a = tl.max_constancy(mask_a, [1, 16])
            mask_b = tl.max_constancy(mask_b, [1, 16])
        a = tl.load(pa, mask=mask_a, other=0.0)
        b = tl.load(pb, mask=mask_b, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_desc_kernel(a_desc, b_desc, c_desc, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The same tile loop over host-side tensor descriptors (TMA on Hopper): no pointers, no masks."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.full((BM, BN), 0.0, tl.float32)  # tl.zeros is a @jit helper the interpreter here cannot call
    for k0 in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k0])
        b = b_desc.load([k0, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def tile_order_kernel(out_m, out_n, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """Which C tile program ``pid`` computes, by the same grouped order as matmul_kernel (GROUP_M=1: row-major)."""
    pid = tl.program_id(0)
    num_pid_m = (M + BM - 1) // BM
    num_pid_n = (N + BN - 1) // BN
    per_group = GROUP_M * num_pid_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    tl.store(out_m + pid, first_m + (pid % per_group) % rows)
    tl.store(out_n + pid, (pid % per_group) // rows)


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
TILE = {"BM": 128, "BN": 128, "BK": 64}
STAGES = [1, 2, 3, 4]
# PTX mbarrier instructions (their opcodes hold "::", which Compiled.ptx_count does not parse)
MBARRIER = re.compile(r"^\s*(?:@!?%\w+\s+)?mbarrier\.", re.MULTILINE)


def gemm(ctx, target, num_stages, *, tile=None, num_warps=4, dtype="fp16", aligned=True, precision=None):
    """matmul_kernel compiled for ``target``, unit strides as constants (as the JIT specialises them)."""
    sig = {k: (f"*{dtype}" if v.startswith("*") else v) for k, v in SIG.items()}
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, **(tile or TILE), "GROUP_M": 8,
              "ALIGNED": aligned, "PRECISION": precision}
    return compiled.triton_kernel(ctx, matmul_kernel, sig, consts, target=target, num_warps=num_warps,
                                  num_stages=num_stages)


def stage_bytes(tile, elem=2):
    """Shared memory of one pipeline stage: an A slice BM x BK and a B slice BK x BN."""
    return (tile["BM"] * tile["BK"] + tile["BK"] * tile["BN"]) * elem


# --- the interpreter: the tile loop is right ------------------------------------------------------

@claim(
    "tgemm.interp-matches-torch", kind="measured",
    question=Q,
    statement="Triton 解释器里，这个 BM×BN×BK = {tile} 的 K 循环 kernel 把 {shape_a} @ {shape_b} 的 fp32 矩阵乘算对了："
              "{programs} 个 program（两个维度都不能被 tile 整除，最后一行、一列 tile 和最后一段 K 都靠 mask），"
              "与 `torch.matmul` 的最大绝对误差 {max_err_vs_torch:.1e}，与 float64 参考的最大相对误差 {rel_err_fp64:.1e}；"
              "若先把输入舍入成 TF32（10 位尾数）再乘，这个误差是 {rel_err_tf32:.1e}——解释器的 tl.dot 是精确的 fp32，没有 TF32。",
    expect={"allclose": True, "rel_err_fp64": {"<": 1e-5}, "rel_err_tf32": {">": 1e-4}, "programs": 9},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    M, K, N = 70, 50, 90
    a = torch.randn(M, K, generator=g)
    b = torch.randn(K, N, generator=g)
    c = torch.empty(M, N)
    tile = {"BM": 32, "BN": 32, "BK": 16}
    programs = -(-M // tile["BM"]) * -(-N // tile["BN"])
    k = interp.kernel(ctx, matmul_kernel)
    k[(programs,)](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), **tile, GROUP_M=2,
                   ALIGNED=False, PRECISION=None)
    ref = torch.matmul(a, b)
    ref64 = a.double() @ b.double()

    def tf32(x):  # round to nearest even at 10 mantissa bits, as a TF32 Tensor Core sees its inputs
        bits = x.view(torch.int32)
        bias = ((bits >> 13) & 1) + 0xFFF
        return ((bits + bias) & ~0x1FFF).view(torch.float32)

    scale = ref64.abs().max().item()
    return {
        "tile": f"{tile['BM']}×{tile['BN']}×{tile['BK']}",
        "shape_a": f"{M}×{K}", "shape_b": f"{K}×{N}", "programs": programs,
        "allclose": torch.allclose(c, ref, rtol=1e-5, atol=1e-5),
        "max_err_vs_torch": (c - ref).abs().max().item(),
        "rel_err_fp64": (c.double() - ref64).abs().max().item() / scale,
        "rel_err_tf32": ((tf32(a) @ tf32(b)).double() - ref64).abs().max().item() / scale,
    }


@claim(
    "tgemm.tf32-default-sm80",
    question=Q,
    statement="同一个 kernel 用 fp32 输入编译到 sm_80：默认的 tl.dot 变成 {mma_tf32} 条 `mma.sync.aligned.m16n8k8…tf32`"
              "（SASS 里 {hmma_1688} 条 HMMA.1688.F32.TF32），也就是 TF32 Tensor Core；写 `input_precision=\"ieee\"` 才是"
              "真 fp32：0 条 mma，{ffma_ieee} 条 FFMA；编译到 sm_90a，默认同样走 TF32：{sm90_op}。"
              "所以解释器的精确结果不是 A100/H100 上默认会得到的结果。",
    expect={"mma_tf32": {">": 0}, "hmma_1688": {">": 0}, "mma_ieee": 0, "ffma_ieee": {">": 1000},
            "sm90_tf32": True},
    needs=["triton"],
)
def _(ctx):
    tf = gemm(ctx, "sm_80", 3, dtype="fp32", tile={"BM": 64, "BN": 64, "BK": 32})
    ieee = gemm(ctx, "sm_80", 3, dtype="fp32", tile={"BM": 64, "BN": 64, "BK": 32}, precision="ieee")
    shapes = sorted({line.split()[0] for line in tf.sass_lines("HMMA")})
    h = gemm(ctx, "sm_90a", 3, dtype="fp32", tile={"BM": 64, "BN": 64, "BK": 32})
    sm90 = sorted({line.split()[0] for line in h.sass_lines("HGMMA")})
    return {
        "sm90_op": sm90[0] if len(sm90) == 1 else sm90, "sm90_tf32": bool(sm90) and all("TF32" in op for op in sm90),
        "mma_tf32": sum(1 for line in tf.ptx.splitlines() if "mma.sync.aligned.m16n8k8" in line and ".tf32" in line),
        "hmma_1688": sum(1 for line in tf.sass_lines("HMMA") if line.startswith("HMMA.1688.F32.TF32")),
        "hmma_shapes": shapes,
        "mma_ieee": ieee.ptx_count("mma"), "ffma_ieee": ieee.sass_count("FFMA"),
    }


# --- shared memory and num_stages ---------------------------------------------------------------

@claim(
    "tgemm.smem-stages-sm80",
    question=Q,
    statement="128×128×64 的 fp16 tile、4 个 warp，编译到 sm_80：一个 stage 是 (BM·BK + BK·BN)·2 = {stage_bytes:bytes}；"
              "num_stages = 1、2、3、4 时 Triton 申请的 shared memory 是 {shared} 字节，即 {buffers} 份 stage 缓冲"
              "（num_stages−1，至少 1 份）；每个线程的 cp.async（LDGSTS）指令数是 {ldgsts}，num_stages=1 时没有异步拷贝。",
    expect={"buffers": [1, 1, 2, 3], "ldgsts_first": 0, "async_from_2": True},
    needs=["triton"],
)
def _(ctx):
    out = [gemm(ctx, "sm_80", s) for s in STAGES]
    per = stage_bytes(TILE)
    shared = [c.shared for c in out]
    ldgsts = [c.sass_count("LDGSTS") for c in out]
    return {"stage_bytes": per, "shared": shared, "buffers": [s // per for s in shared], "ldgsts": ldgsts,
            "ldgsts_first": ldgsts[0], "async_from_2": all(n > 0 for n in ldgsts[1:]),
            "exact_multiples": all(s % per == 0 for s in shared)}


@claim(
    "tgemm.smem-stages-sm90a",
    question=Q,
    statement="同一个 kernel 编译到 sm_90a：num_stages = 1、2、3、4 时 shared memory 是 {shared} 字节，即 {buffers} 份 stage——"
              "比 sm_80 每档多一份：wgmma 直接从 shared memory 读操作数，并且是异步的，上一次 wgmma 还在读的那份缓冲"
              "不能被下一份 cp.async 覆盖。",
    expect={"buffers": [1, 2, 3, 4]},
    needs=["triton"],
)
def _(ctx):
    per = stage_bytes(TILE)
    shared = [gemm(ctx, "sm_90a", s).shared for s in STAGES]
    return {"stage_bytes": per, "shared": shared, "buffers": [s // per for s in shared]}


@claim(
    "tgemm.no-hints-no-pipeline",
    question=Q,
    statement="去掉对齐/整除 hint（编译器只能假设指针按元素对齐、mask 每个元素都不同，相当于 M、N、K 都不能被 16 整除时的 launch）："
              "sm_90a 上 num_stages = 1…4 的 shared memory 都是 {shared:bytes}，每线程 {ldg} 条标量 LDG、"
              "{ldgsts} 条 cp.async——cp.async 最小的一次拷贝是 32 位，单个 fp16 的 load 用不上它，流水线没有建起来。",
    expect={"ldgsts": 0, "flat": True, "scalar_loads": True},
    needs=["triton"],
)
def _(ctx):
    out = [gemm(ctx, "sm_90a", s, aligned=False) for s in STAGES]
    widths = sorted({line.split()[0] for c in out for line in c.sass_lines("LDG")})
    return {"shared": out[0].shared, "flat": len({c.shared for c in out}) == 1,
            "ldg": out[-1].sass_count("LDG"), "ldgsts": sum(c.sass_count("LDGSTS") for c in out),
            "ldg_forms": widths, "scalar_loads": all(".U16" in w for w in widths)}


# --- what tl.dot becomes ------------------------------------------------------------------------

@claim(
    "tgemm.mma-sm80",
    question=Q,
    statement="sm_80、128×128×64、4 个 warp（2×2 排布，每个 warp 算 64×64）：K 循环体里 tl.dot 是 {ptx_mma} 条 "
              "`mma.sync.aligned.m16n8k16`（SASS：{hmma} 条 {hmma_op}），正好是 (64/16)·(64/8)·(64/16) = {expected} 条；"
              "操作数由 ldmatrix {ldsm_forms} 从 shared memory 取进寄存器：不流水时 {ldsm_plain} 条，"
              "即 A 的 (64/16)·(64/16) 加 B 的 (64/16)·(64/16)；num_stages=3 时 {ldsm_total} 条，多出的是提前取下一段的第一个 k16 切片。"
              "tile 由 LDGSTS（cp.async）搬进 shared memory。",
    expect={"ptx_mma": 128, "hmma": 128, "expected": 128, "ldsm_plain_matches": True, "ldgsts_present": True},
    needs=["triton"],
)
def _(ctx):
    c = gemm(ctx, "sm_80", 3)
    plain = gemm(ctx, "sm_80", 1)
    warp_m, warp_n, bk = TILE["BM"] // 2, TILE["BN"] // 2, TILE["BK"]  # warpsPerCTA [2, 2] for 4 warps
    expected = (warp_m // 16) * (warp_n // 8) * (bk // 16)
    ldsm_formula = (warp_m // 16) * (bk // 16) + (bk // 16) * (warp_n // 16)  # one x4 ldmatrix per 16x16 piece
    ops = sorted({line.split()[0] for line in c.sass_lines("HMMA")})
    return {"ptx_mma": c.ptx_count("mma.sync.aligned.m16n8k16"), "hmma": c.sass_count("HMMA"),
            "hmma_op": ops[0] if len(ops) == 1 else ops, "expected": expected,
            "ldsm_total": c.sass_count("LDSM"), "ldsm_plain": plain.sass_count("LDSM"),
            "ldsm_forms": sorted({line.split()[0] for line in c.sass_lines("LDSM")}),
            "ldsm_plain_matches": plain.sass_count("LDSM") == ldsm_formula,
            "ldsm_extra": c.sass_count("LDSM") - plain.sass_count("LDSM"),
            "ldgsts_present": c.sass_count("LDGSTS") > 0}


@claim(
    "tgemm.wgmma-sm90a",
    question=Q,
    statement="同一个 kernel 编译到 sm_90a：tl.dot 是 {ptx_wgmma} 条 `wgmma.mma_async`（SASS：{hgmma} 条 {hgmma_op}），"
              "0 条 mma.sync；4 个 warp 组成一个 warpgroup，128×128×64 的 tile 恰好 (128/64)·(64/16) = {expected} 条 "
              "m64n128k16。tile 仍由 cp.async 搬运（{ldgsts} 条 LDGSTS），PTX 里 `cp.async.bulk.tensor`（TMA）是 {tma} 条。",
    expect={"ptx_wgmma": 8, "hgmma": 8, "expected": 8, "mma_sync": 0, "tma": 0, "ldgsts": {">": 0}},
    needs=["triton"],
)
def _(ctx):
    c = gemm(ctx, "sm_90a", 3)
    expected = (TILE["BM"] // 64) * (TILE["BN"] // 128) * (TILE["BK"] // 16)
    ops = sorted({line.split()[0] for line in c.sass_lines("HGMMA")})
    return {"ptx_wgmma": c.ptx_count("wgmma.mma_async"), "hgmma": c.sass_count("HGMMA"),
            "hgmma_op": ops[0] if len(ops) == 1 else ops, "expected": expected,
            "mma_sync": c.ptx_count("mma.sync"), "tma": c.ptx.count("cp.async.bulk.tensor"),
            "ldgsts": c.sass_count("LDGSTS"), "ptx_target": c.ptx_target}


@claim(
    "tgemm.wgmma-conditions-sm90a",
    question=Q,
    statement="但 sm_90a 上 tl.dot 不总是 wgmma：wgmma 以一个 warpgroup（4 个 warp）算 64 行为单位。同样 num_stages=3 编译，"
              "BM=16、32（4 个 warp）和 BM=64 但只有 2 个 warp 时，得到的是 {fallback_ops}（mma.sync）；"
              "BM=64、4 个 warp 的 bf16 是 {bf16_op}，128×128×64、8 个 warp（两个 warpgroup，各算 64 行）是 {w8_op}。",
    expect={"fallback_is_mma_sync": True, "wgmma_cases": True},
    needs=["triton"],
)
def _(ctx):
    def ops(c):
        return sorted({line.split()[0] for line in c.sass_lines("HGMMA") + c.sass_lines("HMMA")})

    fallback = [gemm(ctx, "sm_90a", 3, tile={"BM": bm, "BN": 64, "BK": 32}, num_warps=w) for bm, w in ((16, 4), (32, 4), (64, 2))]
    bf16 = gemm(ctx, "sm_90a", 3, tile={"BM": 64, "BN": 64, "BK": 64}, dtype="bf16")
    w8 = gemm(ctx, "sm_90a", 3, num_warps=8)
    fb_ops = sorted({op for c in fallback for op in ops(c)})
    return {"fallback_ops": fb_ops[0] if len(fb_ops) == 1 else fb_ops,
            "fallback_wgmma": [c.ptx_count("wgmma.mma_async") for c in fallback],
            "fallback_is_mma_sync": all(c.ptx_count("wgmma.mma_async") == 0 and c.ptx_count("mma.sync") > 0 for c in fallback),
            "bf16_op": ops(bf16)[0], "w8_op": ops(w8)[0], "w8_hgmma": w8.sass_count("HGMMA"),
            "wgmma_cases": bf16.ptx_count("wgmma.mma_async") > 0 and w8.ptx_count("wgmma.mma_async") > 0}


@claim(
    "tgemm.tma-descriptor-sm90a",
    question=Q,
    statement="把 A、B、C 换成 host 端的 tensor descriptor（`TensorDescriptor`，kernel 里 `desc.load([m, k])`），"
              "sm_90a 上 tile 改由 TMA 搬运：PTX 里 {bulk_tensor} 条 `cp.async.bulk.tensor`（SASS：{utmaldg} 条 UTMALDG、"
              "{utmastg} 条 UTMASTG），0 条 LDGSTS，用 {mbarrier} 条 mbarrier 指令等数据到齐；寄存器从 {regs_cp_async} 降到 {regs_tma}"
              "（地址和 mask 不再由每个线程算）；num_stages=3 的 shared memory 是 {shared} 字节（3 份 stage，加上每份 {barrier_each} 字节的 mbarrier）。",
    expect={"ldgsts": 0, "bulk_tensor": {">": 0}, "utmaldg": {">": 0}, "fewer_registers": True,
            "barrier_bytes": 24},
    needs=["triton"],
)
def _(ctx):
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 128]>",
           "c_desc": "tensordesc<fp16[128, 128]>", "K": "i32"}
    c = compiled.triton_kernel(ctx, matmul_desc_kernel, sig, TILE, target="sm_90a", num_warps=4, num_stages=3)
    plain = gemm(ctx, "sm_90a", 3)
    return {"bulk_tensor": c.ptx.count("cp.async.bulk.tensor"), "utmaldg": c.sass_count("UTMALDG"),
            "utmastg": c.sass_count("UTMASTG"), "ldgsts": c.sass_count("LDGSTS"),
            "mbarrier": len(MBARRIER.findall(c.ptx)),
            "hgmma": c.sass_count("HGMMA"),
            "regs_tma": c.registers, "regs_cp_async": plain.registers,
            "fewer_registers": c.registers < plain.registers, "shared": c.shared,
            "barrier_bytes": c.shared - 3 * stage_bytes(TILE), "barrier_each": (c.shared - 3 * stage_bytes(TILE)) // 3}


# --- occupancy: stages cost shared memory -------------------------------------------------------

def _occupancy_rows(ctx, target, capability, tile, stages):
    rows = []
    for n in stages:
        c = gemm(ctx, target, n, tile=tile)
        occ = occupancy.blocks_per_sm(ctx, capability, 4 * 32, c.registers, c.shared)
        rows.append({"registers": c.registers, "shared": c.shared, "spills": c.sass_count("STL"),
                     "blocks": occ["blocks"], "limiter": occ["limiter"], "occupancy": round(occ["occupancy"], 4),
                     "limits": occ["limits"]})
    return {key: [r[key] for r in rows] for key in rows[0]}


@claim(
    "tgemm.occupancy-sm90a",
    question=Q,
    statement="128×128×64、4 个 warp 编译到 sm_90a，代入计算能力 9.0（H100/H200）的每 SM 上限：num_stages = 1…4 时"
              "每线程寄存器 {registers}（fp32 累加器 BM·BN/128 = {acc_regs} 个就占了一半以上），每 SM 驻留 block {blocks}，"
              "限制因素 {limiter}，occupancy {occupancy}。",
    expect={"limiter_last": "shared", "blocks_last": 1, "limiter_first": "registers", "no_spills": True},
    needs=["triton"],
)
def _(ctx):
    rows = _occupancy_rows(ctx, "sm_90a", "9.0", TILE, STAGES)
    return {**rows, "acc_regs": TILE["BM"] * TILE["BN"] // 128,
            "limiter_first": rows["limiter"][0], "limiter_last": rows["limiter"][-1],
            "blocks_last": rows["blocks"][-1], "no_spills": not any(rows["spills"])}


SMALL = {"BM": 64, "BN": 64, "BK": 64}
SMALL_STAGES = [1, 2, 3, 4, 5, 6]


@claim(
    "tgemm.occupancy-small-tile-sm80",
    question=Q,
    statement="换成 64×64×64 的小 tile（4 个 warp）编译到 sm_80、代入计算能力 8.0（A100）：寄存器降到 {registers_first}，"
              "num_stages = 1…6 时 shared memory 是 {shared} 字节，每 SM 驻留 block {blocks}，限制因素 {limiter}——"
              "前几档受寄存器限制，之后 shared memory 成为限制，occupancy 随级数下降（{occupancy}）。",
    expect={"limiter_first": "registers", "limiter_last": "shared", "drops": True, "no_spills": True},
    needs=["triton"],
)
def _(ctx):
    rows = _occupancy_rows(ctx, "sm_80", "8.0", SMALL, SMALL_STAGES)
    return {**rows, "registers_first": rows["registers"][0],
            "limiter_first": rows["limiter"][0], "limiter_last": rows["limiter"][-1],
            "drops": rows["blocks"][-1] < rows["blocks"][0], "no_spills": not any(rows["spills"])}


# --- tile order and L2 --------------------------------------------------------------------------

@claim(
    "tgemm.grouped-order-l2",
    question=Q,
    statement="{size}³ 的 fp16 GEMM、128×128 tile（{tiles} 个），在解释器里跑 kernel 的 tile 编号→(pid_m, pid_n) 映射，"
              "按编号顺序发给 H100 SXM 的 {sms} 个 SM，看同时运行的第一波（假设每 SM 只驻留一个 tile，如下文 num_stages=4 的配置）：行优先顺序下这一波碰到 {rowmajor.a_panels} 个 A 行条和 "
              "{rowmajor.b_panels} 个 B 列条（每条 {panel:bytes}），GROUP_M=8 的分组顺序只碰到 {grouped.a_panels} 个和 "
              "{grouped.b_panels} 个。一波里每个 tile 都要读一条 A 和一条 B；若同一条只从 HBM 读一次、其余命中 L2，"
              "行优先每条被 {rowmajor.reuse:.1f} 个 tile 共用，分组顺序 {grouped.reuse:.1f} 个；乘上单个 tile 的 "
              "{tile_intensity:.0f} FLOP/字节，对 HBM 的有效算术强度分别是 {rowmajor.intensity:.0f} 和 {grouped.intensity:.0f} FLOP/字节。",
    expect={"rowmajor_below_ridge": True, "grouped_above_ridge": True, "grouped_more_reuse": True},
    needs=["triton"],
)
def _(ctx):
    size, bm = 8192, 128
    sms = int(specs.get(ctx, "H100 SXM", "sms"))
    ridge = specs.get(ctx, "H100 SXM", "bf16_dense_flops") / specs.get(ctx, "H100 SXM", "hbm_bytes_per_s")
    panel = size * bm * 2  # one BM-row strip of A (or BN-column strip of B) over all of K, fp16
    tile_intensity = 2 * bm * bm / ((bm + bm) * 2)  # FLOP per byte one tile loads: BM*BN/(BM+BN) for 2-byte inputs
    k = interp.kernel(ctx, tile_order_kernel)
    out = {}
    for name, group in (("rowmajor", 1), ("grouped", 8)):
        pm = torch.empty(sms, dtype=torch.int32)
        pn = torch.empty(sms, dtype=torch.int32)
        k[(sms,)](pm, pn, size, size, BM=bm, BN=bm, GROUP_M=group)  # the first wave: programs 0 .. sms-1
        a_panels, b_panels = len(set(pm.tolist())), len(set(pn.tolist()))
        reuse = 2 * sms / (a_panels + b_panels)
        out[name] = {"a_panels": a_panels, "b_panels": b_panels, "unique_bytes": (a_panels + b_panels) * panel,
                     "reuse": reuse, "intensity": tile_intensity * reuse}
    return {"size": size, "tiles": (size // bm) ** 2, "sms": sms, "panel": panel, "ridge": ridge,
            "tile_intensity": tile_intensity, "wave_bytes": 2 * sms * panel, **out,
            "rowmajor_below_ridge": out["rowmajor"]["intensity"] < ridge,
            "grouped_above_ridge": out["grouped"]["intensity"] > ridge,
            "grouped_more_reuse": out["grouped"]["reuse"] > out["rowmajor"]["reuse"]}
