"""What nvcc makes of branches and of register / shared-memory use, for sm_90a (ptxas' numbers, SASS counts)."""

from __future__ import annotations

import re

from snippets._gpu import compiled, occupancy
from verify.claim import claim

Q = "gpu-execution-model"
_PRED = re.compile(r"/\*[0-9a-f]{4,}\*/\s+@!?U?P\w+\s+([A-Z][A-Z0-9_.]*)")


def _branch(ctx, uniform, n):
    src = (ctx.snippet_dir() / "branch.cu").read_text()
    return compiled.cuda_source(ctx, src, name=f"branch_u{uniform}_n{n}", flags=(f"-DUNIFORM={uniform}", f"-DN={n}"))


def _control(k):
    """Branch structure of one kernel: reconvergence regions, predicated branches, predicated and all FFMAs."""
    predicated = [m.group(1) for m in map(_PRED.search, k.sass.splitlines()) if m]
    return {"bssy": k.sass_count("BSSY"), "bsync": k.sass_count("BSYNC"),
            "cond_bra": sum(op == "BRA" for op in predicated),
            "pred_ffma": sum(op == "FFMA" for op in predicated), "ffma": k.sass_count("FFMA")}


@claim(
    "exec.branch-sass-long",
    question=Q,
    statement="每条路径 {=16} 条 FMA 时，nvcc 为 sm_90a 编译 `threadIdx.x % 2` 和 `(threadIdx.x / 32) % 2` 两种分支：分化的那个是 "
              "{divergent.bssy} 个 BSSY / {divergent.bsync} 个 BSYNC 围出汇合点、{divergent.cond_bra} 条带谓词的 BRA 跳到 else，"
              "共 {divergent.ffma} 条 FFMA（两条路径各一份）；warp 一致的那个也是 {uniform.bssy} / {uniform.bsync} / "
              "{uniform.cond_bra}、{uniform.ffma} 条，两者的结构{same:?完全相同|不同}。",
    expect={"divergent": {"bssy": 1, "bsync": 1, "cond_bra": 1, "pred_ffma": 0, "ffma": 32},
            "uniform": {"bssy": 1, "bsync": 1, "cond_bra": 1, "pred_ffma": 0, "ffma": 32}, "same": True},
    needs=["nvcc"],
)
def _(ctx):
    d, u = _control(_branch(ctx, 0, 16)), _control(_branch(ctx, 1, 16))
    return {"divergent": d, "uniform": u, "same": d == u}


@claim(
    "exec.branch-sass-short",
    question=Q,
    statement="每条路径只有 {=4} 条 FMA 时，两种分支都没有跳转（BSSY {divergent.bssy}、带谓词的 BRA {divergent.cond_bra}）："
              "nvcc 把两条路径的 {divergent.pred_ffma} 条 FFMA 全部写成 `@P0` / `@!P0` 谓词指令，warp 一致的版本同样是 "
              "{uniform.pred_ffma} 条谓词 FFMA、{uniform.cond_bra} 条跳转。",
    expect={"divergent": {"bssy": 0, "bsync": 0, "cond_bra": 0, "pred_ffma": 8, "ffma": 8},
            "uniform": {"bssy": 0, "bsync": 0, "cond_bra": 0, "pred_ffma": 8, "ffma": 8}},
    needs=["nvcc"],
)
def _(ctx):
    return {"divergent": _control(_branch(ctx, 0, 4)), "uniform": _control(_branch(ctx, 1, 4))}


def _mm(ctx, bk):
    src = (ctx.snippet_dir() / "tiled_mm.cu").read_text()
    return compiled.cuda_source(ctx, src, name=f"tiled_mm_bk{bk}", flags=(f"-DBK={bk}",))


@claim(
    "exec.occupancy-tiled-mm",
    question=Q,
    statement="{=16×16} 分块的 fp32 矩阵乘（{=256} 线程的 block）为 sm_90a 编译：ptxas 报告每线程 {registers} 个寄存器、"
              "每 block {shared:bytes} 静态 shared memory；按 compute capability 9.0（H100 / H200）的上限，"
              "线程、warp、寄存器各允许 {limits.threads} / {limits.warps} / {limits.registers} 个 block，shared memory 允许 "
              "{limits.shared} 个，于是每 SM 驻留 {blocks} 个 block、{warps} 个 warp，occupancy {occupancy:pct}。",
    expect={"registers": {"<=": 32}, "blocks": 8, "warps": 64, "occupancy": 1.0},
    needs=["nvcc"],
)
def _(ctx):
    k = _mm(ctx, 16)
    occ = occupancy.blocks_per_sm(ctx, "9.0", 256, k.registers, k.shared)
    return {"registers": k.registers, "shared": k.shared, **occ}


@claim(
    "exec.occupancy-shared-limited",
    question=Q,
    statement="同一个矩阵乘把 K 方向的 slice 加深到 {=BK=320}：寄存器仍是 {registers} 个，静态 shared memory 变成 "
              "{shared:bytes}（加上系统每 block 预留的 {reserved:bytes}），compute capability 9.0（H100 / H200）每 SM 的 "
              "{shared_per_sm:bytes} 只放得下 {limits.shared} 个 block：限制因素是 {limiter}，{warps} 个 warp，occupancy {occupancy:.1%}。",
    expect={"limiter": "shared", "blocks": 5, "occupancy": 0.625},
    needs=["nvcc"],
)
def _(ctx):
    from snippets._gpu import specs  # noqa: PLC0415

    k = _mm(ctx, 320)
    occ = occupancy.blocks_per_sm(ctx, "9.0", 256, k.registers, k.shared)
    return {"registers": k.registers, "shared": k.shared, "reserved": int(specs.get(ctx, "9.0", "reserved_shared_per_block")),
            "shared_per_sm": int(specs.get(ctx, "9.0", "shared_per_sm")), **occ}


def _micro(ctx, min_blocks):
    src = (ctx.snippet_dir() / "micro_tile.cu").read_text()
    return compiled.cuda_source(ctx, src, name=f"micro_tile_m{min_blocks}", flags=(f"-DMIN_BLOCKS={min_blocks}",))


@claim(
    "exec.launch-bounds",
    question=Q,
    statement="每线程累加 {=8×8} 个输出的矩阵乘（{=256} 线程的 block）为 sm_90a 编译：不加限制时 ptxas 用 {plain_registers} 个"
              "寄存器、spill {plain_spill_stores:bytes}，在 compute capability 9.0（H100 / H200）上每 SM {plain_blocks} 个 block、"
              "occupancy {plain_occupancy:pct}；加 `__launch_bounds__(256, 4)` 后寄存器压到 {bounded_registers} 个"
              "（上限 {cap}），代价是 {bounded_spill_stores:bytes} 的 spill store、{bounded_spill_loads:bytes} 的 spill load"
              "（{bounded_stl} 条 STL、{bounded_ldl} 条 LDL），每 SM {bounded_blocks} 个 block、occupancy {bounded_occupancy:pct}。",
    expect={"plain_registers": {">": 64}, "plain_spill_stores": 0, "bounded_registers": {"<=": 64},
            "bounded_spill_stores": {">": 0}, "bounded_blocks": 4, "cap": 64},
    needs=["nvcc"],
)
def _(ctx):
    out = {}
    for key, m in (("plain", 0), ("bounded", 4)):
        k = _micro(ctx, m)
        occ = occupancy.blocks_per_sm(ctx, "9.0", 256, k.registers, k.shared)
        seen = {"registers": k.registers, "spill_stores": k.info.get("spill_stores", 0),
                "spill_loads": k.info.get("spill_loads", 0), "stl": k.sass_count("STL"), "ldl": k.sass_count("LDL"),
                "blocks": occ["blocks"], "warps": occ["warps"], "occupancy": occ["occupancy"]}
        out.update({f"{key}_{name}": value for name, value in seen.items()})
    from snippets._gpu import specs  # noqa: PLC0415

    out["cap"] = int(specs.get(ctx, "9.0", "registers_per_sm")) // (256 * 4)
    return out


@claim(
    "exec.launch-bounds-granularity",
    question=Q,
    statement="同一个 kernel 依次要求每 SM 至少 {=3、5、6} 个 {=256} 线程的 block：每 SM {regs_per_sm} 个寄存器平分下来每线程能用 "
              "{caps}，ptxas 实际给的是 {registers}——{multiple:?都是|并不都是} {per_thread} 的倍数：寄存器按 warp 以 "
              "{unit} 个为单位分配，摊到每个线程就是这个步长。",
    expect={"caps": [85, 51, 42], "registers": [80, 48, 40], "multiple": True, "unit": 256, "per_thread": 8},
    needs=["nvcc"],
)
def _(ctx):
    from snippets._gpu import specs  # noqa: PLC0415

    regs_per_sm = int(specs.get(ctx, "9.0", "registers_per_sm"))
    caps, regs = [], []
    for m in (3, 5, 6):
        caps.append(regs_per_sm // (256 * m))
        regs.append(_micro(ctx, m).registers)
    unit = int(specs.get(ctx, "9.0", "register_alloc_unit"))
    per_thread = unit // int(specs.get(ctx, "9.0", "warp_size"))
    return {"regs_per_sm": regs_per_sm, "caps": caps, "registers": regs,
            "multiple": all(r % per_thread == 0 for r in regs), "unit": unit, "per_thread": per_thread}
