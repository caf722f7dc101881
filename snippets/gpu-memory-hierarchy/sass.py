"""What nvcc makes of memory access for sm_90a: shared-memory instructions, vector loads, local memory, spills.

Compiled with the pinned nvcc (``-O3``, ``-Xptxas -v``); each variant of a ``.cu`` file beside this
one is chosen by a ``-D`` flag so that one compile holds one kernel. Nothing here runs a kernel.
"""

from __future__ import annotations

import re

from snippets._gpu import compiled, occupancy
from verify.claim import claim

Q = "gpu-memory-hierarchy"
TARGET = "sm_90a"
SOURCES = {"transpose": "transpose.cu", "vector": "vector.cu", "local": "local.cu", "heavy": "heavy.cu"}
ROWS = 8  # rows of a tile each block of transpose.cu moves per step (blockDim.y)


def _cu(ctx, name, *flags):
    source = (ctx.snippet_dir() / SOURCES[name]).read_text()
    tag = "-".join(f.lstrip("-").replace("=", "") for f in flags) or "default"
    return compiled.cuda_source(ctx, source, target=TARGET, name=f"{name}-{tag}", flags=flags)


def _offsets(lines):
    """The immediate offsets of ``[Rn+0x..]`` operands, in order (0 where there is none)."""
    return [int(m.group(1), 16) if (m := re.search(r"\[R\d+\+0x([0-9a-f]+)\]", line)) else 0 for line in lines]


def _in_loops(c, name):
    """Instructions of mnemonic ``name`` between a backward branch's target and the branch: a loop's body."""
    rows = [(int(m.group(1), 16), line) for line in c.sass.splitlines() if (m := re.search(r"/\*([0-9a-f]{4,})\*/", line))]
    loops = [(int(t.group(1), 16), at) for at, line in rows
             if (t := re.search(r"\bBRA\s+(?:`\(\.L_x_\d+\)\s*)?0x([0-9a-f]+)", line)) and int(t.group(1), 16) < at]
    op = re.compile(rf"\s{name}(?:\.[A-Z0-9_.]+)?\s")
    return sum(1 for at, line in rows if any(lo <= at <= hi for lo, hi in loops) and op.search(line))


def _global_loads(c):
    return " + ".join(sorted({op for op in c.ptx_ops if op.startswith("ld.global")}))


def _sass_loads(c):
    """The opcodes of the SASS global loads, as one text (``LDG.E.128.CONSTANT``, or ``4 × LDG.E``)."""
    ops = [line.split()[0] for line in c.sass_lines("LDG")]
    distinct = sorted(set(ops))
    return " + ".join(f"{ops.count(op)} × {op}" if ops.count(op) > 1 else op for op in distinct)


@claim(
    "sass.transpose-shared",
    question=Q,
    statement="nvcc 为 sm_90a 编译这两个转置：直接转置没有 shared memory 指令（LDS {naive.lds} 条、STS {naive.sts} 条），"
              "只有 {naive.ldg} 条 LDG、{naive.stg} 条 STG；经 tile 中转的版本多了 {tile32.sts} 条 STS、{tile32.lds} 条 LDS"
              "（每线程搬 4 个 float）和 {tile32.bar} 条 BAR.SYNC。ptxas 报告 `tile[32][32]` 要 {tile32.shared:,} 字节 shared memory，"
              "`tile[32][33]` 要 {tile33.shared:,} 字节；STS 的地址偏移显示一行的跨度从 {tile32.pitch} 字节变成 {tile33.pitch} 字节，"
              "多出的那个 float 就是把一列错开到不同 bank 的填充。",
    expect={"naive": {"lds": 0, "sts": 0, "ldg": 4, "stg": 4, "bar": 0, "shared": 0},
            "tile32": {"lds": 4, "sts": 4, "ldg": 4, "stg": 4, "bar": 1, "shared": 4096, "pitch": 128},
            "tile33": {"lds": 4, "sts": 4, "ldg": 4, "stg": 4, "bar": 1, "shared": 4224, "pitch": 132},
            "shared_is_tile_bytes": True},
    needs=["nvcc"],
)
def _(ctx):
    out, lines = {}, {}
    for key, flags in (("naive", ("-DNAIVE",)), ("tile32", ("-DPAD=0",)), ("tile33", ("-DPAD=1",))):
        c = _cu(ctx, "transpose", *flags)
        row = {"lds": c.sass_count("LDS"), "sts": c.sass_count("STS"), "ldg": c.sass_count("LDG"),
               "stg": c.sass_count("STG"), "bar": c.sass_count("BAR"), "shared": c.shared}
        sts = _offsets(c.sass_lines("STS"))
        if sts:
            row["pitch"] = (sts[1] - sts[0]) // ROWS  # consecutive STS are ROWS rows of the tile apart
            lines[key] = {"STS": c.sass_lines("STS"), "LDS": c.sass_lines("LDS")}
        out[key] = row
    ok = out["tile32"]["shared"] == 32 * 32 * 4 and out["tile33"]["shared"] == 32 * 33 * 4
    return {**out, "shared_is_tile_bytes": ok, "lines": lines}


@claim(
    "vec.ldg128",
    question=Q,
    statement="sm_90a 上一个线程拷一个 float 是 {scalar.ops}（每条 load 搬 1 个 float，每元素 {scalar.per_element} 条 load），"
              "拷一个 float4 是 {vec4.ops}：一条 128 位的 load 搬 4 个 float，每元素 {vec4.per_element} 条。",
    expect={"scalar": {"ops": "LDG.E.CONSTANT", "per_element": 1.0},
            "vec4": {"ops": "LDG.E.128.CONSTANT", "per_element": 0.25}},
    needs=["nvcc"],
)
def _(ctx):
    out = {}
    for key, flag, elements in (("scalar", "-DSCALAR", 1), ("vec4", "-DVEC4", 4)):
        c = _cu(ctx, "vector", flag)
        out[key] = {"ops": _sass_loads(c), "per_element": c.sass_count("LDG") / elements}
        out[f"{key}_ptx"] = _global_loads(c)
        out[f"{key}_stores"] = [line.split()[0] for line in c.sass_lines("STG")]
    return out


@claim(
    "vec.restrict-nc",
    question=Q,
    statement="`const float4* __restrict__` 的读在 PTX 里是 {restrict.ptx}，SASS 里是 {restrict.sass}（走只读的 "
              "non-coherent 路径）；去掉 `const __restrict__`，同一行代码是 {plain.ptx} 和 {plain.sass}。",
    expect={"restrict": {"ptx": "ld.global.nc.v4.u32", "sass": "LDG.E.128.CONSTANT"},
            "plain": {"ptx": "ld.global.v4.u32", "sass": "LDG.E.128"}},
    needs=["nvcc"],
)
def _(ctx):
    out = {}
    for key, flag in (("restrict", "-DVEC4"), ("plain", "-DVEC4_PLAIN")):
        c = _cu(ctx, "vector", flag)
        out[key] = {"ptx": _global_loads(c), "sass": _sass_loads(c)}
    return out


@claim(
    "vec.alignment",
    question=Q,
    statement="128 位的 load 要求地址按 {=16 字节} 对齐：`alignof(float4)` 编译出来是 {float4_alignment}。"
              "同样读 4 个连续 float，经 `float*` 时 nvcc 只知道 {=4 字节} 对齐，生成 {four_scalars}；"
              "用 `__builtin_assume_aligned(x, 16)` 承诺对齐后，合成一条 {four_aligned}。",
    expect={"float4_alignment": 16, "four_scalars": "4 × LDG.E.CONSTANT", "four_aligned": "LDG.E.128"},
    needs=["nvcc"],
)
def _(ctx):
    out = {}
    for key, flag in (("four_scalars", "-DFOUR_SCALARS"), ("four_aligned", "-DFOUR_ALIGNED")):
        c = _cu(ctx, "vector", flag)
        out[key] = _sass_loads(c)
        out[f"{key}_lines"] = c.sass_lines("LDG")
    m = re.search(r"float4_alignment\s*=\s*(\d+)", c.ptx)
    out["float4_alignment"] = int(m.group(1)) if m else None
    return out


@claim(
    "local.runtime-index",
    question=Q,
    statement="16 个 float 的线程私有数组用运行时下标访问：只读一次（`buf[idx[t] & 15]`）时，PTX 里数组还在 local 空间"
              "（{read_ptx_ld_local} 条 `ld.local`），ptxas 却把它提升进寄存器，改写成比较加条件传送：stack frame "
              "{read_stack} 字节，LDL {read_ldl} 条、STL {read_stl} 条；按运行时下标读改写（每线程一个直方图 `h[idx & 15] += x`）"
              "时留在 local memory：ptxas 报告 {hist_stack} 字节 stack frame，SASS 里 {hist_ldl} 条 LDL、{hist_stl} 条 STL。",
    expect={"read_stack": 0, "read_ldl": 0, "read_stl": 0, "read_ptx_ld_local": {">": 0},
            "hist_stack": 64, "hist_ldl": {">": 0}, "hist_stl": {">": 0}},
    needs=["nvcc"],
)
def _(ctx):
    out = {}
    for key, flag in (("read", "-DREAD"), ("hist", "-DHIST")):
        c = _cu(ctx, "local", flag)
        out.update({f"{key}_stack": c.info["stack"], f"{key}_ldl": c.sass_count("LDL"), f"{key}_stl": c.sass_count("STL"),
                    f"{key}_ptx_ld_local": c.ptx_count("ld.local"), f"{key}_registers": c.registers,
                    f"{key}_isetp": c.sass_count("ISETP"), f"{key}_spill_stores": c.info["spill_stores"]})
    return out


@claim(
    "spill.maxrregcount",
    question=Q,
    statement="每线程 64 个累加器的 kernel 在 sm_90a 上默认用 {default_registers} 个寄存器，不溢出（spill stores "
              "{default_spill_stores} 字节）；加 `-maxrregcount=32` 后被压到 {capped_registers} 个，ptxas 报告 "
              "{capped_stack} 字节 stack frame、{capped_spill_stores} 字节 spill stores、{capped_spill_loads} 字节 spill loads，"
              "SASS 里多出 {capped_stl} 条 STL 和 {capped_ldl} 条 LDL，其中 {capped_loop_ldl} 条 LDL、{capped_loop_stl} 条 STL "
              "在 k 循环的循环体里，每次迭代都要执行；两版的 FFMA 都是 {ffma} 条，算的东西没变。",
    expect={"default_registers": {">": 32}, "default_spill_stores": 0, "default_stack": 0, "default_ldl": 0,
            "capped_registers": {"<=": 32}, "capped_spill_stores": {">": 0}, "capped_spill_loads": {">": 0},
            "capped_stl": {">": 0}, "capped_ldl": {">": 0}, "capped_loop_ldl": {">": 0}, "default_loop_ldl": 0,
            "same_ffma": True},
    needs=["nvcc"],
)
def _(ctx):
    out, ffma = {}, {}
    for key, flags in (("default", ()), ("capped", ("-maxrregcount=32",))):
        c = _cu(ctx, "heavy", *flags)
        out.update({f"{key}_registers": c.registers, f"{key}_stack": c.info["stack"],
                    f"{key}_spill_stores": c.info["spill_stores"], f"{key}_spill_loads": c.info["spill_loads"],
                    f"{key}_ldl": c.sass_count("LDL"), f"{key}_stl": c.sass_count("STL"),
                    f"{key}_loop_ldl": _in_loops(c, "LDL"), f"{key}_loop_stl": _in_loops(c, "STL"),
                    f"{key}_loop_ffma": _in_loops(c, "FFMA")})
        ffma[key] = c.sass_count("FFMA")
    return {**out, "ffma": ffma["default"], "same_ffma": ffma["default"] == ffma["capped"]}


@claim(
    "spill.occupancy",
    question=Q,
    statement="把这两版的寄存器数代入计算能力 9.0（H100、H200）的 occupancy 规则，{=256} 线程一块：{default_registers} 个寄存器时"
              "每个 SM 驻留 {default_blocks} 块，occupancy {default_occupancy:pct}，瓶颈是 {default_limiter}；"
              "{capped_registers} 个寄存器时 {capped_blocks} 块，occupancy {capped_occupancy:pct}。"
              "occupancy 升了，代价是每次迭代都要访问 local memory。",
    expect={"default_limiter": "registers", "default_occupancy": {"<": 0.5}, "capped_occupancy": 1.0},
    needs=["nvcc"],
)
def _(ctx):
    out = {}
    for key, flags in (("default", ()), ("capped", ("-maxrregcount=32",))):
        c = _cu(ctx, "heavy", *flags)
        occ = occupancy.blocks_per_sm(ctx, "9.0", 256, c.registers, c.shared)
        out.update({f"{key}_registers": c.registers, f"{key}_blocks": occ["blocks"],
                    f"{key}_occupancy": occ["occupancy"], f"{key}_limiter": occ["limiter"],
                    f"{key}_limits": occ["limits"]})
    return out
