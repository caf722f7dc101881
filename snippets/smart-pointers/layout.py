"""sizeof of the smart pointers, and the heap allocations each way of creating them makes (g++ programs)."""

from __future__ import annotations

import subprocess

from verify import cxx
from verify.claim import claim

Q = "smart-pointers"


def build_run(ctx, source: str) -> dict[str, str]:
    """Build ``source`` (with counting.h beside it) with g++ -O2 once per source, flags and compiler (verify.cxx),
    run it, and parse its ``key=value`` lines."""
    here = ctx.snippet_dir()
    prog = cxx.build({n: here / n for n in (source, "counting.h")}, ("-O2",), std=("-std=c++17",))
    out = subprocess.run([str(prog)], cwd=ctx.workdir, capture_output=True, text=True, timeout=30, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def _ints(values: dict[str, str], prefix: str) -> dict[str, int]:
    return {k[len(prefix) + 1:]: int(v) for k, v in values.items() if k.startswith(prefix + ".")}


@claim("sp.unique-sizeof", question=Q, needs=["g++"],
       statement="默认删除器的 `std::unique_ptr<Widget>` 和裸指针一样大，都是 {unique:bytes}；无状态的 lambda 删除器也不占空间"
                 "（{unique_lambda:bytes}）；函数指针删除器要把那个指针存下来，变成 {unique_fnptr:bytes}；`std::function` "
                 "删除器是 {unique_std_function:bytes}。删除器{deleter_in_type:?是|不是} `unique_ptr` 类型的一部分。",
       expect={"unique_is_raw": True, "lambda_is_raw": True, "fnptr_is_two_pointers": True,
               "std_function_bigger": True, "deleter_in_type": True})
def _(ctx):
    v = {k: int(x) for k, x in build_run(ctx, "sizes.cpp").items()}
    raw = v["raw"]
    return {"raw": raw, "unique": v["unique"], "unique_lambda": v["unique_lambda"], "unique_fnptr": v["unique_fnptr"],
            "unique_std_function": v["unique_std_function"], "deleter_in_type": bool(v["unique_deleter_in_type"]),
            "unique_is_raw": v["unique"] == raw, "lambda_is_raw": v["unique_lambda"] == raw,
            "fnptr_is_two_pointers": v["unique_fnptr"] == 2 * raw,
            "std_function_bigger": v["unique_std_function"] > v["unique_fnptr"]}


@claim("sp.shared-sizeof", question=Q, needs=["g++"],
       statement="`shared_ptr` 和 `weak_ptr` 都是两个指针大（{shared:bytes}、{weak:bytes}）：一个指向对象，一个指向控制块。"
                 "自定义删除器存在控制块里，带删除器的 `shared_ptr<Widget>` 仍是 {shared_custom:bytes}、仍是同一个类型，"
                 "能和普通的放进同一个数组；`std::get_deleter` 在它的控制块里{custom_deleter_found:?找到了|没找到}那个函数指针，"
                 "在 `make_shared` 出的那个里{plain_deleter_found:?也找到了|找不到}。",
       expect={"shared_is_two_pointers": True, "weak_is_two_pointers": True, "custom_same_size": True,
               "custom_deleter_found": True, "plain_deleter_found": False, "one_array": 2})
def _(ctx):
    v = {k: int(x) for k, x in build_run(ctx, "sizes.cpp").items()}
    raw = v["raw"]
    return {"raw": raw, "shared": v["shared"], "weak": v["weak"], "shared_custom": v["shared_custom"],
            "shared_is_two_pointers": v["shared"] == 2 * raw, "weak_is_two_pointers": v["weak"] == 2 * raw,
            "custom_same_size": v["shared_custom"] == v["shared"], "one_array": v["shared_array_len"],
            "custom_deleter_found": bool(v["custom_deleter_found"]), "plain_deleter_found": bool(v["plain_deleter_found"])}


@claim("sp.make-shared-one-allocation", question=Q, needs=["g++"],
       statement="替换全局 `operator new` 来数分配：对 {sizeof_widget:bytes} 的 `Widget`，`std::make_shared<Widget>()` 只分配 "
                 "{make_shared.allocations} 次、共 {make_shared.bytes:bytes}，控制块和对象在同一块内存里；"
                 "`std::shared_ptr<Widget>(new Widget)` 分配 {shared_new.allocations} 次、共 {shared_new.bytes:bytes}："
                 "`new` 出的对象一块，单独的控制块（引用计数、弱计数和指向对象的指针）又一块。`std::make_unique` 只分配对象本身："
                 "{make_unique.allocations} 次、{make_unique.bytes:bytes}。",
       expect={"sizeof_widget": 64, "make_shared_allocations": 1, "shared_new_allocations": 2,
               "make_unique_allocations": 1, "make_unique_bytes": 64, "make_shared_holds_object": True,
               "make_shared_smaller": True})
def _(ctx):
    v = build_run(ctx, "alloc.cpp")
    out = {name: _ints(v, name) for name in ("make_unique", "make_shared", "shared_new")}
    out["sizeof_widget"] = int(v["sizeof_widget"])
    for name in ("make_unique", "make_shared", "shared_new"):  # flat copies of what is checked
        out[f"{name}_allocations"] = out[name]["allocations"]
    out["make_unique_bytes"] = out["make_unique"]["bytes"]
    out["make_shared_holds_object"] = out["make_shared"]["bytes"] > out["sizeof_widget"]
    out["make_shared_smaller"] = out["make_shared"]["bytes"] < out["shared_new"]["bytes"]
    return out


@claim("sp.copy-and-convert", question=Q, needs=["g++"],
       statement="拷贝 `shared_ptr`、从它构造 `weak_ptr` 都不分配内存（{copy.allocations} 次），只改控制块里的计数，"
                 "`use_count` 变成 {copy.use_count}；移动（`std::move`）连计数也不改，`use_count` 仍是 {move.use_count}，源"
                 "{move_source_null:?变空|不变空}。把 `unique_ptr` 移交给 `shared_ptr` 时，对象不动（"
                 "{same_object:?还是同一个对象|换了对象}，原 `unique_ptr` {source_null:?变空|不变空}），但要为它新分配一个控制块："
                 "{from_unique.allocations} 次、{from_unique.bytes:bytes}。",
       expect={"copy": {"allocations": 0, "use_count": 2}, "move": {"allocations": 0, "use_count": 1, "source_null": 1},
               "move_source_null": True, "from_unique_allocations": 1, "same_object": True,
               "source_null": True})
def _(ctx):
    v = build_run(ctx, "alloc.cpp")
    from_unique = _ints(v, "from_unique")
    move = _ints(v, "move")
    return {"copy": _ints(v, "copy"), "move": move, "move_source_null": bool(move["source_null"]),
            "from_unique": {"allocations": from_unique["allocations"], "bytes": from_unique["bytes"]},
            "from_unique_allocations": from_unique["allocations"],
            "same_object": bool(from_unique["same_object"]), "source_null": bool(from_unique["source_null"])}


@claim("sp.weak-keeps-block", question=Q, needs=["g++"],
       statement="对象很大、又有活得更久的 `weak_ptr` 时，`make_shared` 反而占内存：它把 {sizeof_big:bytes} 的对象放在控制块里，"
                 "最后一个 `shared_ptr` 放手时析构函数照常运行（{make_shared.destroyed_after_reset} 次，`expired()` "
                 "{expired_make_shared:?为真|为假}），内存却要等最后一个 `weak_ptr` 也离开才释放，这期间仍占着 "
                 "{make_shared.live_with_weak_only:bytes}；`shared_ptr<Big>(new Big)` 的对象内存当场归还，"
                 "只剩 {shared_new.live_with_weak_only:bytes} 的控制块。`weak_ptr` 离开后两边都归零"
                 "（{make_shared.live_after_weak_reset}、{shared_new.live_after_weak_reset}）。",
       expect={"destroyed_after_reset": [1, 1], "expired": [True, True], "live_after_weak_reset": [0, 0],
               "make_shared_holds_object": True, "shared_new_freed_object": True})
def _(ctx):
    v = build_run(ctx, "weak_block.cpp")
    big = int(v["sizeof_big"])
    out = {"sizeof_big": big, "make_shared": _ints(v, "make_shared"), "shared_new": _ints(v, "shared_new")}
    for key in ("destroyed_after_reset", "expired", "live_after_weak_reset"):  # [make_shared, shared_new]
        out[key] = [out["make_shared"][key], out["shared_new"][key]]
    out["expired"] = [bool(e) for e in out["expired"]]
    out["expired_make_shared"] = out["expired"][0]
    out["make_shared_holds_object"] = out["make_shared"]["live_with_weak_only"] >= big
    out["shared_new_freed_object"] = out["shared_new"]["live_with_weak_only"] < big
    return out
