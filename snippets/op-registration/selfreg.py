"""The self-registration pattern in plain C++, built with g++: what the TORCH_LIBRARY macros rely on."""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

from snippets._workloads import native
from snippets._workloads.native import sh
from verify.claim import claim

# Named here so that editing any of them re-runs these claims.
SOURCES = ("registry.h", "registry.cpp", "op_relu.cpp", "op_square.cpp", "registry_main.cpp")


def stage(ctx) -> Path:
    return native.stage(ctx, SOURCES)


def cc(wd: Path, *args: str) -> None:
    sh("g++", "-std=c++17", "-O1", "-fPIC", *args, cwd=wd)


def run_app(wd: Path, app: str) -> list[str]:
    env = dict(os.environ, LD_LIBRARY_PATH=str(wd))
    done = subprocess.run([str(wd / app)], cwd=wd, capture_output=True, text=True, env=env, check=True, timeout=30)
    return done.stdout.splitlines()


def ops_of(lines: list[str]) -> list[str]:
    return sorted(line.split()[1] for line in lines if line.startswith("op "))


def needed(wd: Path, binary: str) -> list[str]:
    dyn = sh("readelf", "-d", binary, cwd=wd)
    libs = [line.split("[")[1].rstrip("]") for line in dyn.splitlines() if "(NEEDED)" in line]
    return [lib for lib in libs if lib.startswith(("libregistry", "libop_"))]  # leave out libc, libstdc++


@claim(
    "selfreg.before-main",
    question="op-registration",
    statement="把带 `REGISTER_OP` 的 .o 直接链接进程序，宏生成的静态对象在 `main()` 之前构造并完成注册："
    "`register relu` 和 `register square` 打印在 `main starts` 之前，而 `main` 的源码从未提到这些算子，只按字符串查表调用。",
    expect={"first_lines": ["register relu", "register square", "main starts"], "ops": ["relu", "square"],
            "call": {"contains": "= "}},
    needs=["g++"],
)
def _(ctx):
    wd = stage(ctx)
    cc(wd, "registry_main.cpp", "registry.cpp", "op_relu.cpp", "op_square.cpp", "-o", "app")
    lines = run_app(wd, "app")
    return {"output": lines, "first_lines": lines[:3],
            "ops": ops_of(lines), "call": next((line for line in lines if line.startswith("call")), "")}


@claim(
    "selfreg.dlopen",
    question="op-registration",
    statement="注册代码在共享库里时，它在库被加载（dlopen）的那一刻运行：先加载只含注册表的库，表里有 {before_plugin} 个算子；"
    "再用 `ctypes` 加载含 `REGISTER_OP` 的插件库，表里就有了 {after_plugin} 个（`square`），并能按名字调用；"
    "`torch.ops.load_library` 的实现就是一次 `ctypes.CDLL`。",
    expect={"before_plugin": 0, "after_plugin": 1, "names": ["square"], "square_of_7": 49,
            "load_library_uses_ctypes_cdll": True},
    needs=["g++"],
)
def _(ctx):
    wd = stage(ctx)
    cc(wd, "-shared", "registry.cpp", "-o", "libregistry.so")
    cc(wd, "-shared", "op_square.cpp", "-L.", "-lregistry", "-Wl,-rpath,$ORIGIN", "-o", "libop_square.so")
    reg = ctypes.CDLL(str(wd / "libregistry.so"), mode=ctypes.RTLD_GLOBAL)
    reg.opreg_name.restype = ctypes.c_char_p
    before = reg.opreg_count()
    ctypes.CDLL(str(wd / "libop_square.so"))  # no function of the plugin is called
    after = reg.opreg_count()
    names = [reg.opreg_name(i).decode() for i in range(after)]
    import inspect  # noqa: PLC0415

    import torch  # noqa: PLC0415

    return {"before_plugin": before, "after_plugin": after, "names": names,
            "square_of_7": reg.opreg_call(b"square", 7),
            "load_library_uses_ctypes_cdll": "ctypes.CDLL(" in inspect.getsource(torch._ops._Ops.load_library)}


@claim(
    "selfreg.static-archive",
    question="op-registration",
    statement="把同样的 .o 打进静态库 `libops.a` 再链接，因为 `main` 不引用其中任何符号，链接器根本不取这些成员："
    "程序里有 {ops_plain_count} 个算子，注册悄悄消失，没有任何报错；加 `-Wl,--whole-archive` 后 `relu` 和 `square` 都回来了。",
    expect={"ops_plain_archive": [], "ops_plain_count": 0, "ops_whole_archive": ["relu", "square"],
            "ops_direct_objects": ["relu", "square"]},
    needs=["g++"],
)
def _(ctx):
    wd = stage(ctx)
    for name in ("registry_main", "registry", "op_relu", "op_square"):
        cc(wd, "-c", f"{name}.cpp", "-o", f"{name}.o")
    sh("ar", "rcs", "libops.a", "op_relu.o", "op_square.o", cwd=wd)
    cc(wd, "registry_main.o", "registry.o", "-L.", "-lops", "-o", "app_plain")
    cc(wd, "registry_main.o", "registry.o", "-L.", "-Wl,--whole-archive", "-lops", "-Wl,--no-whole-archive",
       "-o", "app_whole")
    cc(wd, "registry_main.o", "registry.o", "op_relu.o", "op_square.o", "-o", "app_direct")
    plain, whole, direct = (run_app(wd, a) for a in ("app_plain", "app_whole", "app_direct"))
    return {"ops_plain_archive": ops_of(plain), "ops_plain_count": len(ops_of(plain)), "ops_whole_archive": ops_of(whole),
            "ops_direct_objects": ops_of(direct), "plain_output": plain,
            "archive_members": sh("ar", "t", "libops.a", cwd=wd).split()}


@claim(
    "selfreg.as-needed",
    question="op-registration",
    statement="共享库也一样：插件库 `libop_relu.so` 只为注册的副作用而链接、程序不引用它的任何符号时，"
    "在 `-Wl,--as-needed` 下它不出现在程序的 NEEDED 列表里，运行时不加载，程序里有 {ops_as_needed_count} 个算子；"
    "`--no-as-needed` 时它留在 NEEDED 里，`relu` 也回来了。",
    expect={"needed_as_needed": ["libregistry.so"], "ops_as_needed": [],
            "ops_as_needed_count": 0, "needed_no_as_needed": ["libregistry.so", "libop_relu.so"],
            "ops_no_as_needed": ["relu"]},
    needs=["g++"],
)
def _(ctx):
    wd = stage(ctx)
    cc(wd, "-shared", "registry.cpp", "-o", "libregistry.so")
    cc(wd, "-shared", "op_relu.cpp", "-L.", "-lregistry", "-o", "libop_relu.so")
    cc(wd, "registry_main.cpp", "-L.", "-Wl,--as-needed", "-lregistry", "-lop_relu", "-o", "app_as_needed")
    cc(wd, "registry_main.cpp", "-L.", "-Wl,--no-as-needed", "-lregistry", "-lop_relu", "-o", "app_no_as_needed")
    as_needed = ops_of(run_app(wd, "app_as_needed"))
    return {"needed_as_needed": needed(wd, "app_as_needed"), "ops_as_needed": as_needed,
            "ops_as_needed_count": len(as_needed),
            "needed_no_as_needed": needed(wd, "app_no_as_needed"),
            "ops_no_as_needed": ops_of(run_app(wd, "app_no_as_needed"))}
