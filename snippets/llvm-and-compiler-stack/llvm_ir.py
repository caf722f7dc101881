"""LLVM IR read and optimised with llvmlite (the LLVM that the pinned numba's llvmlite bundles), on this CPU.

Each claim parses a few lines of textual IR, runs LLVM's own pass pipeline on it (the default -O2 pipeline
of the new pass manager, or one pass), and counts instructions in the result. Nothing is executed: what is
read is what the optimiser was allowed to assume. The IR is written by hand in the shape clang -O0 emits
(every local in an ``alloca``) so that the passes have something to do.
"""

from __future__ import annotations

import re

from snippets._gpu.note import note
from verify import toolchain
from verify.claim import claim

Q = "llvm-and-compiler-stack"

#: sum of 0..n-1 as clang -O0 writes it: s and i live in stack slots, every use loads, every update stores
SUM_O0 = """
define i32 @sum(i32 %n) ATTRS {
entry:
  %s = alloca i32
  %i = alloca i32
  store i32 0, ptr %s
  store i32 0, ptr %i
  br label %cond
cond:
  %iv = load i32, ptr %i
  %c = icmp slt i32 %iv, %n
  br i1 %c, label %body, label %done
body:
  %sv = load i32, ptr %s
  %iv2 = load i32, ptr %i
  %s2 = add i32 %sv, %iv2
  store i32 %s2, ptr %s
  %i2 = add i32 %iv2, 1
  store i32 %i2, ptr %i
  br label %cond
done:
  %r = load i32, ptr %s
  ret i32 %r
}

define i32 @sum100() {
  %r = call i32 @sum(i32 100)
  ret i32 %r
}
"""

#: one value defined twice: not SSA, so not IR
REDEFINED = """
define i32 @f(i32 %a) {
  %x = add i32 %a, 1
  %x = add i32 %x, 1
  ret i32 %x
}
"""

#: GEP is address arithmetic; the same three functions with and without ``inbounds`` (INB)
GEP = """
%S = type { i8, i32, i64 }

define i64 @field2_offset() {
  ret i64 ptrtoint (ptr getelementptr (%S, ptr null, i64 0, i32 2) to i64)
}

define i1 @after(ptr %p, i64 %i) {
  %q = getelementptr INB i8, ptr %p, i64 %i
  %c = icmp ugt ptr %q, %p
  ret i1 %c
}

define i1 @is_null(ptr nonnull %p, i64 %i) {
  %q = getelementptr INB i8, ptr %p, i64 %i
  %c = icmp eq ptr %q, null
  ret i1 %c
}
"""

_INSTR = re.compile(r"^\s+(?:%[\w.]+ = )?(?:(?:tail|musttail|notail) )?(\w+)", re.MULTILINE)


def _llvm():
    toolchain.activate()
    import llvmlite  # noqa: PLC0415
    import llvmlite.binding as llvm  # noqa: PLC0415

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm, llvmlite.__version__


def _note(ctx, llvm, version: str) -> None:
    note(ctx, "compiled", targets=("x86-64",),
         tools={"llvmlite": version, "LLVM": ".".join(map(str, llvm.llvm_version_info))})


def _optimise(llvm, text: str, passes: str = "O2") -> str:
    """The module after LLVM's default -O2 pipeline (``O2``) or SROA alone (``sroa``)."""
    module = llvm.parse_assembly(text)
    module.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    module.triple = llvm.get_process_triple()
    module.data_layout = str(tm.target_data)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
    if passes == "O2":
        mpm = pb.getModulePassManager()
    else:
        mpm = llvm.create_new_module_pass_manager()
        mpm.add_sroa_pass()
    mpm.run(module, pb)
    return str(module)


def _function(ir: str, name: str) -> str:
    """The body of ``define ... @name(...) { ... }`` in printed IR."""
    m = re.search(rf"^define [^\n]*@{name}\(.*?^}}", ir, re.MULTILINE | re.DOTALL)
    if not m:
        raise KeyError(f"no function @{name} in the module")
    return m.group(0)


def _block(body: str, label: str) -> str:
    """The instructions of the basic block ``label:`` in a printed function (up to the next label)."""
    m = re.search(rf"^{re.escape(label)}:.*?\n(.*?)(?=^[\w.]+:|^}})", body, re.MULTILINE | re.DOTALL)
    if not m:
        raise KeyError(f"no block {label} in the function")
    return m.group(1)


def _ops(body: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for op in _INSTR.findall(body):
        out[op] = out.get(op, 0) + 1
    return out


@claim("llvm.ssa-phi", question=Q, needs=["numba"],
       statement="LLVM IR 是 SSA：同一个 `%x` 定义两次，解析器直接拒绝（`{redefined_error}`）。手写成 clang -O0 形状的求和循环把 `s`、`i` "
                 "放在栈槽里，这份输入 IR 里有 {before.alloca} 个 `alloca`、{before.load} 个 `load`、{before.store} 个 `store`、{before.phi} 个 `phi`；"
                 "只跑 SROA 一个 pass 之后是 {after.alloca} 个 `alloca`、{after.load} 个 `load`、{after.store} 个 `store`，"
                 "循环头 `cond` 块里多了 {after.header_phi} 个 `phi`（整个函数 {after.phi} 个）：每个变量每次赋值成为一个新值，控制流汇合处用 `phi` 选来自哪条边的那个。",
       expect={"redefined_error": {"contains": "multiple definition of local value"},
               "before": {"alloca": 2, "load": 4, "store": 4, "phi": 0},
               "after": {"alloca": 0, "load": 0, "store": 0, "phi": 2, "header_phi": 2}})
def _(ctx):
    """范围：llvmlite 0.50 所带的 LLVM，手写 IR"""
    llvm, version = _llvm()
    try:
        llvm.parse_assembly(REDEFINED)
        error = ""
    except RuntimeError as exc:
        error = next((line.split("error: ", 1)[1] for line in str(exc).splitlines() if "error: " in line), str(exc))
    text = SUM_O0.replace("ATTRS", "")
    counts = {}
    for when, ir in (("before", text), ("after", _optimise(llvm, text, "sroa"))):
        body = _function(ir, "sum")
        ops = _ops(body)
        counts[when] = {k: ops.get(k, 0) for k in ("alloca", "load", "store", "phi")}
        if when == "after":
            counts[when]["header_phi"] = _ops(_block(body, "cond")).get("phi", 0)
    _note(ctx, llvm, version)
    return {"redefined_error": error, **counts}


@claim("llvm.o2-and-optnone", question=Q, needs=["numba"],
       statement="同一个求和函数过 LLVM 的 -O2 流水线：循环没了（回边 {o2_back_edges} 条，`br` 只剩 {o2_br} 条，`alloca` {o2_alloca} 个），"
                 "换成闭式 n(n-1)/2 的算术（{o2_mul} 个 `mul`），调用方 `sum(100)` 在编译期折成 `ret i32 {o2_sum100}`。"
                 "给它加上 `noinline optnone` 再跑同一条流水线：{optnone_alloca} 个 `alloca`、{optnone_load} 个 `load` 原样保留，"
                 "调用方只能留着 {optnone_calls} 个 `call`。只写 `optnone` 不写 `noinline`，校验器拒绝：`{optnone_alone_error}`。",
       expect={"o2_back_edges": 0, "o2_sum100": 4950, "o2_alloca": 0, "o2_mul": {">=": 1}, "o2_br": {"<=": 2},
               "optnone_alloca": 2, "optnone_load": 4, "optnone_calls": 1,
               "optnone_alone_error": {"contains": "requires 'noinline'"}})
def _(ctx):
    """范围：llvmlite 0.50 所带的 LLVM，默认 -O2 流水线，手写 IR"""
    llvm, version = _llvm()
    o2 = _optimise(llvm, SUM_O0.replace("ATTRS", ""))
    body = _function(o2, "sum")
    # a back edge: a branch to a block that appears earlier in the function (a loop)
    labels = re.findall(r"^(\w[\w.]*):", body, re.MULTILINE)
    back = 0
    for i, block in enumerate(re.split(r"^\w[\w.]*:.*$", body, flags=re.MULTILINE)[1:]):
        back += sum(1 for t in re.findall(r"label %([\w.]+)", block) if t in labels[:i + 1])
    caller = _function(o2, "sum100")
    folded = re.search(r"ret i32 (-?\d+)", caller)
    kept = _optimise(llvm, SUM_O0.replace("ATTRS", "noinline optnone"))
    try:
        llvm.parse_assembly(SUM_O0.replace("ATTRS", "optnone")).verify()
        alone = ""
    except RuntimeError as exc:
        alone = next((line.strip() for line in str(exc).splitlines() if "optnone" in line), str(exc))
    ops_kept = _ops(_function(kept, "sum"))
    ops = _ops(body)
    _note(ctx, llvm, version)
    return {**{f"o2_{k}": ops.get(k, 0) for k in ("alloca", "phi", "mul", "br")}, "o2_back_edges": back,
            "o2_sum100": int(folded.group(1)) if folded else None,
            "optnone_alloca": ops_kept.get("alloca", 0), "optnone_load": ops_kept.get("load", 0),
            "optnone_calls": _ops(_function(kept, "sum100")).get("call", 0), "optnone_alone_error": alone}


@claim("llvm.gep-inbounds", question=Q, needs=["numba"],
       statement="`getelementptr` 只算地址、不访问内存：对空指针取结构体 `%S`（`i8`、`i32`、`i64` 三个字段）第 3 个字段的地址，-O2 折成常量 "
                 "{field2_offset}（字节偏移，含对齐填充）。加不加 `inbounds` 决定优化器能假设什么：`p + i > p`（无符号指针比较）"
                 "有 `inbounds` 时折成 `{inbounds.after}`，没有时保持 `{plain.after}`；非空 `p` 偏移后是否为空，有 `inbounds` 时直接 "
                 "`{inbounds.is_null}`，没有时仍是 `{plain.is_null}`。`inbounds` 承诺结果不越出原对象、地址计算不回绕，违反时结果是 poison。",
       expect={"field2_offset": 8, "inbounds": {"after": "icmp sgt i64 %i, 0", "is_null": "ret i1 false"},
               "plain": {"after": "icmp ugt ptr %q, %p", "is_null": "icmp eq ptr %q, null"}})
def _(ctx):
    """范围：llvmlite 0.50 的 LLVM，-O2，x86-64 数据布局"""
    llvm, version = _llvm()
    out = {}
    for name, inb in (("inbounds", "inbounds"), ("plain", "")):
        ir = _optimise(llvm, GEP.replace("INB", inb))
        lines = {f: [line.split(" = ", 1)[-1].strip() for line in _function(ir, f).splitlines()[1:-1]]
                 for f in ("after", "is_null", "field2_offset")}
        out[name] = {"after": next((x for x in lines["after"] if x.startswith("icmp")), lines["after"][0]),
                     "is_null": next((x for x in lines["is_null"] if x.startswith("icmp")), lines["is_null"][-1])}
        m = re.search(r"ret i64 (\d+)", "\n".join(lines["field2_offset"]))
        out["field2_offset"] = int(m.group(1)) if m else None
    _note(ctx, llvm, version)
    return out
