"""Containers and moves: what std::vector's growth does with its elements (copied or moved, by the element's
move constructor), how libstdc++ grows the capacity, push_back against emplace_back, and which insertions move
the elements a program holds pointers to (addresses compared as integers, never dereferenced).

Programs are built by the project's g++ builder (verify.cxx), -std=c++17 -O2, and print ``key=value`` lines.
"""

from __future__ import annotations

import re
import subprocess

from verify import cxx
from verify.claim import claim

Q = "cpp-move-semantics"
COUNTER = "tracer.h"


def _output(ctx, source: str) -> dict[str, str]:
    """Build ``source`` with tracer.h and read its lines."""
    here = ctx.snippet_dir()
    prog = cxx.build([here / source, here / COUNTER], ["-O2"])
    lines = subprocess.run([str(prog)], cwd=ctx.workdir, capture_output=True, text=True, timeout=60,
                           check=True).stdout.splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _realloc_body(ctx) -> str:
    """The body of libstdc++'s vector<T>::_M_realloc_insert as growth.cpp sees it (g++ -E through the builder),
    up to its catch block: the code that moves or copies the old elements into the new buffer."""
    here = ctx.snippet_dir()
    folder = cxx.build_steps([here / "growth.cpp", here / COUNTER], [[*cxx.STD, "-E", "growth.cpp", "-o", "growth.ii"]])
    text = (folder / "growth.ii").read_text(encoding="utf-8", errors="replace")
    start = re.search(r"vector<_Tp, _Alloc>::\s*_M_realloc_insert\(iterator __position, _Args&&\.\.\. __args\)", text)
    if start is None:
        return ""
    return text[start.end():text.index("catch(...)", start.end())]


def _pair(prefix: str, text: str) -> dict[str, int]:
    copies, moves = (int(x) for x in text.split(","))
    return {f"{prefix}_copies": copies, f"{prefix}_moves": moves}


def _growth(ctx) -> dict[str, dict]:
    """growth.cpp's element types: copies and moves over all reallocations, allocations, capacities."""
    v = _output(ctx, "growth.cpp")
    out: dict[str, dict] = {}
    for name in ("noexcept", "throwing", "legacy", "defaulted", "modern", "move_only", "reserved"):
        out[name] = {**_pair("relocated", v[name]), "allocations": int(v[f"{name}.allocations"]),
                     "nothrow_move": v[f"{name}.nothrow_move"] == "1",
                     "caps": [int(c) for c in v[f"{name}.caps"].split(",") if c], "n": int(v["n"])}
    relocated, at = (int(x) for x in v["scan.max"].split(","))
    out["scan"] = {"max_relocated": relocated, "max_at": at, "up_to": int(v["scan.n"]),
                   "at": {int(k): int(x) for k, x in (kv.split(":") for kv in v["scan.at"].split(",") if kv)}}
    return out


@claim("move.vector-growth-noexcept", question=Q, needs=["g++"],
       statement="往空 `std::vector` 里逐个 `emplace_back` {n} 个元素，扩容时搬旧元素：移动构造是 `noexcept` 的类型"
                 "拷贝 {noexcept_copies} 次、移动 {noexcept_moves} 次；同一个计数类型模板只去掉移动构造上的 `noexcept`，变成拷贝 "
                 "{throwing_copies} 次、移动 {throwing_moves} 次。libstdc++ 扩容的 `_M_realloc_insert` 里，移动不抛时逐个移动"
                 "（`_S_use_relocate()` 分支：{relocate_branch:?有|没有}），否则{uses_move_if_noexcept:?调用|不调用} "
                 "`__uninitialized_move_if_noexcept_a`，即逐元素的 `std::move_if_noexcept`：移动可能抛异常时改用拷贝，"
                 "保住 `push_back` 的强异常保证。",
       expect={"noexcept_copies": 0, "noexcept_moves": 1023, "throwing_copies": 1023, "throwing_moves": 0,
               "noexcept_nothrow": True, "throwing_nothrow": False, "relocate_branch": True,
               "uses_move_if_noexcept": True})
def _(ctx):
    """范围：g++ 12 的 libstdc++，计数类型"""
    g, body = _growth(ctx), _realloc_body(ctx)
    return {"n": g["noexcept"]["n"], "noexcept_copies": g["noexcept"]["relocated_copies"],
            "noexcept_moves": g["noexcept"]["relocated_moves"], "throwing_copies": g["throwing"]["relocated_copies"],
            "throwing_moves": g["throwing"]["relocated_moves"], "noexcept_nothrow": g["noexcept"]["nothrow_move"],
            "throwing_nothrow": g["throwing"]["nothrow_move"], "relocate_branch": "_S_use_relocate()" in body,
            "uses_move_if_noexcept": "__uninitialized_move_if_noexcept_a" in body}


@claim("move.vector-growth-implicit", question=Q, needs=["g++"],
       statement="同样 {n} 次 `emplace_back`，成员是同一个计数类型（移动 `noexcept`）：什么都不声明的类，编译器生成的移动构造"
                 "也是 `noexcept`，扩容移动 {modern_moves} 次、拷贝 {modern_copies} 次；只多写一个空析构函数 `~Legacy() {}`，"
                 "移动构造就不再隐式生成，扩容拷贝 {legacy_copies} 次、移动 {legacy_moves} 次；写成 `~Defaulted() = default;` "
                 "也算用户声明，同样拷贝 {defaulted_copies} 次、移动 {defaulted_moves} 次；移动可能抛、但拷贝构造被删除的类型"
                 "没有退路，仍然移动 {move_only_moves} 次（这时强异常保证没了）。",
       expect={"modern_copies": 0, "modern_moves": 1023, "legacy_copies": 1023, "legacy_moves": 0,
               "defaulted_copies": 1023, "defaulted_moves": 0, "move_only_copies": 0, "move_only_moves": 1023,
               "legacy_nothrow": False})
def _(ctx):
    """范围：g++ 12 的 libstdc++，计数类型"""
    g = _growth(ctx)
    out = {"n": g["legacy"]["n"], "legacy_nothrow": g["legacy"]["nothrow_move"]}
    for name in ("modern", "legacy", "defaulted", "move_only"):
        out[f"{name}_copies"] = g[name]["relocated_copies"]
        out[f"{name}_moves"] = g[name]["relocated_moves"]
    return out


@claim("move.vector-capacity", question=Q, needs=["g++"],
       statement="libstdc++ 的 `std::vector` 逐个追加 {n} 个元素，容量依次是 {caps}：每次翻倍，计数分配器数到 "
                 "{allocations} 次分配，扩容一共搬了 {relocated} 个元素。元素数 n 从 1 逐个加到 {up_to}，每个 n 上算搬运量与 n 之比："
                 "最大是 {max_ratio:.2f}（n = {max_at}，刚越过一次翻倍；n 为 {at} 时搬运量依次是 {at_relocated}），都小于 2："
                 "几何增长让每次追加均摊常数次搬运。先 `reserve({n})`：分配 {reserved_allocations} 次，搬元素 {reserved_relocated} 次。",
       expect={"caps": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "allocations": 11, "relocated": 1023,
               "max_ratio": {"<": 2}, "max_at": 513, "reserved_allocations": 1, "reserved_relocated": 0})
def _(ctx):
    """范围：g++ 12 的 libstdc++"""
    g = _growth(ctx)
    relocated = g["noexcept"]["relocated_moves"] + g["noexcept"]["relocated_copies"]
    return {"n": g["noexcept"]["n"], "caps": g["noexcept"]["caps"], "allocations": g["noexcept"]["allocations"],
            "relocated": relocated, "up_to": g["scan"]["up_to"], "max_ratio": g["scan"]["max_relocated"] / g["scan"]["max_at"],
            "max_at": g["scan"]["max_at"], "at": list(g["scan"]["at"]), "at_relocated": list(g["scan"]["at"].values()),
            "reserved_allocations": g["reserved"]["allocations"],
            "reserved_relocated": g["reserved"]["relocated_moves"] + g["reserved"]["relocated_copies"]}


@claim("move.emplace-vs-push", question=Q, needs=["g++"],
       statement="预留了容量（不扩容）时数元素本身的拷贝和移动：`push_back(T{2})` 构造临时对象再移动 {push_temp_moves} 次；"
                 "`emplace_back(2)` 在 vector 的内存里直接构造，拷贝 {emplace_args_copies}、移动 {emplace_args_moves}；"
                 "传左值时两者一样，各拷贝 {push_lvalue_copies} / {emplace_lvalue_copies} 次；`emplace_back(T{2})` "
                 "也得移动 {emplace_temp_moves} 次：已经建好的对象交给 `emplace_back` 不省什么。",
       expect={"push_temp_copies": 0, "push_temp_moves": 1, "emplace_args_copies": 0, "emplace_args_moves": 0,
               "push_lvalue_copies": 1, "emplace_lvalue_copies": 1, "emplace_temp_moves": 1, "push_moved_moves": 1})
def _(ctx):
    """范围：g++ 12 的 libstdc++，计数类型"""
    v = _output(ctx, "emplace.cpp")
    out: dict[str, int] = {}
    for name in ("push_temp", "emplace_args", "push_lvalue", "emplace_lvalue", "push_moved", "emplace_temp"):
        out.update(_pair(name, v[name]))
    return out


@claim("move.invalidation-vector", question=Q, needs=["g++"],
       statement="`std::vector` 逐个 `push_back` {pushes} 次，缓冲区地址变了 {buffer_moves} 次，恰好是 `size() == capacity()` "
                 "时的那 {full_pushes} 次，还有空位时变了 {moves_with_room} 次：一扩容，指向旧元素的指针、引用、迭代器全部失效"
                 "（先存下的前 {kept} 个元素地址，之后再追加时变了 {moved} 个）。不扩容也不安全：有空位时在开头 `insert`，"
                 "下标 5 的地址{slot_same:?没变|变了}，里面却从 {held_before} 换成了 {held_after}。",
       expect={"buffer_moves": 14, "full_pushes": 14, "moves_with_room": 0, "moved": 100, "slot_same": True,
               "held_before": 5, "held_after": 4})
def _(ctx):
    """范围：g++ 12 的 libstdc++"""
    v = _output(ctx, "invalidation.cpp")
    same, before, after = (int(x) for x in v["vector.insert_front"].split(","))
    return {"pushes": int(v["more"]), "buffer_moves": int(v["vector.buffer_moves"]), "full_pushes": int(v["vector.full_pushes"]),
            "moves_with_room": int(v["vector.moves_with_room"]), "kept": int(v["kept"]), "moved": int(v["moved.vector"]),
            "slot_same": bool(same), "held_before": before, "held_after": after}


@claim("move.invalidation-nodes", question=Q, needs=["g++"],
       statement="先存下前 {kept} 个元素的地址，再插入 {more} 个，地址变了的元素个数：`deque::push_back` {deque_back}、"
                 "`deque::push_front` {deque_front}、`list` {list}、`map` {map}、`set` {set}，而 `vector` 是 {vector}。"
                 "`deque` 两端插入不搬已有元素（指针和引用有效，标准规定它的迭代器仍然失效），插入时链表和红黑树的节点不搬家。",
       expect={"deque_back": 0, "deque_front": 0, "list": 0, "map": 0, "set": 0, "vector": 100})
def _(ctx):
    """范围：g++ 12 的 libstdc++"""
    v = _output(ctx, "invalidation.cpp")
    out = {name: int(v[f"moved.{name}"]) for name in ("deque_back", "deque_front", "list", "map", "set", "vector")}
    return {"kept": int(v["kept"]), "more": int(v["more"]), **out}
