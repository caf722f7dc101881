"""Hand-written Triton kernels: row sum, softmax, LayerNorm/RMSNorm, transpose, cumsum.

Each kernel is a plain function in Triton's language. It is checked against torch in Triton's
interpreter (CPU tensors, small sizes, fp32) and compiled for sm_90a to read what the compiler
made of it (SASS opcodes, shared memory). Nothing here runs on a GPU: no time, no race.

The compile goes through ``triton.compile`` with no launch: it does not get the specialisation a
launch adds (16-byte-aligned pointers, integers divisible by 16), so loads are 4-byte ``LDG.E``
unless the kernel states alignment itself (``kernels.triton-vector-hint``). Counts below that
depend on this are compared with each other, not read as what a launch would emit.
"""

from __future__ import annotations

import re

import torch

from snippets._gpu import compiled, interp
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton.language as tl  # noqa: E402

Q = "cuda-kernels-by-hand"
F32 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}
NORM_SIG = {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "eps": "fp32"}
RMS_SIG = {"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "eps": "fp32"}
T_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32"}


# --- the kernels -----------------------------------------------------------------------------------

def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)                       # one program per row
    offs = tl.arange(0, BLOCK)                   # BLOCK >= n: the whole row in one tile
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


def row_sum_aligned(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)                       # n == BLOCK, rows 16-byte aligned: said to the compiler
    ptrs = x_ptr + tl.multiple_of(row * n, 16) + tl.arange(0, BLOCK)
    ptrs = tl.max_contiguous(tl.multiple_of(ptrs, [16]), [BLOCK])
    tl.store(y_ptr + row, tl.sum(tl.load(ptrs), axis=0))


def softmax_fused(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=-float("inf"))  # the row is read once
    z = x - tl.max(x, axis=0)                    # max-subtract: exp never overflows
    e = tl.exp(z)
    tl.store(y_ptr + row * n + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax_3pass(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)                       # rows longer than BLOCK: three sweeps over global memory
    base = x_ptr + row * n
    m = -float("inf")
    for start in range(0, n, BLOCK):             # pass 1: max
        offs = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.max(tl.load(base + offs, mask=offs < n, other=-float("inf")), axis=0))
    s = 0.0
    for start in range(0, n, BLOCK):             # pass 2: sum of exp
        offs = start + tl.arange(0, BLOCK)
        s += tl.sum(tl.exp(tl.load(base + offs, mask=offs < n, other=-float("inf")) - m), axis=0)
    for start in range(0, n, BLOCK):             # pass 3: normalise
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < n, other=-float("inf"))
        tl.store(y_ptr + row * n + offs, tl.exp(x - m) / s, mask=offs < n)


def layer_norm(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n                 # reduction 1
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n              # reduction 2, on centred values (two-pass, in registers)
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + offs, d * rstd * w + b, mask=mask)


def layer_norm_1pass(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    var = tl.sum(x * x, axis=0) / n - mean * mean  # E[x^2] - E[x]^2: one sweep, cancels in fp32
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + offs, (x - mean) * rstd * w + b, mask=mask)


def rms_norm(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)  # one reduction, no mean
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + offs, x * rstd * w, mask=mask)


def transpose(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)       # rows of x: contiguous
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=tl.trans(mask))  # rows of y


def cumsum_row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + offs, tl.cumsum(x, axis=0), mask=mask)


# --- helpers ---------------------------------------------------------------------------------------

def close(y: torch.Tensor, ref: torch.Tensor) -> tuple[float, bool]:
    """Max abs error and torch.testing's fp32 tolerances (rtol 1.3e-6, atol 1e-5)."""
    return (y - ref).abs().max().item(), bool(torch.allclose(y, ref, rtol=1.3e-6, atol=1e-5))


_BRA = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?BRA\S*\s+(?:`\()?(?:\.L_x_\d+\)?)?\s*(0x[0-9a-f]+)")


def back_edges(c: compiled.Compiled) -> int:
    """Branches to an earlier address (loops); the ``BRA`` to itself that ends every kernel is not one."""
    return sum(int(target, 16) < int(here, 16) for here, target in _BRA.findall(c.sass))


def flat(prefix: str, values: dict) -> dict:
    """``{"shfl": 5}`` as ``{"w1_shfl": 5}``: expectations name top-level keys."""
    return {f"{prefix}_{k}": v for k, v in values.items()}


# --- row reduction ---------------------------------------------------------------------------------

@claim(
    "kernels.rowsum-interp", kind="measured",
    question=Q,
    statement="一行一个 program、BLOCK={=1024} 盖住整行的 `row_sum`，在 Triton 解释器里对 {shape} 的 fp32 与 `x.sum(-1)` "
              "最大相差 {max_abs_err:.1e}，{close:?在 fp32 容差内|超出 fp32 容差}。",
    expect={"close": True, "max_abs_err": {"<": 1e-4}},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 1000, generator=g)
    y = torch.empty(6)
    k = interp.kernel(ctx, row_sum)
    k[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    err, ok = close(y, x.sum(-1))
    return {"shape": list(x.shape), "max_abs_err": err, "close": ok}


@claim(
    "kernels.rowsum-shfl",
    question=Q,
    statement="`tl.sum` 编译到 sm_90a：num_warps=1 时是 {w1_shfl} 条 `SHFL.BFLY`（偏移 {w1_offsets}）、shared memory {w1_shared} 字节、"
              "{w1_bar} 个 barrier；num_warps=4 时 {w4_shfl} 条 SHFL、{w4_shared} 字节 shared memory、{w4_bar} 个 `BAR.SYNC`"
              "（各 warp 的部分和经 shared memory 汇合，再做 {w4_cross} 步 shuffle）；num_warps=8 时 {w8_shfl} 条、{w8_shared} 字节。",
    expect={"w1_shfl": 5, "w1_shared": 0, "w1_bar": 0,
            "w4_shfl": 7, "w4_shared": 16, "w4_bar": 1, "w4_cross": 2, "w8_shfl": 8, "w8_shared": 32},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for w in (1, 4, 8):
        c = compiled.triton_kernel(ctx, row_sum, F32, {"BLOCK": 1024}, num_warps=w)
        shfl = c.sass_lines("SHFL")
        out |= flat(f"w{w}", {"shfl": len(shfl), "shared": c.shared, "bar": c.sass_count("BAR"),
                        "sts": c.sass_count("STS"), "lds": c.sass_count("LDS"), "cross": len(shfl) - 5,
                        "offsets": [int(s.split(",")[-2], 16) for s in shfl[:5]]})
    return out


@claim(
    "kernels.triton-vector-hint",
    question=Q,
    statement="同样的行求和，编译时不知道对齐：{plain_n_ldg} 条 {plain_ldg}；在 kernel 里用 `tl.multiple_of`/`tl.max_contiguous` 说明行首按 {=16 字节} "
              "对齐且连续、去掉 mask 后：{hinted_n_ldg} 条 {hinted_ldg}（每条读 {=16 字节}）。",
    expect={"plain_ldg": "LDG.E", "hinted_ldg": "LDG.E.128"},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for key, fn in (("plain", row_sum), ("hinted", row_sum_aligned)):
        c = compiled.triton_kernel(ctx, fn, F32, {"BLOCK": 1024}, num_warps=4)
        ldg = [op for op in c.sass_ops if op.startswith("LDG")]
        out |= flat(key, {"ldg": " ".join(sorted(ldg)), "n_ldg": c.sass_count("LDG")})
    return out


# --- softmax ---------------------------------------------------------------------------------------

@claim(
    "kernels.softmax-interp", kind="measured",
    question=Q,
    statement="融合 softmax（整行在一个 tile）和三遍版（BLOCK={=256}，一行分 {blocks} 块扫三遍）在解释器里对 {shape} 的 fp32 与 `torch.softmax` "
              "最大相差 {fused_err:.1e} 和 {three_err:.1e}；其中一行的值都在 {big_row_min:.0f} 以上（直接算 `exp` {naive_overflows:?会溢出成 inf|不会溢出}），"
              "结果{no_nan:?仍没有 NaN|出现了 NaN}。",
    expect={"fused_close": True, "three_close": True, "no_nan": True, "naive_overflows": True, "big_row_min": {">": 1000}},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 1000, generator=g)
    x[1] = x[1] * 100 + 5000.0                  # exp(5000) is inf in fp32: only the max-subtracted form survives
    ref = torch.softmax(x, -1)
    fused, three = torch.empty_like(x), torch.empty_like(x)
    kf, k3 = interp.kernel(ctx, softmax_fused), interp.kernel(ctx, softmax_3pass)
    kf[(x.shape[0],)](x, fused, x.shape[1], BLOCK=1024)
    k3[(x.shape[0],)](x, three, x.shape[1], BLOCK=256)
    fe, fok = close(fused, ref)
    te, tok = close(three, ref)
    return {"shape": list(x.shape), "blocks": -(-x.shape[1] // 256), "fused_err": fe, "fused_close": fok, "three_err": te, "three_close": tok,
            "big_row_min": x[1].min().item(), "naive_overflows": bool(torch.isinf(x[1].exp()).any()),
            "no_nan": not (fused.isnan().any() or three.isnan().any()).item()}


@claim(
    "kernels.softmax-one-read",
    question=Q,
    statement="同样 BLOCK={=1024}、num_warps=4 编译到 sm_90a：融合 softmax 的 SASS 里有 {fused_ldg} 条 LDG，所在的代码有 {fused_loops} 个循环"
              "（整行从显存读一遍）；三遍版有 {three_ldg} 条，分在 {three_loops} 个循环里，是融合版的 {ratio} 倍。"
              "`tl.exp` 编译成乘 log2(e)（{fused_fmul_log2e} 条 `FMUL …, 1.4426950…`）加 {fused_ex2} 条 `MUFU.EX2`，"
              "PTX 里是 {fused_ptx_ex2} 条 `ex2.approx.f32`。",
    expect={"ratio": 3, "fused_ex2": {">": 0}, "fused_fmul_log2e": {">": 0}, "fused_loops": 0, "three_loops": 3},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for key, fn in (("fused", softmax_fused), ("three", softmax_3pass)):
        c = compiled.triton_kernel(ctx, fn, F32, {"BLOCK": 1024}, num_warps=4)
        out |= flat(key, {"ldg": c.sass_count("LDG"), "stg": c.sass_count("STG"), "loops": back_edges(c),
                    "ex2": c.sass_count("MUFU.EX2"), "rcp": c.sass_count("MUFU.RCP"), "ptx_ex2": c.ptx_count("ex2.approx"),
                    "fmul_log2e": sum("1.44269502" in s for s in c.sass_lines("FMUL"))})
    out["ratio"] = out["three_ldg"] // out["fused_ldg"]
    return out


@claim(
    "kernels.softmax-registers",
    question=Q,
    statement="整行放进寄存器有上限：BLOCK={=32768} 的融合 softmax，num_warps=4 时每线程要放 {w4_per_thread} 个 fp32，"
              "寄存器用到 {w4_registers}，SASS 里有 {w4_stl} 条 STL（溢出到 local memory）；num_warps=16 时每线程 "
              "{w16_per_thread} 个，寄存器 {w16_registers}，STL {w16_stl} 条。",
    expect={"w4_registers": 255, "w4_stl": {">": 50}, "w16_registers": {"<": 255}},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for w in (4, 16):
        c = compiled.triton_kernel(ctx, softmax_fused, F32, {"BLOCK": 32768}, num_warps=w)
        out |= flat(f"w{w}", {"per_thread": 32768 // (32 * w), "registers": c.registers, "stl": c.sass_count("STL"),
                        "ldl": c.sass_count("LDL")})
    return out


# --- LayerNorm / RMSNorm ---------------------------------------------------------------------------

@claim(
    "kernels.norm-interp",
    question=Q,
    statement="解释器里对 {shape} 的 fp32：`layer_norm` 与 `F.layer_norm` 最大相差 {ln_err:.1e}，`rms_norm` 与 "
              "`x * rsqrt(mean(x²) + eps) * w` 相差 {rms_err:.1e}、与 `F.rms_norm` 相差 {rms_torch_err:.1e}，都在 fp32 容差内。",
    expect={"ln_close": True, "rms_close": True, "rms_torch_close": True},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(6, 768, generator=g), torch.randn(768, generator=g), torch.randn(768, generator=g)
    ln, rms = torch.empty_like(x), torch.empty_like(x)
    kl, kr = interp.kernel(ctx, layer_norm), interp.kernel(ctx, rms_norm)
    kl[(6,)](x, w, b, ln, 768, 1e-5, BLOCK=1024)
    kr[(6,)](x, w, rms, 768, 1e-6, BLOCK=1024)
    ln_err, ln_ok = close(ln, torch.nn.functional.layer_norm(x, (768,), w, b, 1e-5))
    rms_err, rms_ok = close(rms, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)
    rt_err, rt_ok = close(rms, torch.nn.functional.rms_norm(x, (768,), w, 1e-6))
    return {"shape": list(x.shape), "ln_err": ln_err, "ln_close": ln_ok, "rms_err": rms_err, "rms_close": rms_ok,
            "rms_torch_err": rt_err, "rms_torch_close": rt_ok}


@claim(
    "kernels.layernorm-onepass-cancels", kind="measured",
    question=Q,
    statement="单遍公式 var = E[x²] − E[x]² 在 fp32 里会相消：每行均值 {=1000}、标准差 1 时，单遍版与 float64 参考最大相差 "
              "{one_1e3:.2f}，两遍版 {two_1e3:.1e}；均值 {=10000} 时单遍版 {nan_rows_1e4}/{rows} 行算出负方差、输出 NaN，"
              "其余行最大相差 {one_1e4:.0f}；两遍版最大相差 {two_1e4:.1e}。",
    expect={"one_1e3": {">": 0.05}, "one_1e4": {">": 0.05}, "two_1e3": {"<": 1e-3}, "nan_rows_1e4": {">": 0}, "two_1e4": {"<": 1e-2}},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    w, b = torch.randn(768, generator=g), torch.randn(768, generator=g)
    k2, k1 = interp.kernel(ctx, layer_norm), interp.kernel(ctx, layer_norm_1pass)
    out = {"rows": 6}
    for tag, shift in (("1e3", 1e3), ("1e4", 1e4)):
        x = torch.randn(6, 768, generator=g) + shift
        ref = torch.nn.functional.layer_norm(x.double(), (768,), w.double(), b.double(), 1e-5).float()
        y2, y1 = torch.empty_like(x), torch.empty_like(x)
        k2[(6,)](x, w, b, y2, 768, 1e-5, BLOCK=1024)
        k1[(6,)](x, w, b, y1, 768, 1e-5, BLOCK=1024)
        out[f"two_{tag}"] = (y2 - ref).abs().max().item()
        finite = ~y1.isnan().any(-1)
        out[f"one_{tag}"] = (y1[finite] - ref[finite]).abs().max().item()
        out[f"nan_rows_{tag}"] = int(y1.isnan().any(-1).sum())
    return out


@claim(
    "kernels.norm-compiled",
    question=Q,
    statement="Triton 3.9 编译到 sm_90a（num_warps=4）：两遍 LayerNorm 有 {ln_shfl} 条 SHFL、{ln_bar} 个 BAR（{ln_reductions} 次块内归约，"
              "各自经 shared memory 跨 warp），单遍版在 Triton 里同样 {ln1_shfl} 条 SHFL、{ln1_bar} 个 BAR；RMSNorm 只有 {rms_shfl} 条、"
              "{rms_bar} 个（{rms_reductions} 次归约）。三者的 rsqrt 都是 {ln_rsq} 条 `MUFU.RSQ`（PTX `rsqrt.approx.ftz.f32`），"
              "x 都只读一遍：LayerNorm 的 LDG 是 x、w、b 各 {ln_ldg_each} 条。",
    expect={"ln_reductions": 2, "rms_reductions": 1, "ln_rsq": 1, "rms_rsq": 1, "ln_ptx_rsqrt_ftz": True},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for key, fn, sig in (("ln", layer_norm, NORM_SIG), ("ln1", layer_norm_1pass, NORM_SIG), ("rms", rms_norm, RMS_SIG)):
        c = compiled.triton_kernel(ctx, fn, sig, {"BLOCK": 1024}, num_warps=4)
        shfl = c.sass_count("SHFL")
        loads = 3 if sig is NORM_SIG else 2
        out |= flat(key, {"shfl": shfl, "bar": c.sass_count("BAR"), "reductions": shfl // 7, "rsq": c.sass_count("MUFU.RSQ"),
                    "ldg_each": c.sass_count("LDG") // loads, "shared": c.shared,
                    "ptx_rsqrt_ftz": c.ptx_count("rsqrt.approx.ftz") == 1})
    return out


# --- transpose -------------------------------------------------------------------------------------

@claim(
    "kernels.transpose-interp",
    question=Q,
    statement="32×32 tile 的 `transpose`（load 一块、`tl.trans`、按 y 的行 store）在解释器里对 {shape} 的矩阵（两边都不是 32 的倍数）"
              "与 `x.T` {equal:?逐元素相等|不相等}。",
    expect={"equal": True},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(70, 100, generator=g)
    y = torch.full((100, 70), float("nan"))
    k = interp.kernel(ctx, transpose)
    k[(3, 4)](x, y, 70, 100, BM=32, BN=32)
    return {"shape": list(x.shape), "equal": bool(torch.equal(y, x.T))}


@claim(
    "kernels.transpose-shared",
    question=Q,
    statement="Triton 把这个转置经 shared memory 中转：BM=BN={=32}、fp32、num_warps=4 编译到 sm_90a，shared memory {shared} 字节，"
              "正好是一个 tile 的 {tile_bytes} 字节（没有 padding 列）；SASS 里 {sts} 条 STS、{bar} 个 BAR、{lds} 条 LDS，"
              "PTX 里 shared 地址用 {ptx_xor} 条 `xor` 算出（swizzle）。",
    expect={"shared": 4096, "tile_bytes": 4096, "sts": {">": 0}, "lds": {">": 0}, "bar": {">=": 1}, "ptx_xor": {">": 0}},
    needs=["triton"],
)
def _(ctx):
    c = compiled.triton_kernel(ctx, transpose, T_SIG, {"BM": 32, "BN": 32}, num_warps=4)
    return {"shared": c.shared, "tile_bytes": 32 * 32 * 4, "sts": c.sass_count("STS"), "lds": c.sass_count("LDS"),
            "bar": c.sass_count("BAR"), "ptx_xor": c.ptx_count("xor")}


# --- prefix sum ------------------------------------------------------------------------------------

@claim(
    "kernels.cumsum-interp",
    question=Q,
    statement="`tl.cumsum` 的 kernel 在解释器里对 {shape} 的 fp32 与 `torch.cumsum` 最大相差 {max_abs_err:.1e}，{close:?在 fp32 容差内|超出 fp32 容差}。",
    expect={"close": True},
    needs=["triton"],
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 1000, generator=g)
    y = torch.empty_like(x)
    k = interp.kernel(ctx, cumsum_row)
    k[(4,)](x, y, 1000, BLOCK=1024)
    err, ok = close(y, x.cumsum(-1))
    return {"shape": list(x.shape), "max_abs_err": err, "close": ok}


@claim(
    "kernels.cumsum-shfl-up",
    question=Q,
    statement="`tl.cumsum` 编译到 sm_90a：warp 内是 `SHFL.UP` 的 Hillis–Steele 扫描，偏移 {w1_offsets}，每组 {w1_steps} 步；"
              "num_warps=1 时 shared memory {w1_shared} 字节、{w1_bar} 个 barrier；num_warps=4 时各 warp 的总和经 shared memory "
              "传给后面的 warp（{w4_bar} 个 BAR，{w4_uses_shared:?用到了|没有用} shared memory）。",
    expect={"w1_offsets": [1, 2, 4, 8, 16], "w1_steps": 5, "w1_shared": 0, "w1_bar": 0, "w4_uses_shared": True,
            "w4_bar": {">=": 1}},
    needs=["triton"],
)
def _(ctx):
    out = {}
    for w in (1, 4):
        c = compiled.triton_kernel(ctx, cumsum_row, F32, {"BLOCK": 1024}, num_warps=w)
        offsets = sorted({int(m, 16) for m in re.findall(r"SHFL\.UP PT, R\d+, R\d+, (0x[0-9a-f]+)", c.sass)})
        out |= flat(f"w{w}", {"offsets": offsets, "steps": len(offsets), "shfl_up": c.sass_count("SHFL.UP"),
                        "shared": c.shared, "uses_shared": c.shared > 0, "bar": c.sass_count("BAR")})
    return out
