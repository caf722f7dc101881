"""Where the vtable lands depends on how the program is built: the same main.cpp + key.cpp linked as a
position-independent executable and as a fixed-address one, and the g++ that built them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

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


def _link(work: Path, name: str, pic: str, link: str) -> dict:
    """Build main.cpp + key.cpp with one code model; where `vtable for Derived` sits and what the loader fixes."""
    objs = []
    for src in ("main.cpp", "key.cpp"):
        obj = f"{name}-{src[:-4]}.o"
        _sh("g++", STD, "-O2", pic, "-c", src, "-o", obj, cwd=work)
        objs.append(obj)
    _sh("g++", link, *objs, "-o", name, cwd=work)
    syms = {r[3]: (int(r[0], 16), int(r[1], 16)) for r in
            (line.split(None, 3) for line in _sh("nm", "-S", name, cwd=work).splitlines()) if len(r) == 4}
    addr, size = syms[VTABLE]
    section = "?"
    for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", _sh("readelf", "-SW", name,
                                                                                            cwd=work)):
        lo, n = int(m.group(2), 16), int(m.group(3), 16)
        if lo <= addr < lo + n:
            section = m.group(1)
    relocated = sum(1 for line in _sh("readelf", "-rW", name, cwd=work).splitlines()
                    if (p := line.split()) and len(p) >= 3 and re.fullmatch(r"[0-9a-f]+", p[0])
                    and addr <= int(p[0], 16) < addr + size)
    kind = re.search(r"Type:\s+(\S+)", _sh("readelf", "-hW", name, cwd=work)).group(1)
    run = subprocess.run([str(work / name)], cwd=work, capture_output=True, text=True, timeout=60)
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
    for name in SOURCES:
        shutil.copy(ctx.snippet_dir() / name, work / name)
    gxx = _sh("g++", "-dumpfullversion", cwd=work).strip()
    return {"gxx": gxx, "pie": _link(work, "pie", "-fPIE", "-pie"),
            "nopie": _link(work, "nopie", "-fno-pie", "-no-pie")}
