"""What g++ does with a function, read from its machine code: inlining, volatile, an asm barrier, the
``inline`` keyword, and how a call reaches a shared library (PLT/GOT, the System V AMD64 calling convention).

Every build goes through the project's g++ builder (verify.cxx); objects and programs are read with objdump
(AT&T syntax), nm and readelf. The sources beside this file say what each pair of functions differs in.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from verify import cxx
from verify.claim import claim

Q = "llvm-and-compiler-stack"
STD = ("-std=c++17", "-Wall", "-Wextra")
_FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
_INSN = re.compile(r"^\s+[0-9a-f]+:\s+(.*)$")
_PADDING = ("nop", "xchg   %ax,%ax", "data16", "cs nop")


def _build(ctx, sources: tuple[str, ...], *steps: list[str]) -> Path:
    """The build folder after ``steps`` (g++'s arguments) ran over ``sources``; the builder's cache is the claim's."""
    folder = ctx.snippet_dir()
    return cxx.build_steps([folder / s for s in sources], [list(s) for s in steps], cache=ctx.workdir / "cxx")


def _tool(*cmd: str, cwd: Path) -> str:
    return subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=120, check=True).stdout


def _functions(path: Path, section: str = ".text") -> dict[str, list[str]]:
    """Each function's instructions (mnemonic and operands, padding left out) from ``objdump -d``."""
    out: dict[str, list[str]] = {}
    current = None
    for line in _tool("objdump", "-d", "--no-show-raw-insn", "-j", section, path.name, cwd=path.parent).splitlines():
        if m := _FUNC.match(line):
            current = out.setdefault(m.group(1), [])
        elif (m := _INSN.match(line)) and current is not None and not m.group(1).startswith(_PADDING):
            current.append(re.sub(r"\s+", " ", re.sub(r"#\s*[0-9a-f]+\s*", "# ", m.group(1))).strip())
    return out


def _count(insns: list[str], pattern: str) -> int:
    return sum(1 for i in insns if re.search(pattern, i))


def _mnemonics(insns: list[str]) -> list[str]:
    return [i.split()[0] for i in insns]


# ---------------------------------------------------------------------------------------------------------
# Stopping the optimiser: barriers.cpp at -O2


def _barriers(ctx) -> dict[str, list[str]]:
    return _functions(_build(ctx, ("barriers.cpp",), [*STD, "-O2", "-c", "barriers.cpp", "-o", "barriers.o"])
                      / "barriers.o")


@claim("opt.noinline", question=Q, needs=["g++"],
       statement="g++ -O2 下，普通函数 `add_plain` 被内联进调用方，调用方里 {use_plain_calls} 条 `call`；标了 "
                 "`noinline` 的同样函数留下 {use_noinline_calls} 条。但 `noinline` 只管“不展开”：调用方连着调两次 "
                 "`noinline` 的 `sq(x)`，g++ 仍看得出它不读写内存、结果只取决于参数，合并成 {twice_noinline_calls} 次调用；"
                 "换成 `noipa`（不做任何跨函数分析）才是 {twice_noipa_calls} 次。",
       expect={"use_plain_calls": 0, "use_noinline_calls": 1, "twice_noinline_calls": 1, "twice_noipa_calls": 2})
def _(ctx):
    """范围：g++ 12，-O2，x86-64"""
    f = _barriers(ctx)
    return {f"{name}_calls": _count(f[name], r"^call ") for name in
            ("use_plain", "use_noinline", "twice_noinline", "twice_noipa")}


@claim("opt.volatile-keeps-accesses", question=Q, needs=["g++"],
       statement="`volatile` 保住的是每一次访问：`*p + *p + *p` 在 -O2 下读内存 {read3_loads} 次，`p` 换成 `volatile int*` "
                 "读 {read3_volatile_loads} 次。它不让整个函数停止优化：同一个函数里先用普通变量把 0..99 累加、再加上一次 volatile 读，"
                 "编译结果是 {beside_insns} 条指令，循环折成常量 {beside_constant}（跳转 {beside_jumps} 条），volatile 读仍是 "
                 "{beside_loads} 次。",
       expect={"read3_loads": 1, "read3_volatile_loads": 3, "beside_constant": 4950, "beside_jumps": 0,
               "beside_loads": 1, "beside_insns": {"<=": 4}})
def _(ctx):
    """范围：g++ 12，-O2，x86-64"""
    f = _barriers(ctx)
    beside = f["sum_beside_volatile"]
    consts = [int(c, 16) for i in beside for c in re.findall(r"\$0x([0-9a-f]+)", i)]
    return {"read3_loads": _count(f["read3"], r"\(%rdi\)"), "read3_volatile_loads": _count(f["read3_volatile"], r"\(%rdi\)"),
            "beside_insns": len(beside), "beside_constant": max(consts, default=None),
            "beside_jumps": _count(beside, r"^j"), "beside_loads": _count(beside, r"\(%rdi\)")}


@claim("opt.asm-barrier", question=Q, needs=["g++"],
       statement="带 `\"memory\"` clobber 的空内联汇编是编译器屏障：`g = 1; g = 2;` 在 -O2 下只剩 {store_twice_stores} 次写；中间插一句 "
                 "`asm volatile(\"\" ::: \"memory\")`（告诉编译器它可能读写任何内存），两次写都在（{store_barrier_stores} 次）。"
                 "结果没人用的循环 `r = i * i` 整个删掉，函数只剩 {discard_insns} 条指令；把 `r` 交给 `asm volatile(\"\" : : \"r\"(r))`，"
                 "循环（{keep_jumps} 条跳转）和 {keep_imul} 条 `imul` 都留下。Google Benchmark 的 `DoNotOptimize` 也是这样一条空 `asm`"
                 "（把值作为输入，并带 `\"memory\"` clobber；本页没有运行该库）。",
       expect={"store_twice_stores": 1, "store_barrier_stores": 2, "discard_insns": 1, "keep_imul": 1,
               "keep_jumps": {">=": 1}})
def _(ctx):
    """范围：g++ 12，-O2，x86-64"""
    f = _barriers(ctx)
    return {"store_twice_stores": _count(f["store_twice"], r"^mov\w* .*,0x0\(%rip\)"),
            "store_barrier_stores": _count(f["store_twice_barrier"], r"^mov\w* .*,0x0\(%rip\)"),
            "discard_insns": len(f["discard"]), "discard": f["discard"], "keep_imul": _count(f["keep"], r"^imul"),
            "keep_jumps": _count(f["keep"], r"^j")}


@claim("opt.optnone-gcc", question=Q, needs=["g++"],
       statement="`optnone` 是 clang 的属性：g++ 只给一个警告（`{warning}`），-O2 下标了它的求和函数和没标的指令助记符逐条"
                 "{optnone_same:?相同|不同}（{optnone_insns} 条指令，访问栈 {optnone_stack} 次）。g++ 要单个函数不优化，写 "
                 "`__attribute__((optimize(\"O0\")))`：同一个函数变成 {o0_insns} 条指令，`n`、`s`、`i` 各占一个栈槽（"
                 "{o0_slots} 个不同的栈地址），访问栈 {o0_stack} 次。",
       expect={"warning": {"contains": "attribute directive ignored"}, "optnone_same": True, "optnone_stack": 0,
               "o0_slots": 3, "o0_stack": {">=": 4}})
def _(ctx):
    """范围：g++ 12，-O2，x86-64"""
    f = _barriers(ctx)
    try:
        _build(ctx, ("barriers.cpp",), [*STD, "-O2", "-Werror=attributes", "-c", "barriers.cpp", "-o", "strict.o"])
        warning = ""
    except cxx.BuildError as exc:
        warning = next((line.split("error: ", 1)[1] for line in exc.output.splitlines() if "optnone" in line
                        and "error: " in line), exc.output[:200])
    warning = re.sub(r"\s*\[-W[\w=-]+\]$", "", warning).replace("‘", "'").replace("’", "'")
    stack = r"\(%[re]bp\)|\(%rsp\)"
    return {"warning": warning, "optnone_same": _mnemonics(f["sum_optnone"]) == _mnemonics(f["sum_plain"]),
            "optnone_insns": len(f["sum_optnone"]), "optnone_stack": _count(f["sum_optnone"], stack),
            "o0_insns": len(f["sum_o0"]), "o0_stack": _count(f["sum_o0"], stack),
            "o0_slots": len({m for i in f["sum_o0"] for m in re.findall(r"-?0x[0-9a-f]+\(%rbp\)", i)})}


# ---------------------------------------------------------------------------------------------------------
# volatile is not atomic: the instructions (two optimisation levels) and ThreadSanitizer


@claim("volatile.not-atomic-asm", question=Q, needs=["g++"],
       statement="`volatile int` 自增在 -O0 和 -O2 下都是分开的读、加、写：`lock` 前缀 -O0 {volatile_lock_O0} 个、-O2 {volatile_lock_O2} 个"
                 "（访问内存 -O0 {volatile_mem_O0} 次、-O2 {volatile_mem_O2} 次）；`std::atomic<int>::fetch_add` 两级都是一条带 `lock` "
                 "的指令（-O0 `{atomic_O0}`，-O2 `{atomic_O2}`）。两个线程同时做读、加、写，中间可以插进对方的写。",
       expect={"volatile_lock_O0": 0, "volatile_lock_O2": 0, "atomic_lock_O0": 1, "atomic_lock_O2": 1,
               "volatile_mem_O0": 2, "volatile_mem_O2": 2, "atomic_O0": {"contains": "lock "},
               "atomic_O2": {"contains": "lock add"}})
def _(ctx):
    """范围：g++ 12，x86-64，-O0 与 -O2"""
    out = {}
    for level in ("-O0", "-O2"):
        obj = _build(ctx, ("counter.cpp",), [*STD, level, "-c", "counter.cpp", "-o", "counter.o"]) / "counter.o"
        f = _functions(obj)
        tail = level.replace("-", "_")
        out |= {f"volatile_lock{tail}": _count(f["inc_volatile"], r"^lock"),
                f"atomic_lock{tail}": _count(f["inc_atomic"], r"^lock"),
                f"volatile_mem{tail}": _count(f["inc_volatile"], r"\(%rip\)"),
                f"atomic{tail}": next((i.split(" #")[0] for i in f["inc_atomic"] if i.startswith("lock")), "")}
    return out


def _uncap_data():
    """ThreadSanitizer maps terabytes of shadow memory; the worker's RLIMIT_DATA would refuse it."""
    import resource  # noqa: PLC0415

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


@claim("volatile.tsan-race", question=Q, needs=["g++"], timeout=180,
       statement="换一种方法再查一遍：同一个程序用 ThreadSanitizer 编译，两个线程各把计数器加 {per_thread} 次。`volatile int` 版"
                 "{volatile_race:?报告 data race|没有报告}（退出码 {volatile_rc}），`std::atomic<int>` 版{atomic_race:?报告 data race|没有报告}"
                 "（退出码 {atomic_rc}），计数正好 {atomic_count}。volatile 不提供原子性，也不建立线程间的先后关系。",
       expect={"volatile_race": True, "atomic_race": False, "atomic_rc": 0, "atomic_count": 40000, "volatile_rc": 66})
def _(ctx):
    """范围：g++ 12 的 ThreadSanitizer，x86-64 Linux"""
    prog = _build(ctx, ("counter.cpp",), [*STD, *cxx.TSAN, "-pthread", "counter.cpp", "-o", "counter_tsan"]) / "counter_tsan"
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=0 exitcode=66")
    out = {}
    for name, args in (("volatile", []), ("atomic", ["atomic"])):
        done = subprocess.run([str(prog), *args], cwd=ctx.workdir, capture_output=True, text=True, timeout=120, env=env,
                              preexec_fn=_uncap_data)
        values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        out |= {f"{name}_race": "ThreadSanitizer: data race" in done.stderr, f"{name}_rc": done.returncode,
                f"{name}_count": int(values.get("count", -1))}
        out["per_thread"] = int(values.get("expected", 0)) // 2
    return out


# ---------------------------------------------------------------------------------------------------------
# The inline keyword: a hint to the cost model, and linkage


def _symbols(obj: Path) -> dict[str, str]:
    """Defined and undefined symbols by name, as ``nm`` types them (T strong, W weak, U undefined)."""
    return {line.split()[-1]: line.split()[-2] for line in _tool("nm", obj.name, cwd=obj.parent).splitlines()}


def _calls(ctx, level: str, keyword: bool) -> dict:
    flags = [*STD, level, *(["-DWITH_INLINE"] if keyword else []), "-c", "inline_a.cpp", "-o", "a.o"]
    obj = _build(ctx, ("inline.h", "inline_a.cpp"), flags) / "a.o"
    f = _functions(obj)
    return {"calls": _count(f["_Z6from_ai"], r"^call "),
            "medium_calls": _count(f["_Z12medium_twicei"], r"^call "),
            "helper_symbol": _symbols(obj).get("_Z6helperi", "-")}


@claim("inline.keyword-vs-level", question=Q, needs=["g++"],
       statement="`inline` 关键字不强制内联：一行的 `helper`，调用方里的 `call` 带 `inline` 时 -O0 {inline_O0.calls} 条、-O2 "
                 "{inline_O2.calls} 条；不带时 -O0 {plain_O0.calls} 条、-O2 {plain_O2.calls} 条，只随优化级别变。但它是代价估计里的"
                 "一个提示：十几步算术的 `medium` 被调用两次，-O2 下不带 `inline` 留着 {plain_O2.medium_calls} 条 `call`，带 `inline` "
                 "是 {inline_O2.medium_calls} 条（g++ 给声明了 `inline` 的函数更高的展开上限）；-O0 两种写法都是 "
                 "{inline_O0.medium_calls} 条。它确定改变的是链接：-O0 下带 `inline` 的 `helper` 在目标文件里是弱符号 "
                 "`{inline_O0.helper_symbol}`，不带是强符号 `{plain_O0.helper_symbol}`。",
       expect={"inline_O0": {"calls": 1, "medium_calls": 2, "helper_symbol": "W"},
               "inline_O2": {"calls": 0, "medium_calls": 0, "helper_symbol": "-"},
               "plain_O0": {"calls": 1, "medium_calls": 2, "helper_symbol": "T"},
               "plain_O2": {"calls": 0, "medium_calls": 2, "helper_symbol": "T"}})
def _(ctx):
    """范围：g++ 12，x86-64，-O0 与 -O2"""
    return {f"{'inline' if kw else 'plain'}{level.replace('-', '_')}": _calls(ctx, level, kw)
            for kw in (True, False) for level in ("-O0", "-O2")}


@claim("inline.odr-link", question=Q, needs=["g++"],
       statement="两个 .cpp 都包含定义了 `helper` 的头文件，都在 -O0 下编译（`helper` 不被展开，每个目标文件都得留一份）："
                 "不带 `inline` 链接失败（`{plain_error}`）；带 `inline` 时两个目标文件各有一份弱符号 `{a_sym}`/`{b_sym}`，"
                 "{inline_links:?链接成功|也失败}，程序里只剩 {prog_helpers} 份 `helper`，退出码 {inline_rc}。`inline` 允许同一个函数"
                 "在多个翻译单元里各有一份相同的定义（ODR 的例外），链接器只留一份。",
       expect={"plain_error": {"contains": "multiple definition of `helper(int)'"}, "a_sym": "W", "b_sym": "W",
               "inline_links": True, "prog_helpers": 1, "inline_rc": 0})
def _(ctx):
    """范围：g++ 12 -O0 与 GNU ld，x86-64 Linux"""
    sources = ("inline.h", "inline_a.cpp", "inline_b.cpp")
    try:
        _build(ctx, sources, [*STD, "-O0", "inline_a.cpp", "inline_b.cpp", "-o", "plain"])
        plain_error = ""
    except cxx.BuildError as exc:
        plain_error = next((line.split(": ", 1)[1] for line in exc.output.splitlines() if "multiple definition" in line),
                           exc.output[:200])
        plain_error = re.sub(r";.*$", "", plain_error)
    inl = [*STD, "-O0", "-DWITH_INLINE"]
    steps = ([*inl, "-c", "inline_a.cpp", "-o", "a.o"], [*inl, "-c", "inline_b.cpp", "-o", "b.o"])
    objs = _build(ctx, sources, *steps)
    out = {"plain_error": plain_error, "a_sym": _symbols(objs / "a.o").get("_Z6helperi", "-"),
           "b_sym": _symbols(objs / "b.o").get("_Z6helperi", "-")}
    try:
        prog = _build(ctx, sources, *steps, [*inl, "a.o", "b.o", "-o", "inl"]) / "inl"
    except cxx.BuildError:
        return out | {"inline_links": False, "prog_helpers": None, "inline_rc": None}
    helpers = sum(1 for line in _tool("nm", prog.name, cwd=prog.parent).splitlines() if line.endswith(" _Z6helperi"))
    rc = subprocess.run([str(prog)], cwd=ctx.workdir, capture_output=True, timeout=60).returncode
    return out | {"inline_links": True, "prog_helpers": helpers, "inline_rc": rc}


# ---------------------------------------------------------------------------------------------------------
# A call into a shared library: lib.cpp as libdemo.so, caller.cpp linked against it


LIB = ("lib.cpp", "caller.cpp")
PIC_LIB = [*STD, "-O2", "-fPIC", "-shared", "lib.cpp", "-o", "libdemo.so"]


def _linked(ctx, *caller_flags: str) -> Path:
    return _build(ctx, LIB, PIC_LIB, [*STD, "-O2", *caller_flags, "caller.cpp", "-L.", "-ldemo", "-Wl,-rpath,$ORIGIN",
                                      "-o", "caller"])


def _relocs(path: Path) -> dict[str, tuple[int, str]]:
    """Dynamic relocations by symbol: (the address they patch, their type)."""
    out = {}
    for line in _tool("readelf", "-rW", path.name, cwd=path.parent).splitlines():
        p = line.split()
        if len(p) >= 5 and re.fullmatch(r"[0-9a-f]{8,}", p[0]) and p[2].startswith("R_X86_64"):
            out[p[4]] = (int(p[0], 16), p[2])
    return out


def _got_word(path: Path, address: int) -> int:
    """The 8 bytes the file holds at ``address`` (a GOT slot), before the loader touches them."""
    for line in _tool("readelf", "-SW", path.name, cwd=path.parent).splitlines():
        m = re.search(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(1) != "NULL":
            lo, offset, size = (int(m.group(i), 16) for i in (2, 3, 4))
            if lo <= address < lo + size:
                with open(path, "rb") as fh:
                    fh.seek(offset + address - lo)
                    return int.from_bytes(fh.read(8), "little")
    raise KeyError(hex(address))


def _run(prog: Path) -> dict[str, str]:
    done = subprocess.run([str(prog)], cwd=prog.parent, capture_output=True, text=True, timeout=60, check=True)
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


@claim("plt.lazy-call", question=Q, needs=["g++"],
       statement="可执行文件调用共享库里的 `arg2`：`main` 里是 `{call}`，一次直接调用，目标是本文件 `.plt` 里的桩；桩的第一条 "
                 "`{stub_first}` 跳到 GOT 里的一格，readelf 看到这格上的重定位是 `{reloc}`（{reloc_matches:?正是桩读的那一格|另一格}）。"
                 "文件里这格的初值{initial_points_back:?正指回|没有指回}桩里紧跟 `jmp` 的那条 `{stub_second}`，动态段{bind_now:?有|没有} "
                 "`BIND_NOW`：这是延迟绑定，按 glibc 动态链接器的做法，第一次调用经这条 `push` 进入解析函数，把真地址写回这格，"
                 "之后桩直接跳过去。程序输出 `arg2={arg2}`。",
       expect={"call": {"contains": "<arg2@plt>"}, "reloc": "R_X86_64_JUMP_SLOT", "reloc_matches": True,
               "initial_points_back": True, "stub_second": {"contains": "push"}, "bind_now": False, "arg2": "20"})
def _(ctx):
    """范围：g++ 12、GNU ld、glibc，默认链接选项"""
    prog = _linked(ctx) / "caller"
    main = _functions(prog)["main"]
    plt = _functions(prog, ".plt")
    stub_name = "arg2@plt"
    stub = plt[stub_name]
    slot = int(re.search(r"\*0x([0-9a-f]+)\(%rip\)", stub[0]).group(1), 16)
    stub_addr = next(int(line.split()[0], 16) for line in
                     _tool("objdump", "-d", "-j", ".plt", prog.name, cwd=prog.parent).splitlines()
                     if line.endswith(f"<{stub_name}>:"))
    insn_len = 6  # jmp *disp32(%rip): ff 25 + 4 bytes
    address, kind = _relocs(prog)["arg2"]
    return {"call": next(i for i in main if "arg2" in i), "stub_first": stub[0], "stub_second": stub[1],
            "reloc": kind, "reloc_matches": address == stub_addr + insn_len + slot,
            "initial_points_back": _got_word(prog, address) == stub_addr + insn_len,
            "bind_now": bool(re.search(r"\bBIND_NOW\b|Flags:.*\bNOW\b", _tool("readelf", "-dW", prog.name, cwd=prog.parent))),
            **_run(prog)}


@claim("plt.no-plt", question=Q, needs=["g++"],
       statement="调用方加 `-fno-plt` 编译：`main` 里变成 `{call}`，直接从 GOT 取地址间接调用，`arg2@plt` 的桩{has_stub:?还在|不见了}；"
                 "那一格的重定位换成 `{reloc}`，由加载器在程序启动时就填好（没有延迟绑定）。输出仍是 `arg2={arg2}`。",
       expect={"call": {"contains": "call *"}, "has_stub": False, "reloc": "R_X86_64_GLOB_DAT", "arg2": "20"})
def _(ctx):
    """范围：g++ 12 与 GNU ld，x86-64 Linux"""
    prog = _linked(ctx, "-fno-plt") / "caller"
    main = _functions(prog)["main"]
    text = _tool("objdump", "-d", prog.name, cwd=prog.parent)
    return {"call": next(i for i in main if "arg2" in i), "has_stub": "<arg2@plt>:" in text,
            "reloc": _relocs(prog)["arg2"][1], **_run(prog)}


@claim("abi.sysv-args", question=Q, needs=["g++"],
       statement="参数怎么传，看共享库里 `argN`（返回第 N 个整数参数）的函数体：依次是 {sources_text}。前 6 个整数参数走 "
                 "`rdi`、`rsi`、`rdx`、`rcx`、`r8`、`r9`，第 7 个在栈上（`call` 压入返回地址之后的 `8(%rsp)`），返回值{returns_in_rax:?都放进|不全在} `rax`；"
                 "调用方 `main` 用 `{caller_push}` 把第 7 个参数 70 压栈。",
       expect={"sources": ["%rdi", "%rsi", "%rdx", "%rcx", "%r8", "%r9", "0x8(%rsp)"], "returns_in_rax": True,
               "caller_push": "push $0x46"})
def _(ctx):
    """范围：System V AMD64，g++ 12 -O2，整数参数"""
    folder = _linked(ctx)
    lib = _functions(folder / "libdemo.so")
    sources, rax = [], True
    for n in range(1, 8):
        body = lib[f"arg{n}"]
        m = re.fullmatch(r"mov (\S+),%rax", body[0])
        sources.append(m.group(1) if m else body[0])
        rax = rax and bool(m) and body[1] == "ret"
    main = _functions(folder / "caller")["main"]
    return {"sources": sources, "sources_text": "、".join(sources), "returns_in_rax": rax,
            "caller_push": next((i for i in main if i.startswith("push $")), "")}


@claim("plt.interposition", question=Q, needs=["g++"],
       statement="同一个 .so 里，导出函数 `outer` 调用导出函数 `inner`：默认 `-fPIC` 下也走 PLT（`outer` 里 {default_plt_calls} 条 "
                 "`call …@plt`，`inner` {default_inlined:?被内联|没被内联}），因为先加载的另一个库可能定义同名的 `inner` 把它换掉"
                 "（符号插入，g++ 默认尊重它）；加 `-fno-semantic-interposition` 后 `outer` 里 {nosi_calls} 条 `call`，`inner` 被直接内联；"
                 "用 `-fvisibility=hidden` 让两者都不导出，也是 {hidden_calls} 条。",
       expect={"default_plt_calls": 1, "default_inlined": False, "nosi_calls": 0, "hidden_calls": 0})
def _(ctx):
    """范围：g++ 12，-O2 -fPIC，x86-64 Linux"""
    default = _functions(_build(ctx, ("lib.cpp",), PIC_LIB) / "libdemo.so")["outer"]
    other = {}
    for name, flag in (("nosi", "-fno-semantic-interposition"), ("hidden", "-fvisibility=hidden")):
        lib = _build(ctx, ("lib.cpp",), [*STD, "-O2", "-fPIC", flag, "-shared", "lib.cpp", "-o", "libdemo.so"]) / "libdemo.so"
        other[f"{name}_calls"] = _count(_functions(lib)["outer"], r"^call ")
    return {"default_plt_calls": _count(default, r"^call .*@plt>"), "default_inlined": not _count(default, r"^call "),
            **other}
