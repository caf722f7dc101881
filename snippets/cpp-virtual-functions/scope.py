"""Where the vtable lands depends on how the program is built: the same main.cpp + key.cpp built as a
position-independent executable and as a fixed-address one, and the g++ that built them; and what makes
c10::intrusive_ptr_target a class without a key function, with one weak typeinfo per torch library."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from verify import cxx
from verify.claim import claim

Q = "cpp-virtual-functions"
SOURCES = ("vf.h", "main.cpp", "key.cpp")
STD = "-std=c++17"
VTABLE = "_ZTV7Derived"


def _sh(*cmd: str, cwd: Path) -> str:
    done = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def _link(ctx, work: Path, name: str, pic: str, link: str) -> dict:
    """Build main.cpp + key.cpp with one code model (verify.cxx, once per source, flags and compiler); where
    `vtable for Derived` sits and what the loader fixes."""
    objs = [f"{name}-{src[:-4]}.o" for src in ("main.cpp", "key.cpp")]
    steps = [[STD, "-O2", pic, "-c", src, "-o", obj] for src, obj in zip(("main.cpp", "key.cpp"), objs)]
    folder = cxx.build_steps({n: ctx.snippet_dir() / n for n in SOURCES}, [*steps, [link, *objs, "-o", name]])
    syms = {r[3]: (int(r[0], 16), int(r[1], 16)) for r in
            (line.split(None, 3) for line in _sh("nm", "-S", name, cwd=folder).splitlines()) if len(r) == 4}
    addr, size = syms[VTABLE]
    section = "?"
    for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", _sh("readelf", "-SW", name,
                                                                                            cwd=folder)):
        lo, n = int(m.group(2), 16), int(m.group(3), 16)
        if lo <= addr < lo + n:
            section = m.group(1)
    relocated = sum(1 for line in _sh("readelf", "-rW", name, cwd=folder).splitlines()
                    if (p := line.split()) and len(p) >= 3 and re.fullmatch(r"[0-9a-f]+", p[0])
                    and addr <= int(p[0], 16) < addr + size)
    kind = re.search(r"Type:\s+(\S+)", _sh("readelf", "-hW", name, cwd=folder)).group(1)
    run = subprocess.run([str(folder / name)], cwd=work, capture_output=True, text=True, timeout=60)
    perms = dict(line.split("=", 1) for line in run.stdout.splitlines() if "=" in line).get("perms.vtable", "?")
    return {"section": section, "relocated": relocated, "elf_type": kind, "perms": perms}


@claim("vf.pie-section", question=Q, needs=["g++"], timeout=180,
       statement="虚表放在哪一节取决于程序是不是位置无关的（g++ {gxx}，同样的 main.cpp、key.cpp，`-O2`）："
                 "`-fPIE -pie` 链成 `{pie.elf_type}`，`vtable for Derived` 在 `{pie.section}`，有 {pie.relocated} 格"
                 "要加载时重定位；`-fno-pie -no-pie` 链成 `{nopie.elf_type}`，地址在链接时就定死，它在 `{nopie.section}`，"
                 "{nopie.relocated} 格重定位。运行时 vptr 所指的页两种都只读（`{pie.perms}`、`{nopie.perms}`）。“虚表在 `.data.rel.ro`”说的是位置无关的程序。",
       expect={"pie": {"section": ".data.rel.ro", "relocated": 5, "elf_type": "DYN", "perms": "r--p"},
               "nopie": {"section": ".rodata", "relocated": 0, "elf_type": "EXEC", "perms": "r--p"},
               "gxx": {"type": "str"}})
def _(ctx):
    work = Path(ctx.workdir)
    gxx = _sh("g++", "-dumpfullversion", cwd=work).strip()
    return {"gxx": gxx, "pie": _link(ctx, work, "pie", "-fPIE", "-pie"),
            "nopie": _link(ctx, work, "nopie", "-fno-pie", "-no-pie")}


TYPEINFO = "_ZTIN3c1020intrusive_ptr_targetE"
TORCH_LIBS = ("libc10.so", "libtorch_cpu.so", "libtorch_python.so")


def _class_body(text: str, head: str) -> str:
    """The text between a class's opening brace and its matching closing one."""
    start = text.index("{", text.index(head))
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i]
    raise ValueError(f"unbalanced braces after {head}")


@claim("vf.torch-no-key-function", question=Q, needs=["g++"], timeout=180,
       statement="`intrusive_ptr_target` 确实没有 key function（torch {version}）：它的 {n_virtuals} 个虚函数 {virtuals_text} "
                 "{all_inline:?都在头文件里写了函数体，全是 inline|有的只在头文件里声明}。`typeinfo for c10::intrusive_ptr_target` "
                 "在查过的三个库里 `nm -D` 的类型是 {kinds_text}（`V`、`W` 都是弱符号）；这三个库对它的引用也都是按符号名的重定位"
                 "（{relocs_text}），默认可见性下动态链接器会把它们解析到同一份定义。",
       expect={"all_inline": True, "n_virtuals": {">=": 2}, "all_weak": True, "all_by_name": True})
def _(ctx):
    import importlib.metadata  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    root = Path(importlib.util.find_spec("torch").origin).parent
    header = (root / "include" / "c10" / "util" / "intrusive_ptr.h").read_text(encoding="utf-8")
    body = re.sub(r"//[^\n]*", "", _class_body(header, "class C10_API intrusive_ptr_target"))
    # Each `virtual` declaration, and whether a `{` (a body) comes before the `;` that would end a bare declaration.
    virtuals = {}
    for m in re.finditer(r"virtual\s+([^;{]*?)(~?\w+)\s*\(", body):
        rest = body[m.end():]
        brace, semi = rest.find("{"), rest.find(";")
        virtuals[m.group(2)] = brace != -1 and (semi == -1 or brace < semi)
    kinds, relocs = {}, {}
    for lib in TORCH_LIBS:
        path = str(root / "lib" / lib)
        kinds[lib] = next((row.split()[1] for row in _sh("nm", "-D", "--defined-only", path, cwd=Path(ctx.workdir))
                           .splitlines() if row.endswith(" " + TYPEINFO)), "-")
        types = [p[2] for line in _sh("readelf", "-rW", path, cwd=Path(ctx.workdir)).splitlines()
                 if TYPEINFO in line and len(p := line.split()) >= 5]
        relocs[lib] = {t: types.count(t) for t in sorted(set(types))}
    return {"version": importlib.metadata.version("torch"), "virtuals": virtuals, "n_virtuals": len(virtuals),
            "virtuals_text": "、".join(f"`{n}`" for n in virtuals), "all_inline": all(virtuals.values()),
            "kinds": kinds, "kinds_text": "、".join(f"{lib} `{k}`" for lib, k in kinds.items()),
            "all_weak": all(k in ("V", "W") for k in kinds.values()),
            "relocs": relocs, "all_by_name": all(relocs.values()),
            "relocs_text": "、".join(f"{lib} {sum(r.values())} 处 " + "/".join(f"`{t}`" for t in r)
                                     for lib, r in relocs.items())}
