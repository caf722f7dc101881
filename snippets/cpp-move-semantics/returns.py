"""std::move as a cast, std::forward and value categories, and copy elision on return, counted.

Each program is built by the project's g++ builder (verify.cxx) and prints ``name=copies,moves`` lines from the
counting type in tracer.h. elision.cpp is built four ways (C++14 and C++17, each with and without
-fno-elide-constructors), once more as C++20, and twice only to read g++'s warnings (with and without -Wall);
pinned.cpp returns a type with neither copy nor move constructor.
"""

from __future__ import annotations

import subprocess

from verify import cxx
from verify.claim import claim

Q = "cpp-move-semantics"
HEADER = "tracer.h"
OPT = "-O2"
MODES = {"c++14": "-std=c++14", "c++17": "-std=c++17", "c++20": "-std=c++20"}
NO_ELIDE = "-fno-elide-constructors"


def _build(ctx, source: str, std: str = "c++17", *flags: str):
    """The program built from ``source`` (with tracer.h beside it), or the BuildError g++ raised."""
    folder = ctx.snippet_dir()
    return cxx.build([folder / source, folder / HEADER], [OPT, *flags], std=(MODES[std], "-Wall", "-Wextra"),
                     name=source.removesuffix(".cpp"))


def _run(ctx, source: str, std: str = "c++17", *flags: str) -> dict[str, str]:
    """``key=value`` lines of the program's output."""
    done = subprocess.run([str(_build(ctx, source, std, *flags))], cwd=ctx.workdir, capture_output=True, text=True,
                          timeout=60, check=True)
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def _counts(text: str) -> list[int]:
    """``copies,moves`` as two integers."""
    return [int(x) for x in text.split(",")]


def _compiles(ctx, source: str, std: str, *flags: str) -> tuple[bool, str]:
    """Whether g++ accepts ``source``, and its first error line when it does not."""
    try:
        _build(ctx, source, std, *flags)
    except cxx.BuildError as exc:
        return False, next((line for line in exc.output.splitlines() if "error:" in line), exc.output[:200])
    return True, ""


def _cm(name: str, text: str) -> dict[str, int]:
    """``copies,moves`` as ``<name>_copies`` and ``<name>_moves``."""
    copies, moves = _counts(text)
    return {f"{name}_copies": copies, f"{name}_moves": moves}


@claim("move.cast-only", question=Q, needs=["g++"],
       statement="`std::move(x)` 只是一个类型转换：单独写一句 `(void)std::move(x);`，拷贝 {cast_only_copies} 次、移动 "
                 "{cast_only_moves} 次，`x` 的值还是 {value_after}；`decltype(std::move(x))` "
                 "{is_rvalue_ref:?正是|不是} `T&&`。真正搬东西的，是它喂给的那个移动构造函数。",
       expect={"cast_only_copies": 0, "cast_only_moves": 0, "value_after": 7, "is_rvalue_ref": True})
def _(ctx):
    """范围：g++ 12，计数类型"""
    v = _run(ctx, "cast.cpp")
    return {**_cm("cast_only", v["cast_only"]), "value_after": int(v["cast_only.value"]),
            "is_rvalue_ref": v["type.nonconst"] == "1"}


@claim("move.const-copies", question=Q, needs=["g++"],
       statement="对 `const` 对象 `std::move`，得到的{is_const_rref:?正是|不是} `const T&&`，移动构造的 `T&&` 绑不上它，"
                 "重载决议选中拷贝构造：计数类型拷贝 {const_copies} 次、移动 {const_moves} 次，源对象的值仍是 {const_source}"
                 "（非 `const` 时移动 {nonconst_moves} 次，源对象变成 {nonconst_source}）。换成长 {string_len} 的 `std::string`："
                 "`const` 源对象的堆缓冲区{string_const_stolen:?被接管|没被接管}，长度仍是 {string_const_left}；"
                 "非 `const` 源对象的缓冲区{string_nonconst_stolen:?被新对象接管|没被接管}，自己剩下长度 {string_nonconst_left}。",
       expect={"is_const_rref": True, "const_copies": 1, "const_moves": 0, "const_source": 8, "nonconst_copies": 0,
               "nonconst_moves": 1, "nonconst_source": -1, "string_const_stolen": False, "string_const_left": 100,
               "string_nonconst_stolen": True, "string_nonconst_left": 0})
def _(ctx):
    """范围：g++ 12 的 libstdc++，计数类型与 std::string"""
    v = _run(ctx, "cast.cpp")
    s_const, s_nonconst = _counts(v["string.const"]), _counts(v["string.nonconst"])
    return {"is_const_rref": v["type.const"] == "1", **_cm("const", v["const"]),
            "const_source": int(v["const.source_value"]), **_cm("nonconst", v["nonconst"]),
            "nonconst_source": int(v["nonconst.source_value"]), "string_len": int(v["string.length"]),
            "string_const_stolen": bool(s_const[0]), "string_const_left": s_const[1],
            "string_nonconst_stolen": bool(s_nonconst[0]), "string_nonconst_left": s_nonconst[1]}


@claim("move.const-move-only", question=Q, needs=["g++"],
       statement="只能移动的类型更直接：`const std::unique_ptr<int> p = …; auto q = std::move(p);` "
                 "{compiles:?能编译|编译不过}，g++ 报的是{deleted_copy:?调用了被删除的拷贝构造函数|别的错误}。",
       expect={"compiles": False, "deleted_copy": True})
def _(ctx):
    """范围：g++ 12 的 libstdc++"""
    ok, error = _compiles(ctx, "const_unique.cpp", "c++17")
    return {"compiles": ok, "error": error,
            "deleted_copy": "use of deleted function" in error and "unique_ptr(const" in error}


@claim("move.forward-category", question=Q, needs=["g++"],
       statement="转发引用 `U&& x` 把实参交给按 `const T&`（copy）/ `T&&`（move）重载的函数，左值、右值实参各走哪个："
                 "用 `std::forward<U>(x)` 是 {forward}；直接写 `x` 是 {plain}（有名字的右值引用本身是左值）；"
                 "写 `std::move(x)` 是 {moved}，调用方传进来的左值被移走，值变成 {caller_value}。",
       expect={"forward": ["copy", "move"], "plain": ["copy", "copy"], "moved": ["move", "move"], "caller_value": -1})
def _(ctx):
    """范围：g++ 12，计数类型"""
    v = _run(ctx, "forward.cpp")
    return {"forward": v["pick.forward"].split(","), "plain": v["pick.plain"].split(","),
            "moved": v["pick.move"].split(","), "caller_value": int(v["steal.caller_value"])}


@claim("move.forward-counts", question=Q, needs=["g++"],
       statement="用转发引用接参数、存进成员的构造函数：`std::forward` 版左值实参拷贝 {forward_lvalue_copies} 次，"
                 "右值实参移动 {forward_rvalue_moves} 次、拷贝 {forward_rvalue_copies} 次；忘了 `std::forward` 的版本，"
                 "右值实参也拷贝 {plain_rvalue_copies} 次、移动 {plain_rvalue_moves} 次。",
       expect={"forward_lvalue_copies": 1, "forward_lvalue_moves": 0, "forward_rvalue_copies": 0,
               "forward_rvalue_moves": 1, "plain_rvalue_copies": 1, "plain_rvalue_moves": 0})
def _(ctx):
    """范围：g++ 12，计数类型"""
    v = _run(ctx, "forward.cpp")
    return {**_cm("forward_lvalue", v["hold.forward.lvalue"]), **_cm("forward_rvalue", v["hold.forward.rvalue"]),
            **_cm("plain_lvalue", v["hold.plain.lvalue"]), **_cm("plain_rvalue", v["hold.plain.rvalue"])}


def _elision(ctx) -> dict[str, dict[str, str]]:
    """Each of the four builds' output (``c++17.no_elide`` …): case name -> ``copies,moves``."""
    out = {}
    for std in ("c++14", "c++17"):
        for elide, flags in (("default", ()), ("no_elide", (NO_ELIDE,))):
            out[f"{std}.{elide}"] = _run(ctx, "elision.cpp", std, *flags)
    return out


@claim("move.prvalue-elision", question=Q, needs=["g++"],
       statement="`T a = f();`，`f` 里 `return T{1};`（返回纯右值）：`-std=c++17` 加上 `-fno-elide-constructors`，"
                 "拷贝 {c17_flag_copies} 次、移动 {c17_flag_moves} 次，和不加时（移动 {c17_default_moves} 次）一样；同一份代码 `-std=c++14` "
                 "加这个开关，移动 {c14_flag_moves} 次（临时对象移进返回值，返回值再移进 `a`）。`return T(T(T{1}));` "
                 "加开关时，C++14 移动 {nested_c14_moves} 次，C++17 {nested_c17_moves} 次。按值参数 `T a = param(T{1});`"
                 "（`param` 返回它的参数）加开关时，C++14 移动 {param_c14_flag_moves} 次，C++17 {param_c17_flag_moves} 次。",
       expect={"c17_default_copies": 0, "c17_default_moves": 0, "c17_flag_copies": 0, "c17_flag_moves": 0,
               "c14_flag_moves": 2, "c14_default_moves": 0, "nested_c14_moves": 4, "nested_c17_moves": 0,
               "param_c14_flag_moves": 3, "param_c17_flag_moves": 1})
def _(ctx):
    """范围：g++ 12，-std=c++14 与 -std=c++17，-O2"""
    e = _elision(ctx)
    return {**_cm("c17_default", e["c++17.default"]["prvalue"]), **_cm("c17_flag", e["c++17.no_elide"]["prvalue"]),
            **_cm("c14_default", e["c++14.default"]["prvalue"]), **_cm("c14_flag", e["c++14.no_elide"]["prvalue"]),
            **_cm("nested_c14", e["c++14.no_elide"]["nested"]), **_cm("nested_c17", e["c++17.no_elide"]["nested"]),
            **_cm("param_c14_flag", e["c++14.no_elide"]["param"]), **_cm("param_c17_flag", e["c++17.no_elide"]["param"]),
            "builds": e}


@claim("move.pinned-return", question=Q, needs=["g++"],
       statement="换一种方式验证：拷贝、移动构造都被删除的类型（自定义的 `Pinned` 和 `std::mutex`）按值返回纯右值，"
                 "`-std=c++17 -fno-elide-constructors` {c17:?能编译|编译不过}，`-std=c++14`（不加这个开关）{c14:?能编译|编译不过}"
                 "（{c14_deleted:?报被删除的移动构造|报别的错}）；C++17 下改成返回具名局部变量，{c17_named:?能编译|编译不过}："
                 "具名返回值优化（NRVO）是允许而不是保证，即使编译器会省略，按值返回具名变量也要求拷贝或移动构造可用"
                 "（g++ 报的是被删除的{named_which}）。",
       expect={"c17": True, "c14": False, "c17_named": False, "c14_deleted": True, "named_which": "拷贝构造"})
def _(ctx):
    """范围：g++ 12，-std=c++14 与 -std=c++17"""
    c17, _ = _compiles(ctx, "pinned.cpp", "c++17", NO_ELIDE)
    c14, c14_error = _compiles(ctx, "pinned.cpp", "c++14")
    named, named_error = _compiles(ctx, "pinned.cpp", "c++17", "-DPINNED_NAMED")
    deleted = "use of deleted function" in named_error
    which = ("拷贝构造" if deleted and "Pinned(const Pinned&)" in named_error
             else "移动构造" if deleted and "Pinned(Pinned&&)" in named_error else "（别的函数）")
    return {"c17": c17, "c14": c14, "c17_named": named, "c14_error": c14_error, "c17_named_error": named_error,
            "c14_deleted": "use of deleted function" in c14_error and "Pinned(Pinned&&)" in c14_error,
            "named_which": which}


@claim("move.nrvo", question=Q, needs=["g++"],
       statement="返回具名局部变量（`T t; …; return t;`）：默认编译拷贝 {c17_default_copies} 次、移动 {c17_default_moves} 次，"
                 "这是 NRVO，`t` 直接建在调用方的对象里；加 `-fno-elide-constructors` 后移动 {c17_flag_moves} 次"
                 "（C++14 下 {c14_flag_moves} 次），拷贝仍是 {c17_flag_copies} 次：`return` 局部变量时先按右值找构造函数。",
       expect={"c17_default_copies": 0, "c17_default_moves": 0, "c17_flag_copies": 0, "c17_flag_moves": 1,
               "c14_flag_moves": 2, "c14_default_moves": 0})
def _(ctx):
    """范围：g++ 12，-std=c++14 与 -std=c++17，-O2"""
    e = _elision(ctx)
    return {**_cm("c17_default", e["c++17.default"]["named"]), **_cm("c17_flag", e["c++17.no_elide"]["named"]),
            **_cm("c14_default", e["c++14.default"]["named"]), **_cm("c14_flag", e["c++14.no_elide"]["named"])}


@claim("move.nrvo-blocked", question=Q, needs=["g++"],
       statement="默认编译下 NRVO 做不成的三种写法，各移动一次、不拷贝：按条件返回两个局部变量之一（拷贝 {two_named_copies}、"
                 "移动 {two_named_moves}），返回按值传入的参数（{param_copies}、{param_moves}），`return std::move(t);`"
                 "（{moved_local_copies}、{moved_local_moves}）；最后一种比直接 `return t;`（{named_moves} 次移动）多一次。"
                 "`-Wall -Werror` 编译时 g++ {warns:?报出|没报} `-Wpessimizing-move`，不加 `-Wall` 时{warns_plain:?也报|不报}："
                 "这条警告由 `-Wall` 打开。返回右值引用参数（`T f(T&& p) { return p; }`）是例外：`p` 有名字，是左值，"
                 "C++17 下拷贝 {rref_c17_copies} 次、移动 {rref_c17_moves} 次，C++20 起才按右值走移动"
                 "（拷贝 {rref_c20_copies}、移动 {rref_c20_moves}）。",
       expect={"two_named_copies": 0, "two_named_moves": 1, "param_copies": 0, "param_moves": 1,
               "moved_local_copies": 0, "moved_local_moves": 1, "named_moves": 0, "warns": True, "warns_plain": False,
               "rref_c17_copies": 1, "rref_c17_moves": 0, "rref_c20_copies": 0, "rref_c20_moves": 1})
def _(ctx):
    """范围：g++ 12，-std=c++17/20 -O2"""
    e = _elision(ctx)["c++17.default"]
    c20 = _run(ctx, "elision.cpp", "c++20")
    messages = {}
    for name, wall in (("wall", ("-Wall",)), ("plain", ())):  # compile only, every warning an error
        folder = ctx.snippet_dir()
        ran = cxx.outcome([folder / "elision.cpp", folder / HEADER],
                          [MODES["c++17"], OPT, *wall, "-Werror", "-c", "elision.cpp", "-o", "elision.o"])
        messages[name] = ran.output
    return {**_cm("two_named", e["two_named"]), **_cm("param", e["param"]), **_cm("moved_local", e["moved_local"]),
            **_cm("named", e["named"]), **_cm("rref_c17", e["rref_param"]), **_cm("rref_c20", c20["rref_param"]),
            "messages": messages, "warns": "[-Werror=pessimizing-move]" in messages["wall"],
            "warns_plain": "pessimizing-move" in messages["plain"]}
