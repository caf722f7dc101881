"""One FlashAttention-2-style forward kernel in Triton, compiled (not run) for sm_80 and sm_90a by the pinned Triton.

What the counts show is Triton's code generation for this kernel: which Tensor Core instruction ``tl.dot``
becomes on each target, whether tiles arrive by cp.async or by TMA, what FP8 inputs compile to, and whether
``warp_specialize`` changes the code. FlashAttention-3 itself is hand-written CUDA on CUTLASS; nothing here is
its code, and nothing here runs or times a kernel.
"""

from __future__ import annotations

import re

from snippets._gpu import compiled
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton.language as tl  # noqa: E402  (the pinned Triton is on the path only after activate())

Q = "flash-attention-2-3"
TILE = {"BM": 128, "BN": 64, "D": 64}
WARPS = 8  # two warpgroups on sm_90a, each 64 query rows
MBARRIER = re.compile(r"^\s*(?:@!?%\w+\s+)?mbarrier\.", re.MULTILINE)
# a wgmma whose A operand (after the accumulator's braces) is a register list, not a shared-memory descriptor
WGMMA_A_REGS = re.compile(r"wgmma\.mma_async\S*\s+\{[^}]*\},\s*\{")
TMA_LOAD = "cp.async.bulk.tensor.2d.shared::cta.global"   # global -> shared
TMA_STORE = "cp.async.bulk.tensor.2d.global.shared::cta"  # shared -> global


def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, N, sqm, skn, svn, som,
             BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """One program per BM query rows, a loop over BN-key blocks with the online softmax (FA2's loop order)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * sqm + rd[None, :])
    m = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.full((BM,), 0.0, tl.float32)
    acc = tl.full((BM, D), 0.0, tl.float32)
    for start in range(0, N, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * skn + rd[None, :])
        v = tl.load(v_ptr + rn[:, None] * svn + rd[None, :])
        s = tl.dot(q, tl.trans(k))                       # (BM, BN)
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    tl.store(o_ptr + rm[:, None] * som + rd[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


def attn_desc(q_desc, k_desc, v_desc, o_desc, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
              WS: tl.constexpr):
    """The same loop over host-side tensor descriptors (TMA on sm_90a); WS asks Triton to warp-specialise it."""
    pid = tl.program_id(0)
    q = q_desc.load([pid * BM, 0])
    m = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.full((BM,), 0.0, tl.float32)
    acc = tl.full((BM, D), 0.0, tl.float32)
    for start in tl.range(0, N, BN, warp_specialize=WS):
        k = k_desc.load([start, 0])
        v = v_desc.load([start, 0])
        s = tl.dot(q, tl.trans(k))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    o_desc.store([pid * BM, 0], (acc / l_i[:, None]).to(tl.float16))


def pointer_kernel(ctx, target, dtype="fp16"):
    """attn_fwd for ``target``, every pointer and stride marked divisible by 16 (as a launch of aligned tensors would)."""
    sig = {"q_ptr": f"*{dtype}", "k_ptr": f"*{dtype}", "v_ptr": f"*{dtype}", "o_ptr": "*fp16", "N": "i32",
           "sqm": "i32", "skn": "i32", "svn": "i32", "som": "i32"}
    return compiled.triton_kernel(ctx, attn_fwd, sig, TILE, target=target, num_warps=WARPS, num_stages=2,
                                  divisible=tuple(sig))


def desc_kernel(ctx, ws, dtype="fp16"):
    bm, bn, d = TILE["BM"], TILE["BN"], TILE["D"]
    sig = {"q_desc": f"tensordesc<{dtype}[{bm}, {d}]>", "k_desc": f"tensordesc<{dtype}[{bn}, {d}]>",
           "v_desc": f"tensordesc<{dtype}[{bn}, {d}]>", "o_desc": f"tensordesc<fp16[{bm}, {d}]>", "N": "i32"}
    return compiled.triton_kernel(ctx, attn_desc, sig, {**TILE, "WS": ws}, target="sm_90a", num_warps=WARPS,
                                  num_stages=2)


def mma_forms(c):
    """The distinct Tensor Core instructions in the PTX (mma.sync or wgmma.mma_async, with shape and types)."""
    return sorted({line.split()[0] for line in c.ptx.splitlines()
                   if "mma.sync" in line or "wgmma.mma_async" in line})


@claim(
    "fa23.mma-vs-wgmma",
    question=Q,
    statement="同一个 FA2 式前向 kernel（Triton，fp16，每个 program 算 {bm} 个查询行、每次扫 {bn} 个键，d={d}，{warps} 个 warp）："
              "编译到 sm_80，两次 tl.dot 是 {sm80_mma} 条 warp 级的 `{sm80_form}`（SASS {sm80_hmma} 条 HMMA），0 条 wgmma；"
              "编译到 sm_90a，是 {sm90_wgmma} 条 warpgroup 级的 `{sm90_form}`（SASS {sm90_hgmma} 条 HGMMA），{sm90_mma} 条 mma.sync，"
              "另有 {sm90_wait} 条 `wgmma.wait_group` 等异步的乘法完成；其中后出现的 {sm90_a_regs} 条（P·V 那一次 tl.dot，P 刚在寄存器里算出）"
              "的 A 操作数是寄存器，前 {sm90_a_smem} 条（Q·Kᵀ）的 A 由 shared memory 描述符给出。"
              "条数对得上形状：sm_80 每个 warp 管 {warp_rows} 行，每个 tl.dot 是 (n/8)·(k/16) = {per_dot_sm80} 条；sm_90a 每个 warpgroup 管 "
              "{wg_rows} 行，每条指令算满 n、k 方向走 16，每个 tl.dot 是 k/16 = {per_dot_sm90} 条。",
    expect={"sm80_mma": 64, "sm80_hmma": 64, "shapes_match": True, "sm80_wgmma": 0, "sm90_wgmma": 8, "sm90_hgmma": 8,
            "sm90_mma": 0, "sm90_wait": {">": 0}, "sm90_a_regs": 4, "sm90_a_smem": 4, "a_regs_last": True,
            "sm80_form": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "sm90_form": "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"},
    needs=["triton"],
)
def _(ctx):
    """Tensor Core instructions of one attention kernel, compiled for two targets.

    范围：Triton 3.9 的代码生成，不是 FA3 的 CUDA 代码
    """
    a, h = pointer_kernel(ctx, "sm_80"), pointer_kernel(ctx, "sm_90a")
    per_dot_sm80, per_dot_sm90 = (TILE["BN"] // 8) * (TILE["D"] // 16), TILE["D"] // 16
    a_regs = len(WGMMA_A_REGS.findall(h.ptx))
    order = [bool(WGMMA_A_REGS.search(line)) for line in h.ptx.splitlines() if "wgmma.mma_async" in line]
    return {"bm": TILE["BM"], "bn": TILE["BN"], "d": TILE["D"], "warps": WARPS,
            "sm80_mma": a.ptx_count("mma.sync"), "sm80_hmma": a.sass_count("HMMA"), "sm80_wgmma": a.ptx_count("wgmma.mma_async"),
            "sm80_form": (mma_forms(a) or [""])[0], "sm80_forms": mma_forms(a),
            "sm90_wgmma": h.ptx_count("wgmma.mma_async"), "sm90_hgmma": h.sass_count("HGMMA"), "sm90_mma": h.ptx_count("mma.sync"),
            "sm90_form": (mma_forms(h) or [""])[0], "sm90_forms": mma_forms(h), "sm90_wait": h.ptx.count("wgmma.wait_group"),
            "registers": {"sm_80": a.registers, "sm_90a": h.registers},
            "warp_rows": TILE["BM"] // WARPS, "wg_rows": TILE["BM"] // (WARPS // 4),
            "per_dot_sm80": per_dot_sm80, "per_dot_sm90": per_dot_sm90,
            "shapes_match": a.ptx_count("mma.sync") == 2 * per_dot_sm80 and h.ptx_count("wgmma.mma_async") == 2 * per_dot_sm90,
            "sm90_a_regs": a_regs, "sm90_a_smem": h.ptx_count("wgmma.mma_async") - a_regs,
            "a_regs_last": order == sorted(order)}


@claim(
    "fa23.tma-descriptor",
    question=Q,
    statement="在 Triton 3.9 里，TMA 要由代码请求：指针版 kernel 编译到 sm_90a，K、V 块仍由每个线程算地址、用 cp.async 搬（{ptr_ldgsts} 条 LDGSTS，"
              "{ptr_tma} 条 TMA）；改成 tensor descriptor（`desc.load([start, 0])`）后是 {desc_tma_load} 条 TMA 读（`cp.async.bulk.tensor` "
              "从 global 到 shared，SASS {desc_utmaldg} 条 UTMALDG）和 {desc_tma_store} 条写回 O 的 TMA 写，0 条 LDGSTS，"
              "用 {desc_mbarrier} 条 mbarrier 指令等数据到齐，每线程寄存器从 {ptr_regs} 降到 {desc_regs}。",
    expect={"ptr_ldgsts": {">": 0}, "ptr_tma": 0, "desc_ldgsts": 0, "desc_tma_load": {">": 0}, "desc_tma_store": 1,
            "loads_match_sass": True, "fewer_registers": True},
    needs=["triton"],
)
def _(ctx):
    """How the tiles are loaded on sm_90a: pointers against tensor descriptors.

    范围：Triton 3.9 代码生成，sm_90a，fp16，d=64
    """
    p, t = pointer_kernel(ctx, "sm_90a"), desc_kernel(ctx, False)
    return {"ptr_ldgsts": p.sass_count("LDGSTS"), "ptr_tma": p.ptx.count("cp.async.bulk.tensor"), "ptr_regs": p.registers,
            "desc_ldgsts": t.sass_count("LDGSTS"), "desc_tma": t.ptx.count("cp.async.bulk.tensor"),
            "desc_tma_load": t.ptx.count(TMA_LOAD), "desc_tma_store": t.ptx.count(TMA_STORE),
            "loads_match_sass": t.ptx.count(TMA_LOAD) == t.sass_count("UTMALDG") > 0,
            "desc_utmaldg": t.sass_count("UTMALDG"), "desc_mbarrier": len(MBARRIER.findall(t.ptx)),
            "desc_regs": t.registers, "fewer_registers": t.registers < p.registers,
            "desc_wgmma": t.ptx_count("wgmma.mma_async")}


@claim(
    "fa23.fp8-wgmma",
    question=Q,
    statement="输入换成 FP8（e4m3）编译到 sm_90a：两次 tl.dot 变成 {fp8_wgmma} 条 `{fp8_form}`，每条的 K 维是 32（fp16 是 16），"
              "所以条数是 fp16 的一半（{fp16_wgmma} 条）；累加器仍是 fp32。",
    expect={"fp8_wgmma": 4, "fp16_wgmma": 8, "fp8_form": "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"},
    needs=["triton"],
)
def _(ctx):
    """FP8 inputs on sm_90a: the wgmma form Triton emits.

    范围：Triton 3.9 代码生成，sm_90a，128×64 块
    """
    f8, f16 = pointer_kernel(ctx, "sm_90a", "fp8e4nv"), pointer_kernel(ctx, "sm_90a")
    return {"fp8_wgmma": f8.ptx_count("wgmma.mma_async"), "fp8_form": (mma_forms(f8) or [""])[0], "fp8_forms": mma_forms(f8),
            "fp16_wgmma": f16.ptx_count("wgmma.mma_async")}


@claim(
    "fa23.fp8-sm80-refused",
    question=Q,
    statement="同一个 FP8（e4m3）kernel 编译到 sm_80 直接被 Triton 3.9 拒绝：报错说 fp8e4nv（e4m3）在这个架构上不支持，"
              "这里支持的 FP8 类型只有 fp8e4b15 和 fp8e5。",
    raises=("CompilationError",
            "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')"),
    needs=["triton"],
)
def _(ctx):
    """Compiling the FP8 kernel for sm_80.

    范围：Triton 3.9 的 sm_80 后端
    """
    pointer_kernel(ctx, "sm_80", "fp8e4nv")


@claim(
    "fa23.warp-specialize-triton",
    question=Q,
    statement="Triton 3.9 的 `tl.range(..., warp_specialize=True)` 对这个 descriptor 版 kernel 在 sm_90a 上没有起作用：开与不开生成的 PTX "
              "{ptx_same:?逐字相同|不同}，{setmaxnreg} 条 `setmaxnreg`。FlashAttention-3 论文里生产者 warpgroup 搬数据（其中一个 warp 发 TMA）、"
              "消费者 warpgroup 算、"
              "用 setmaxnreg 在两者之间挪寄存器，这份分工是它在 CUDA/CUTLASS 里手写的，这个 kernel 的编译结果里没有。",
    expect={"ptx_same": True, "setmaxnreg": 0},
    needs=["triton"],
)
def _(ctx):
    """warp_specialize on and off, sm_90a, the descriptor kernel.

    范围：Triton 3.9 对这个 kernel 的代码生成，sm_90a
    """
    off, on = desc_kernel(ctx, False), desc_kernel(ctx, True)
    return {"ptx_same": off.ptx == on.ptx, "sass_same": off.sass == on.sass,
            "setmaxnreg": on.ptx.count("setmaxnreg") + off.ptx.count("setmaxnreg")}
