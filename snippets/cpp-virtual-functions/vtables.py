"""Virtual functions under g++ (Itanium C++ ABI, x86-64 Linux): the vtable a class gets, the vptr an object
holds, what constructors do to it, what -O2 makes of a virtual call, and the names the linker sees.

One program (main.cpp + key.cpp, -O2, with -fdump-lang-class) is built once per source, flags and compiler by
the project's g++ builder (verify.cxx) and read by every claim: its output, the class dump, nm, objdump,
readelf. Beside it: key.cpp again without speculative devirtualisation, a small ASan build (delete_nv.cpp), and
two commands that must fail, kept by the builder too: a file g++ must refuse (errors.cpp) and a link that
cannot resolve a vtable (missing_key.cpp).
"""

from __future__ import annotations

import functools
import re
import signal
import subprocess
from pathlib import Path

from verify import cxx
from verify.claim import claim

Q = "cpp-virtual-functions"
BUILT = ("vf.h", "main.cpp", "key.cpp", "delete_nv.cpp")  # errors.cpp and missing_key.cpp must fail
STD = "-std=c++17"


def _sh(*cmd: str, cwd: Path) -> str:
    done = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


@functools.cache
def _build(folder: str) -> Path:
    """The objects, class dumps and programs, built once per source, flags and compiler (verify.cxx)."""
    here = Path(folder)
    return cxx.build_steps({n: here / n for n in BUILT}, [
        [STD, "-O2", "-fdump-lang-class", "-c", "main.cpp", "key.cpp"],
        [STD, "-O2", "-fno-devirtualize-speculatively", "-c", "key.cpp", "-o", "key_nospec.o"],
        ["main.o", "key.o", "-o", "prog"],
        [STD, "-O1", "-g", "-fsanitize=address", "delete_nv.cpp", "-o", "asan"],
    ])


def _refused(ctx, source: str, *flags: str) -> cxx.Ran:
    """How g++ ends on a file it must refuse (kept by verify.cxx like a build)."""
    return cxx.outcome({source: ctx.snippet_dir() / source}, [STD, *flags, source])


def _no_core_dump():
    import resource  # noqa: PLC0415

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # `prog pure` ends in abort()


def _uncap_data():
    """ASan reserves terabytes of address space for its shadow memory; the worker's RLIMIT_DATA would refuse it."""
    import resource  # noqa: PLC0415

    _no_core_dump()
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


def _run(build: Path, *args: str, preexec=_no_core_dump) -> subprocess.CompletedProcess:
    # the worker's own folder is the current one: a program never runs inside the build cache
    return subprocess.run([str(build / args[0]), *args[1:]], capture_output=True, text=True, timeout=60,
                          preexec_fn=preexec)


def _kv(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _output(ctx) -> dict[str, str]:
    build = _build(str(ctx.snippet_dir()))
    done = _run(build, "prog")
    if done.returncode != 0:
        raise RuntimeError(f"prog exited with {done.returncode}: {done.stderr[-500:]}")
    return _kv(done.stdout)


def _vtables(ctx, tu: str = "main.cpp") -> dict[str, dict]:
    """``Vtable for X`` blocks of a -fdump-lang-class dump: entries by offset, and the vptr line of ``Class X``."""
    build = _build(str(ctx.snippet_dir()))
    dump = next(build.glob(f"{tu}.*.class")).read_text(encoding="utf-8")
    out: dict[str, dict] = {}
    for m in re.finditer(r"^Vtable for (\S+)\n\S+: (\d+) entries\n((?:\d+ .*\n)+)", dump, re.M):
        entries = [line.split(None, 1) for line in m.group(3).splitlines()]
        out[m.group(1)] = {"n": int(m.group(2)), "entries": [(int(o), e.strip()) for o, e in entries]}
    for m in re.finditer(r"^Class (\S+)\n(?:.*\n)*?\s+vptr=\(\(& (\S+)\) \+ (\d+)\)", dump, re.M):
        if m.group(1) in out:
            out[m.group(1)]["vptr"] = f"{m.group(2).split('::')[-1]}+{m.group(3)}"
    return out


def _short(entry: str) -> str:
    """``(int (*)(...))Derived::name`` -> ``Derived::name``; ``(int (*)(...))(& _ZTI7Derived)`` -> ``&_ZTI7Derived``."""
    entry = entry.replace("(int (*)(...))", "")
    return entry.replace("(& ", "&").rstrip(")") if entry.startswith("(& ") else entry


def _nm(build: Path, obj: str, *flags: str) -> list[list[str]]:
    return [line.split(None, 3 if "-S" in flags else 2) for line in _sh("nm", *flags, obj, cwd=build).splitlines()]


def _kind(rows: list[list[str]], name: str) -> str:
    """nm's letter for symbol ``name`` (U undefined, V weak object, T text...); '-' if absent."""
    return next((r[-2] for r in rows if r[-1] == name), "-")


def _disasm(build: Path, obj: str, symbol: str) -> list[str]:
    """The instructions of one function, as objdump -d writes them (AT&T syntax), without addresses."""
    text = _sh("objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}", obj, cwd=build)
    body = text.split(f"<{symbol}>:\n", 1)[1].split("\n\n", 1)[0]
    return [re.sub(r"\s+", " ", line.split("\t", 1)[1]).strip() for line in body.splitlines() if "\t" in line]


def _indirect(insns: list[str]) -> list[str]:
    return [i for i in insns if re.match(r"(call|jmp)\S* \*", i)]


@claim("vf.dump-layout", question=Q, needs=["g++"], timeout=180,
       statement="`g++ -fdump-lang-class` 打出的 `Vtable for Derived` 有 {derived_n} 项、每项一个指针：偏移 0 是 "
                 "offset-to-top（{derived.0}），8 是 typeinfo 指针（`{derived.8}`），从 16 起是虚函数："
                 "`{derived.16}`、`{derived.24}`（同一个析构函数的两个入口：只析构，和析构后再 `operator delete`）、"
                 "`{derived.32}`、`{derived.40}`。`Base` 的表槽位顺序相同（`{base.32}`、`{base.40}`），"
                 "重写只是换掉同一格里的地址；`Leaf` 没有重写 `name`，那一格仍是 `{leaf.32}`。"
                 "`Class Derived` 一段写着对象里的 vptr 指向 `{derived_vptr}`：跳过前两格，指向第一个虚函数。",
       expect={"derived_n": 6, "derived": {"0": "0", "8": "&_ZTI7Derived", "16": "Derived::~Derived",
                                           "24": "Derived::~Derived", "32": "Derived::name", "40": "Derived::value"},
               "base": {"0": "0", "8": "&_ZTI4Base", "16": "Base::~Base", "24": "Base::~Base", "32": "Base::name",
                        "40": "Base::value"},
               "leaf": {"0": "0", "8": "&_ZTI4Leaf", "16": "Leaf::~Leaf", "24": "Leaf::~Leaf", "32": "Base::name",
                        "40": "Leaf::value"},
               "derived_vptr": "_ZTV7Derived+16", "same_slot_order": True})
def _(ctx):
    vt = _vtables(ctx)
    rows = {cls: {str(o): _short(e) for o, e in vt[cls]["entries"]} for cls in ("Base", "Derived", "Leaf")}
    def slots(cls):  # the virtual functions by name, a destructor as "~"
        return ["~" if e.split("::")[-1].startswith("~") else e.split("::")[-1] for e in list(rows[cls].values())[2:]]

    same = slots("Base") == slots("Derived") == slots("Leaf")
    return {"derived_n": vt["Derived"]["n"], "derived": rows["Derived"], "base": rows["Base"], "leaf": rows["Leaf"],
            "derived_vptr": vt["Derived"]["vptr"], "same_slot_order": same}


@claim("vf.one-per-class", question=Q, needs=["g++"], timeout=180,
       statement="虚表一个类一份，对象里只有指向它的 vptr：同样一个 `long` 成员，`Plain` 是 {plain:bytes}，有虚函数的 "
                 "`Poly` 是 {poly:bytes}，多出的正好是一个指针；两个 `Derived` 对象的 vptr {two_same:?相同|不同}，"
                 "`Base` 对象的和它们{base_same:?相同|不同}。链接好的程序里 `vtable for Derived` 只有 {symbols} 个符号，"
                 "{size:bytes}，即上面那 {entries} 项。",
       expect={"poly_minus_plain": 8, "two_same": True, "base_same": False, "symbols": 1, "size": 48})
def _(ctx):
    v = _output(ctx)
    build = _build(str(ctx.snippet_dir()))
    rows = [r for r in _nm(build, "prog", "-S") if len(r) == 4 and r[3] == "_ZTV7Derived"]
    return {"plain": int(v["sizeof.plain"]), "poly": int(v["sizeof.poly"]),
            "poly_minus_plain": int(v["sizeof.poly"]) - int(v["sizeof.plain"]),
            "two_same": v["same_vptr.two_derived"] == "1", "base_same": v["same_vptr.base_derived"] == "1",
            "symbols": len(rows), "size": int(rows[0][1], 16) if rows else 0, "entries": _vtables(ctx)["Derived"]["n"]}


@claim("vf.key-function", question=Q, needs=["g++"], timeout=180,
       statement="虚表在哪个翻译单元里生成，由 key function（类里第一个不是 inline、也不是纯虚的虚函数）决定："
                 "`Keyed::key()` 定义在 key.cpp，`nm` 在 key.o 里看到 `vtable for Keyed` 的定义（类型 {keyed.key}），"
                 "main.o 虽然构造了 `Keyed`，对它只有一个未定义引用（{keyed.main}）；`Base`、`Derived` 也一样"
                 "（main.o 里是 {base_main}、{derived_main}）。`Inline` 的虚函数全是 inline、没有 key function，"
                 "两个 .o 各生成一份（{inline.main}、{inline.key}，弱符号），链接器只留一份，两个文件里建出的对象的 vptr "
                 "{inline_same:?相同|不同}。",
       expect={"keyed": {"main": "U", "key": "V"}, "base_main": "U", "derived_main": "U",
               "inline": {"main": "V", "key": "V"}, "inline_same": True, "key_defines_base": "V"})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    main, key = _nm(build, "main.o"), _nm(build, "key.o")
    v = _output(ctx)
    return {"keyed": {"main": _kind(main, "_ZTV5Keyed"), "key": _kind(key, "_ZTV5Keyed")},
            "base_main": _kind(main, "_ZTV4Base"), "derived_main": _kind(main, "_ZTV7Derived"),
            "key_defines_base": _kind(key, "_ZTV4Base"),
            "inline": {"main": _kind(main, "_ZTV6Inline"), "key": _kind(key, "_ZTV6Inline")},
            "inline_same": v["keyed_inline_same_vptr"] == "1"}


@claim("vf.readonly", question=Q, needs=["g++"], timeout=180,
       statement="虚表是编译器写进目标文件的静态数据，不是运行时造的：`Derived` 的虚表在 `{section}` 节（"
                 "位置无关的可执行文件里，含指针的只读数据放在这里），它{in_relro:?落在|不在} `GNU_RELRO` 段里；"
                 "程序运行时从 `/proc/self/maps` 查 vptr 所指的页，权限是 `{vtable_perms}`，代码页是 `{code_perms}`，"
                 "可写的全局变量是 `{global_perms}`。",
       expect={"section": ".data.rel.ro", "in_relro": True, "vtable_perms": "r--p", "code_perms": "r-xp",
               "global_perms": "rw-p"})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    v = _output(ctx)
    addr = next(int(r[0], 16) for r in _nm(build, "prog") if r[-1] == "_ZTV7Derived")
    section = "?"
    for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", _sh("readelf", "-SW", "prog",
                                                                                            cwd=build)):
        lo, size = int(m.group(2), 16), int(m.group(3), 16)
        if lo <= addr < lo + size:
            section = m.group(1)
    relro = re.search(r"GNU_RELRO\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)",
                      _sh("readelf", "-lW", "prog", cwd=build))
    lo, size = (int(relro.group(1), 16), int(relro.group(2), 16)) if relro else (0, 0)
    return {"section": section, "in_relro": lo <= addr < lo + size, "vtable_perms": v["perms.vtable"],
            "code_perms": v["perms.code"], "global_perms": v["perms.global"]}


@claim("vf.relocations", question=Q, needs=["g++"], timeout=180,
       statement="程序加载时动态链接器只给虚表做重定位：`Derived` 的 {slots} 格里有 {relocated} 格带 `R_X86_64_RELATIVE` "
                 "重定位，加数是链接时就定下的地址，依次是 {targets_text}；offset-to-top 那一格是常数，不需要重定位。"
                 "这个程序{pie:?是|不是}位置无关的可执行文件（PIE），加载器把装载基址加上去之后，RELRO 把这一页改成只读；"
                 "构造函数从不写虚表，只写对象里的 vptr。",
       expect={"relocated": 5, "targets": ["typeinfo for Derived", "Derived::~Derived()", "Derived::~Derived()",
                                           "Derived::name() const", "Derived::value() const"], "pie": True})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    rows = [r for r in _nm(build, "prog", "-S") if len(r) == 4]
    syms = {r[3]: (int(r[0], 16), int(r[1], 16)) for r in rows}
    by_addr = {a: name for name, (a, _size) in syms.items()}
    base, size = syms["_ZTV7Derived"]
    targets = []
    for line in _sh("readelf", "-rW", "prog", cwd=build).splitlines():
        p = line.split()
        if len(p) >= 4 and p[2] == "R_X86_64_RELATIVE" and base <= int(p[0], 16) < base + size:
            targets.append((int(p[0], 16) - base, by_addr.get(int(p[3], 16), p[3])))
    names = [t for _, t in sorted(targets)]
    pretty = _sh("c++filt", *names, cwd=build).splitlines() if names else []
    pie = "DYN" in _sh("readelf", "-hW", "prog", cwd=build)
    return {"relocated": len(targets), "offsets": [o for o, _ in sorted(targets)], "targets": pretty, "pie": pie,
            "targets_text": "、".join(pretty), "slots": size // 8}


@claim("vf.slots-before", question=Q, needs=["g++"], timeout=180,
       statement="vptr 前面那两格是给 RTTI 和多继承用的：从一个 `Derived` 对象 `memcpy` 出 vptr，`vptr[-1]` "
                 "{typeinfo:?就是|不是} `&typeid(Derived)`，`typeid` 和 `dynamic_cast` 就是这样从对象找到类型信息的；"
                 "`vptr[-2]`（offset-to-top）是 {offset_to_top}，主基类子对象就在对象开头。",
       expect={"typeinfo": True, "offset_to_top": 0})
def _(ctx):
    v = _output(ctx)
    return {"typeinfo": v["slot.typeinfo_is_typeid"] == "1", "offset_to_top": int(v["slot.offset_to_top"])}


@claim("vf.ctor-dispatch", question=Q, needs=["g++"], timeout=180,
       statement="构造 `Derived` 时，`Base` 的构造函数里经另一个翻译单元的 `name_of(*this)` 做一次真正的虚调用，"
                 "得到的是 `{phase0}`，不是 `Derived`：这时对象还只是一个 `Base`，`typeid(*this).name()` 也是 "
                 "`{tname}`。`Derived` 的构造函数体里是 `{phase1}`，构造完成后是 `{after}`；析构按相反顺序退回："
                 "`~Derived` 里是 `{phase2}`，`~Base` 里又是 `{phase3}`。",
       expect={"phase0": "Base", "phase1": "Derived", "after": "Derived", "phase2": "Derived", "phase3": "Base",
               "tname": "4Base"})
def _(ctx):
    v = _output(ctx)
    return {"phase0": v["phase0.name"], "phase1": v["phase1.name"], "phase2": v["phase2.name"],
            "phase3": v["phase3.name"], "after": v["name.after"], "tname": v["typeid.in_base_ctor"]}


@claim("vf.vptr-phases", question=Q, needs=["g++"], timeout=180,
       statement="原因是 vptr 在构造过程中被改写了几次。按 Itanium ABI 把对象的第一个指针 `memcpy` 出来，"
                 "和虚表符号的地址比较：`Base` 构造函数里它指向 `{phase0}`（`_ZTV4Base` 是 `vtable for Base`），"
                 "`Derived` 构造函数体里是 `{phase1}`，析构时 `~Derived` 里是 `{phase2}`，到 `~Base` 又被改回 "
                 "`{phase3}`。每个构造函数先把 vptr 设成自己类的虚表，再执行函数体；对象的动态类型就这样一层层变化。",
       expect={"phase0": "_ZTV4Base+16", "phase1": "_ZTV7Derived+16", "phase2": "_ZTV7Derived+16",
               "phase3": "_ZTV4Base+16", "after": "_ZTV7Derived+16"})
def _(ctx):
    v = _output(ctx)
    return {f"phase{i}": v[f"phase{i}.vptr"] for i in range(4)} | {"after": v["vptr.after"]}


@claim("vf.nonvirtual-delete", question=Q, needs=["g++"], timeout=180,
       statement="`NB* p = new ND; delete p;`，而 `NB` 的析构函数不是虚的：`~ND` 运行了 {nonvirtual} 次，"
                 "只调用了 `~NB`。基类析构函数加上 `virtual` 后，同样的 `delete` 让派生类析构函数运行 {virtual} 次。"
                 "前者按标准是未定义行为，这次的表现只是“派生部分没析构”，不能指望它。`std::shared_ptr<NB>(new ND)` "
                 "不靠虚析构：控制块记下的是按 `ND*` 删除的删除器，它离开作用域时 `~ND` 运行 {shared} 次。",
       expect={"nonvirtual": 0, "virtual": 1, "shared": 1})
def _(ctx):
    v = _output(ctx)
    return {"nonvirtual": int(v["dtors.nonvirtual"]), "virtual": int(v["dtors.virtual"]),
            "shared": int(v["dtors.shared_ptr_nonvirtual"]) - int(v["dtors.nonvirtual"])}


@claim("vf.asan-type-mismatch", question=Q, needs=["g++"], timeout=180,
       statement="AddressSanitizer 能抓到它：同样的 `delete` 用 `-fsanitize=address` 编译运行，报 "
                 "`{error}`，分配的是 {allocated:bytes}（`sizeof(ND)`），按 `NB` 的大小 {deallocated:bytes} 释放；"
                 "`~ND` {derived_dtor_ran:?运行了|没有运行}，进程退出码 {rc}。",
       expect={"error": "new-delete-type-mismatch", "allocated": 32, "deallocated": 8, "derived_dtor_ran": False,
               "sizes_match_sizeof": True, "rc": {"!=": 0}})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    done = _run(build, "asan", preexec=_uncap_data)
    v = _kv(done.stdout)
    alloc = re.search(r"size of the allocated type:\s+(\d+)", done.stderr)
    dealloc = re.search(r"size of the deallocated type:\s+(\d+)", done.stderr)
    allocated, deallocated = int(alloc.group(1)) if alloc else 0, int(dealloc.group(1)) if dealloc else 0
    return {"error": "new-delete-type-mismatch" if "new-delete-type-mismatch" in done.stderr else done.stderr[-300:],
            "allocated": allocated, "deallocated": deallocated, "rc": done.returncode,
            "derived_dtor_ran": "ND::~ND" in done.stdout,
            "sizes_match_sizeof": [allocated, deallocated] == [int(v["sizeof.nd"]), int(v["sizeof.nb"])]}


@claim("vf.pure-virtual-call", question=Q, needs=["g++"], timeout=180,
       statement="`Abstract` 的构造函数经另一个翻译单元调用纯虚函数 `f()`：此时 vptr 指向 `Abstract` 的虚表，"
                 "那一格是 `{slot}`（class dump 里的内容），libstdc++ 的这个函数打印 “{message}”，再 `std::terminate`，"
                 "进程被 {signal_name} 终止，后面的代码{reached_end:?执行了|没有执行}。",
       expect={"slot": "__cxa_pure_virtual", "message": "pure virtual method called", "signal_name": "SIGABRT",
               "reached_end": False})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    done = _run(build, "prog", "pure")
    sig = -done.returncode if done.returncode < 0 else None
    abstract = {o: _short(e) for o, e in _vtables(ctx)["Abstract"]["entries"]}
    return {"slot": abstract.get(32, "?"), "signal_name": signal.Signals(sig).name if sig else f"exit {done.returncode}",
            "message": "pure virtual method called" if "pure virtual method called" in done.stderr else done.stderr[-200:],
            "reached_end": "unreachable" in done.stdout, "stderr": done.stderr[-300:]}


@claim("vf.indirect-call", question=Q, needs=["g++"], timeout=180,
       statement="一次虚调用在机器码里是什么：`-O2` 下 `int call_base(const Base& b) { return b.value(); }` 编译成 "
                 "{n} 条指令，`{insn0}`（从对象取 vptr）、`{insn1}`（取虚表里那一格并间接跳转，尾调用所以是 jmp）。"
                 "vptr 指向虚表偏移 {address_point} 处，`0x18` 再加上这 {address_point} 正是 dump 里 `Base::value` 的偏移 {dump_offset}。"
                 "开销就在这里：两次依赖的内存读、一次间接分支，而且编译器看不到目标，不能内联。",
       expect={"n": 2, "insn0": "mov (%rdi),%rax", "insn1": "jmp *0x18(%rax)", "dump_offset": 40,
               "slot_matches": True})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    insns = _disasm(build, "key.o", "_Z9call_baseRK4Base")
    offset = next(o for o, e in _vtables(ctx, "key.cpp")["Base"]["entries"] if e.endswith("Base::value"))
    m = re.search(r"\*0x([0-9a-f]+)\(", " ".join(_indirect(insns)))
    return {"n": len(insns), "insn0": insns[0] if insns else "", "insn1": insns[1] if len(insns) > 1 else "",
            "insns": insns, "dump_offset": offset, "address_point": 16,
            "slot_matches": bool(m) and int(m.group(1), 16) + 16 == offset}


@claim("vf.final-devirt", question=Q, needs=["g++"], timeout=180,
       statement="`Leaf` 是 `final`，`call_leaf(const Leaf& l) { return l.value(); }` 只有一个可能的目标：`-O2` 把它编译成 "
                 "`{insns_text}`，{n_indirect} 条间接跳转，连 vptr 都不读，`Leaf::value` 被内联成了常数。",
       expect={"n_indirect": 0, "insns": ["mov $0x3,%eax", "ret"], "reads_vptr": False})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    insns = _disasm(build, "key.o", "_Z9call_leafRK4Leaf")
    return {"insns": insns, "insns_text": "; ".join(insns), "n_indirect": len(_indirect(insns)),
            "reads_vptr": any("(%rdi)" in i for i in insns)}


@claim("vf.speculative-devirt", question=Q, needs=["g++"], timeout=180,
       statement="没有 `final` 也不一定是纯粹的间接调用。`Derived` 不是 `final`，`call_derived(const Derived& d)` 在 "
                 "`-O2` 下有 {n} 条指令：取出虚表那一格，和 `Derived::value` 的地址比较"
                 "（{compares:?有|没有} `cmp`），相等就走内联的 `{inlined}`，不等才 `{fallback}`。这是 g++ 的推测性去虚化"
                 "（`-fdevirtualize-speculatively`，`-O2` 默认打开）：同一个文件用 `-fno-devirtualize-speculatively` "
                 "重编，只剩 {nospec_n} 条指令、{nospec_indirect} 条间接跳转。`call_base` 的 `Base&` 在这个文件里有 "
                 "{base_overriders} 个可能的 `value`，g++ {base_compares:?也去猜了|没有去猜}。",
       expect={"compares": True, "inlined": "mov $0x2,%eax", "fallback": "jmp *%rax", "targets_derived_value": True,
               "nospec_n": 2, "nospec_indirect": 1, "nospec_compares": False, "base_overriders": 3,
               "base_compares": False})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    sym = "_Z12call_derivedRK7Derived"
    spec, plain = _disasm(build, "prog", sym), _disasm(build, "key_nospec.o", sym)
    return {"insns": spec, "n": len(spec), "compares": any(i.startswith("cmp") for i in spec),
            "inlined": next((i for i in spec if i.startswith("mov $")), ""),
            "fallback": (_indirect(spec) or [""])[0],
            "targets_derived_value": any("<_ZNK7Derived5valueEv>" in i for i in spec),
            "nospec": plain, "nospec_n": len(plain), "nospec_indirect": len(_indirect(plain)),
            "nospec_compares": any(i.startswith("cmp") for i in plain),
            "base_overriders": len({e for cls in ("Base", "Derived", "Leaf")
                                    for _o, e in _vtables(ctx, "key.cpp")[cls]["entries"] if e.endswith("::value")}),
            "base_compares": any(i.startswith("cmp") for i in _disasm(build, "key.o", "_Z9call_baseRK4Base"))}


@claim("vf.mangling", question=Q, needs=["g++"], timeout=180,
       statement="C++ 的函数名在目标文件里是改编过的（Itanium 规则，`_Z` 开头，带上命名空间和参数类型），"
                 "所以能重载：`nm key.o` 里两个 `add` 是 `{add_int}` 和 `{add_double}`，`ns::add` 是 `{ns_add}`；"
                 "`c++filt {add_int}` 还原成 `{demangled}`。`extern \"C\"` 的 `add_c` 在符号表里就叫 `{add_c}`，"
                 "C 代码和 `dlsym` 按这个名字就能找到它。虚表、typeinfo 也是这样命名的：`{vtable}` 还原成 `{vtable_name}`。",
       expect={"add_int": "_Z3addii", "add_double": "_Z3adddd", "ns_add": "_ZN2ns3addEii", "demangled": "add(int, int)",
               "add_c": "add_c", "vtable": "_ZTV7Derived", "vtable_name": "vtable for Derived", "printed": "3,3.5,7,11"})
def _(ctx):
    build = _build(str(ctx.snippet_dir()))
    names = {r[-1] for r in _nm(build, "key.o", "--defined-only") if r[-2] in "Tt"}
    adds = sorted(n for n in names if "add" in n)
    pretty = _sh("c++filt", "_Z3addii", "_ZTV7Derived", cwd=build).splitlines()
    return {"symbols": adds, "add_int": next(n for n in adds if n.endswith("3addii") and n.startswith("_Z3")),
            "add_double": next(n for n in adds if n.endswith("dd")), "ns_add": next(n for n in adds if "ns" in n),
            "add_c": next(n for n in adds if not n.startswith("_Z")), "demangled": pretty[0], "vtable": "_ZTV7Derived",
            "vtable_name": pretty[1], "printed": _output(ctx)["add"]}


@claim("vf.refused", question=Q, needs=["g++"], timeout=180,
       statement="g++ 拒绝这几种声明（`-fsyntax-only`，一次报出全部）：虚构造函数报 “{virtual_ctor}”；"
                 "虚的成员模板报 “{virtual_template}”（虚表的格数在类定义时就要定下，模板的实例个数定不下来）；"
                 "虚的静态成员函数报 “{virtual_static}”（没有 `this`，也就没有 vptr 可查）；"
                 "两个 `extern \"C\"` 的同名函数报 “{c_overload}”（C 链接没有改编，名字只能有一个）；"
                 "把非虚的基类析构函数设为 `protected` 后，`delete` 一个基类指针报 “{protected_dtor}”。",
       expect={"virtual_ctor": "constructors cannot be declared ‘virtual’", "virtual_template": "templates may not be ‘virtual’",
               "virtual_static": "cannot be declared both ‘virtual’ and ‘static’",
               "c_overload": "conflicting declaration of C function", "protected_dtor": "is protected within this context",
               "rc": {"!=": 0}})
def _(ctx):
    refused = _refused(ctx, "errors.cpp", "-fsyntax-only")
    rc, text = refused.returncode, refused.output
    errors = [line.split("error: ", 1)[1] for line in text.splitlines() if "error: " in line]

    def find(fragment: str) -> str:
        return next((fragment for e in errors if fragment in e), "; ".join(errors)[:200])

    return {"rc": rc, "errors": errors, "virtual_ctor": find("constructors cannot be declared ‘virtual’"),
            "virtual_template": find("templates may not be ‘virtual’"),
            "virtual_static": find("cannot be declared both ‘virtual’ and ‘static’"),
            "c_overload": find("conflicting declaration of C function"),
            "protected_dtor": find("is protected within this context")}


@claim("vf.multiple-inheritance", question=Q, needs=["g++"], timeout=180,
       statement="多继承时一个对象有几个 vptr：`C : A, B`（`A`、`B` 各有虚函数和一个 `long`），`sizeof(C)` 是 {size:bytes}，"
                 "两个 vptr 加三个 `long`；`B* pb = &c` 的地址比 `&c` 大 {b_offset} 字节，`pb` 处的 vptr 指向 `C` 虚表里"
                 "偏移 {b_vptr_at} 的第二张子表，那张子表的 offset-to-top 是 {offset_to_top}。经 `pb` 调用 `fb()` 得到 "
                 "{fb}（`C` 的重写），走的是 dump 里的 `{thunk}`：`c++filt` 还原成 “{thunk_name}”，先把 `this` 调回 "
                 "`C` 的开头再跳到 `C::fb`。",
       expect={"size": 40, "b_offset": 16, "offset_to_top": -16, "b_vptr_at": 64, "fb": 20,
               "thunk": "_ZThn16_NK1C2fbEv", "thunk_name": "non-virtual thunk to C::fb() const", "secondary_top": "-16"})
def _(ctx):
    v = _output(ctx)
    rows = {o: _short(e) for o, e in _vtables(ctx)["C"]["entries"]}
    thunk = next((e.split("::", 1)[1] for e in rows.values() if "_ZThn" in e and "fb" in e), "")
    build = _build(str(ctx.snippet_dir()))
    return {"size": int(v["sizeof.c"]), "b_offset": int(v["mi.b_offset"]), "offset_to_top": int(v["mi.b_offset_to_top"]),
            "b_vptr_at": int(v["mi.b_vptr_in_c_vtable"]), "fb": int(v["mi.fb"]), "thunk": thunk,
            "thunk_name": _sh("c++filt", thunk, cwd=build).strip() if thunk else "",
            "secondary_top": rows.get(int(v["mi.b_vptr_in_c_vtable"]) - 16, "?")}


@claim("vf.missing-key-function", question=Q, needs=["g++"], timeout=180,
       statement="声明了 key function 却哪里都没定义：`-O0` 编译链接 missing_key.cpp，链接器报 “{error}”，"
                 "而不是“找不到 `MissingKey::key`”，因为本该生成虚表的那个翻译单元不存在；链接退出码 {rc}。",
       expect={"error": "undefined reference to `vtable for MissingKey'", "rc": {"!=": 0}})
def _(ctx):
    unlinked = _refused(ctx, "missing_key.cpp", "-O0", "-o", "missing_key")
    rc, text = unlinked.returncode, unlinked.output
    wanted = "undefined reference to `vtable for MissingKey'"
    first = next((line.split(": ", 1)[-1] for line in text.splitlines() if "undefined reference" in line), text[-200:])
    return {"rc": rc, "error": wanted if wanted in text else first}


def _torch_lib() -> tuple[Path, str]:
    """The torch wheel's lib/ and include/ folders, found without importing torch."""
    import importlib.metadata  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    root = Path(importlib.util.find_spec("torch").origin).parent
    return root, importlib.metadata.version("torch")


@claim("vf.torch-key-function", question=Q, needs=["g++"], timeout=180,
       statement="PyTorch 的库里看得到同一条规则（torch {version} 的 wheel，`nm -D`）：`TensorImpl.h` 只声明 "
                 "`~TensorImpl() override;`，析构函数定义在 .cpp 里，它就是 key function，`vtable for c10::TensorImpl` "
                 "在查过的 libc10、libtorch_cpu、libtorch_python 里只有 {tensorimpl_defined} 定义它；`intrusive_ptr_target` 的虚析构函数在头文件里就写了函数体"
                 "{intrusive_inline:?（inline）|（不是 inline）}，"
                 "`typeinfo for c10::intrusive_ptr_target` 在这三个库里各有一份定义：{typeinfo_defined}。",
       expect={"tensorimpl_defined": "libc10.so", "typeinfo_copies": 3, "intrusive_inline": True,
               "tensorimpl_declared_only": True})
def _(ctx):
    root, version = _torch_lib()
    libs = ("libc10.so", "libtorch_cpu.so", "libtorch_python.so")
    defined = {}
    for lib in libs:
        rows = _sh("nm", "-D", "--defined-only", str(root / "lib" / lib), cwd=ctx.workdir).split()
        defined[lib] = {"_ZTVN3c1010TensorImplE": "_ZTVN3c1010TensorImplE" in rows,
                        "_ZTIN3c1020intrusive_ptr_targetE": "_ZTIN3c1020intrusive_ptr_targetE" in rows}
    header = (root / "include" / "c10" / "util" / "intrusive_ptr.h").read_text(encoding="utf-8")
    impl = (root / "include" / "c10" / "core" / "TensorImpl.h").read_text(encoding="utf-8")
    with_typeinfo = [lib for lib in libs if defined[lib]["_ZTIN3c1020intrusive_ptr_targetE"]]
    return {"version": version, "defined": defined,
            "tensorimpl_defined": "、".join(lib for lib in libs if defined[lib]["_ZTVN3c1010TensorImplE"]),
            "typeinfo_defined": "、".join(with_typeinfo), "typeinfo_copies": len(with_typeinfo),
            "intrusive_inline": bool(re.search(r"virtual ~intrusive_ptr_target\(\)\s*\{", header)),
            "tensorimpl_declared_only": "~TensorImpl() override;" in impl}
