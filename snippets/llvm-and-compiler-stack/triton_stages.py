"""One Triton kernel (a masked vector add) compiled for sm_90a with no GPU, and what each stage of the
compile shows: TTIR (Triton's MLIR dialect, no layout), TTGIR (the same ops with a layout per tensor),
LLVM IR (one thread's code, NVVM intrinsics), PTX, and SASS (from the cubin by cuobjdump).

``triton.compile`` keeps every stage's text in ``asm``; the project's helper (snippets/_gpu/compiled.py)
keeps the PTX and the SASS, so the early stages are read here from the same compile call. Nothing runs:
no time, no result.
"""

from __future__ import annotations

import re

from snippets._gpu import compiled
from verify import toolchain
from verify.claim import claim

toolchain.activate()
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

Q = "llvm-and-compiler-stack"
SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
BLOCK = 1024
WARPS = 4


def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _stages(divisible: tuple[str, ...] = ()) -> dict[str, str]:
    """Every stage's text of one compile for sm_90a (``divisible``: the arguments a launch marks divisible by 16)."""
    from triton.backends.compiler import GPUTarget  # noqa: PLC0415
    from triton.compiler import ASTSource  # noqa: PLC0415

    jit = triton.jit(add)
    attrs = {(jit.arg_names.index(k),): [["tt.divisibility", 16]] for k in divisible}
    kernel = triton.compile(ASTSource(jit, {**SIG, "BLOCK": "constexpr"}, {"BLOCK": BLOCK}, attrs),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": WARPS})
    return {k: v for k, v in kernel.asm.items() if isinstance(v, str)} | {"kept": ",".join(kernel.asm)}


def _layout(ttgir: str) -> str:
    m = re.search(r"#blocked\d* = #ttg\.blocked<\{(sizePerThread = \[\d+\])", ttgir)
    return m.group(1) if m else ""


@claim("triton.stages", question=Q, needs=["triton"],
       statement="Triton 把一个向量加法 kernel 编译到 sm_90a，`triton.compile` 的结果按阶段留下 `{kept}`。"
                 "TTIR 里是整块张量的操作：{ttir_load} 个 `tt.load`、{ttir_store} 个 `tt.store`，张量类型不带布局（`#blocked` "
                 "出现 {ttir_blocked} 次）；TTGIR 给每个张量加上布局 `{layout}`（`#blocked` 出现 {ttgir_blocked} 次），"
                 "从这里起才决定每个线程拿哪些元素；LLVM IR 是单个线程的代码：地址用 {llir_gep} 条 `getelementptr` 在 "
                 "`addrspace(1)`（全局内存）上算，读写已是内联汇编里的 {llir_ld} 条 `ld.global`；PTX 里 {ptx_ld} 条 `ld.global`；"
                 "SASS 里 {sass_ldg} 条 `LDG`、{sass_stg} 条 `STG`：每个 `tt.load` 在每个线程是 {ldg_per_load} 条读；{block} 个元素分给 "
                 "{threads} 个线程，每个线程 {elems_per_thread} 个（由参数算出，不是观测），"
                 "{one_read_per_element:?正好一个元素一条读|读的条数和元素数不同}。",
       expect={"kept": "source,ttir,ttgir,llir,ptx,cubin", "ttir_load": 2, "ttir_store": 1, "ttir_blocked": 0,
               "ttgir_blocked": {">": 0}, "layout": "sizePerThread = [1]", "llir_gep": {">": 0},
               "llir_addrspace1": {">": 0}, "llir_ld": 16, "ptx_ld": 16, "sass_ldg": 16, "sass_stg": 8, "ldg_per_load": 8,
               "one_read_per_element": True})
def _(ctx):
    """范围：Triton 3.9，sm_90a，向量加法，不标对齐"""
    s = _stages()
    c = compiled.triton_kernel(ctx, add, SIG, {"BLOCK": BLOCK}, num_warps=WARPS)
    return {"kept": s["kept"], "ttir_load": s["ttir"].count("tt.load "), "ttir_store": s["ttir"].count("tt.store "),
            "ttir_blocked": s["ttir"].count("#blocked"), "ttgir_blocked": s["ttgir"].count("#blocked"),
            "layout": _layout(s["ttgir"]), "llir_gep": s["llir"].count("getelementptr"),
            "llir_addrspace1": s["llir"].count("addrspace(1)"), "llir_ld": s["llir"].count("ld.global"),
            "ptx_ld": c.ptx_count("ld.global"), "sass_ldg": c.sass_count("LDG"), "sass_stg": c.sass_count("STG"),
            "ldg_per_load": c.sass_count("LDG") // max(s["ttir"].count("tt.load "), 1),
            "block": BLOCK, "threads": 32 * WARPS, "elems_per_thread": BLOCK // (32 * WARPS),
            "one_read_per_element": c.sass_count("LDG") == s["ttir"].count("tt.load ") * BLOCK // (32 * WARPS)}


#: what a launch marks: nothing, the three pointers (16-byte-aligned tensors), and also n (a multiple of 16)
MARKS = {"plain": (), "pointers": ("x_ptr", "y_ptr", "out_ptr"), "pointers_n": ("x_ptr", "y_ptr", "out_ptr", "n")}


@claim("triton.divisibility-vectorises", question=Q, needs=["triton"],
       statement="同一个 kernel，启动时的对齐信息（Triton 给对齐的指针、是 16 的倍数的整数标 `tt.divisibility=16`）决定向量宽度："
                 "什么都不标时 TTGIR 布局是 `{plain.layout}`，SASS 里 {plain.sass_ldg} 条 `LDG`；只标三个指针，布局已是 "
                 "`{pointers.layout}`，但带 mask 的读仍是 {pointers.sass_ldg} 条标量 `LDG`（`offs < n` 可能在一个线程的连续元素中间变，"
                 "向量宽度还受 mask 限制）；指针和 `n` 都标上，降到 LLVM IR 时已是 {pointers_n.llir_v4} 条 `ld.global.v4`（只标指针时 "
                 "{pointers.llir_v4} 条），PTX 里同样 {pointers_n.ptx_v4} 条，SASS 只剩 "
                 "{pointers_n.sass_ldg} 条 `LDG`，其中 {pointers_n.sass_ldg128} 条是 128 位的 `LDG.E.128`。",
       expect={"plain": {"layout": "sizePerThread = [1]", "llir_v4": 0, "ptx_v4": 0, "sass_ldg": 16, "sass_ldg128": 0},
               "pointers": {"layout": "sizePerThread = [4]", "llir_v4": 0, "ptx_v4": 0, "sass_ldg": 16, "sass_ldg128": 0},
               "pointers_n": {"layout": "sizePerThread = [4]", "llir_v4": 4, "ptx_v4": 4, "sass_ldg": 4, "sass_ldg128": 4}})
def _(ctx):
    """范围：Triton 3.9，sm_90a，BLOCK=1024，4 warp"""
    out = {}
    for name, marked in MARKS.items():
        c = compiled.triton_kernel(ctx, add, SIG, {"BLOCK": BLOCK}, num_warps=WARPS, divisible=marked)
        s = _stages(marked)
        out[name] = {"layout": _layout(s["ttgir"]), "llir_v4": s["llir"].count("ld.global.v4"),
                     "ptx_v4": c.ptx_count("ld.global.v4"),
                     "sass_ldg": c.sass_count("LDG"), "sass_ldg128": sum(1 for op in c.sass_lines("LDG") if ".128" in op)}
    return out
