"""Templates: code exists only for the types a translation unit instantiates (nm shows it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from snippets._workloads import native
from verify.claim import claim

SOURCES = ("twice.h", "twice_use.cpp", "twice_explicit.cpp", "twice_decl.h", "twice_hidden.cpp", "twice_main.cpp")


def stage(ctx) -> Path:
    return native.stage(ctx, SOURCES)


def gxx(wd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # -O0 so that calls are not inlined away: the symbols show what was instantiated.
    return subprocess.run(["g++", "-std=c++17", "-O0", *args], cwd=wd, capture_output=True, text=True)


def compile_object(ctx, source: str) -> tuple[Path, str]:
    """Stage the sources and compile ``source`` to an object file that must build; (folder, object)."""
    wd = stage(ctx)
    obj = source.replace(".cpp", ".o")
    native.sh("g++", "-std=c++17", "-O0", "-c", source, "-o", obj, cwd=wd)
    return wd, obj


def twice_symbols(wd: Path, obj: str) -> list[str]:
    """Defined symbols named twice<...>, demangled, with nm's type letter (W = weak, T = text)."""
    out = subprocess.run(["nm", "-C", obj], cwd=wd, capture_output=True, text=True, check=True).stdout
    rows = [line.split(maxsplit=2) for line in out.splitlines()]
    return sorted(f"{r[1]} {r[2]}" for r in rows if len(r) == 3 and "twice<" in r[2])


@claim(
    "tmpl.implicit-on-use",
    question="op-registration",
    statement="模板在用到时才实例化：只调用了 `twice<int>` 和 `twice<double>` 的目标文件里，`nm -C` 只看到这两个版本，"
    "类型是 W（弱符号，多个目标文件各有一份时由链接器合并），没有 `twice<float>`。",
    expect={"symbols": ["W double twice<double>(double)", "W int twice<int>(int)"]},
    needs=["g++"],
)
def _(ctx):
    wd, obj = compile_object(ctx, "twice_use.cpp")
    return {"symbols": twice_symbols(wd, obj)}


@claim(
    "tmpl.explicit",
    question="op-registration",
    statement="显式实例化 `template float twice<float>(float);` 让编译器在这个目标文件里生成 `twice<float>`，即使没有任何调用。",
    expect={"symbols": ["W float twice<float>(float)"]},
    needs=["g++"],
)
def _(ctx):
    wd, obj = compile_object(ctx, "twice_explicit.cpp")
    return {"symbols": twice_symbols(wd, obj)}


@claim(
    "tmpl.hidden-definition",
    question="op-registration",
    statement="把模板定义藏进 .cpp、头文件只留声明时，那个 .cpp 一个实例也不生成，调用方链接失败："
    "`undefined reference to 'int twice<int>(int)'`。",
    raises=("RuntimeError", "undefined reference to `int twice<int>(int)'"),
    expect={"symbols_in_hidden_cpp": [], "link_status": {"!=": 0}},
    needs=["g++"],
)
def _(ctx):
    wd = stage(ctx)
    gxx(wd, "-c", "twice_hidden.cpp", "-o", "twice_hidden.o")
    ctx.observe(symbols_in_hidden_cpp=twice_symbols(wd, "twice_hidden.o"))
    done = gxx(wd, "twice_main.cpp", "twice_hidden.o", "-o", "app")
    ctx.observe(link_status=done.returncode)
    if done.returncode:
        raise RuntimeError(next((line for line in done.stderr.splitlines() if "undefined reference" in line),
                                done.stderr).split(": ", 1)[-1])


@claim(
    "tmpl.explicit-fixes-link",
    question="op-registration",
    statement="在那个 .cpp 末尾加一行 `template int twice<int>(int);`，目标文件里就有了 `twice<int>`，"
    "程序链接成功，`twice(21)` 输出 {printed}。",
    expect={"symbols_in_cpp": ["W int twice<int>(int)"], "link_status": 0, "output": "twice(21) = 42", "printed": 42},
    needs=["g++"],
)
def _(ctx):
    wd = stage(ctx)
    gxx(wd, "-DOPREG_EXPLICIT", "-c", "twice_hidden.cpp", "-o", "twice_hidden.o")
    done = gxx(wd, "twice_main.cpp", "twice_hidden.o", "-o", "app")
    output = subprocess.run([str(wd / "app")], capture_output=True, text=True, timeout=30).stdout.strip() \
        if done.returncode == 0 else done.stderr
    printed = int(output.rsplit("= ", 1)[-1]) if output.startswith("twice(") else None
    return {"symbols_in_cpp": twice_symbols(wd, "twice_hidden.o"), "link_status": done.returncode,
            "output": output, "printed": printed}
