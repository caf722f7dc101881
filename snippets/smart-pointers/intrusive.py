"""c10::intrusive_ptr, the smart pointer a Tensor is in C++: a g++ program against the torch wheel's headers, and Python."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import torch

from verify import cxx
from verify.claim import claim

Q = "smart-pointers"
SOURCES = ("intrusive.cpp", "counting.h")


@functools.cache
def _program(folder: str) -> Path:
    """intrusive.cpp against the torch wheel's headers and libc10, built once per source, flags and compiler by the
    project's g++ builder (verify.cxx); the wheel's folders and its version (a define nothing reads) are among
    the flags, so another torch builds again."""
    from torch.utils import cpp_extension  # noqa: PLC0415

    here = Path(folder)
    lib = cpp_extension.library_paths()[0]
    flags = ("-O2", "-w", *(f"-I{p}" for p in cpp_extension.include_paths()), f"-DSP_TORCH_VERSION={torch.__version__}")
    return cxx.build({n: here / n for n in SOURCES}, flags, std=("-std=c++20",),
                     link=(f"-L{lib}", "-lc10", f"-Wl,-rpath,{lib}"))


def _run(ctx) -> dict[str, int]:
    prog = _program(str(ctx.snippet_dir()))
    out = subprocess.run([str(prog)], capture_output=True, text=True, timeout=30, check=True).stdout
    return {k: int(v) for k, v in (line.split("=", 1) for line in out.splitlines() if "=" in line)}


def _group(v: dict[str, int], prefix: str) -> dict[str, int]:
    return {k[len(prefix) + 1:]: x for k, x in v.items() if k.startswith(prefix + ".")}


@claim("sp.intrusive-sizeof", question=Q, needs=["g++"], timeout=300,
       statement="用 torch wheel 自带的头文件编译：`c10::intrusive_ptr<T>` 只有一个指针大（{intrusive:bytes}），`std::shared_ptr` 是 "
                 "{shared:bytes}；`at::Tensor` 本身就是一个 `intrusive_ptr<TensorImpl>`，也是 {tensor:bytes}。计数在对象里："
                 "基类 `intrusive_ptr_target` 占 {target:bytes}（虚表指针，加上面那组计数），"
                 "{payload:bytes} 数据的 `Node` 继承它后是 {node:bytes}。`make_intrusive<Node>()` 分配 "
                 "{make_intrusive.allocations} 次、{make_intrusive.bytes:bytes}，和同样数据的 `make_shared`"
                 "（{make_shared.allocations} 次、{make_shared.bytes:bytes}）一样：省下的不是分配，而是句柄的一半。",
       expect={"intrusive_is_raw": True, "shared_is_two_pointers": True, "tensor_is_raw": True, "target": 16,
               "node_is_target_plus_payload": True, "make_intrusive": {"allocations": 1, "bytes": 64},
               "make_shared": {"allocations": 1, "bytes": 64}})
def _(ctx):
    v = _run(ctx)
    raw = v["raw"]
    return {"raw": raw, "intrusive": v["intrusive"], "weak_intrusive": v["weak_intrusive"], "shared": v["shared"],
            "tensor": v["tensor"], "tensor_impl_ptr": v["tensor_impl_ptr"], "target": v["target"], "payload": v["payload"],
            "node": v["node"], "make_intrusive": _group(v, "make_intrusive"), "make_shared": _group(v, "make_shared"),
            "intrusive_is_raw": v["intrusive"] == raw, "shared_is_two_pointers": v["shared"] == 2 * raw,
            "tensor_is_raw": v["tensor"] == raw == v["tensor_impl_ptr"],
            "node_is_target_plus_payload": v["node"] == v["target"] + v["payload"]}


@claim("sp.intrusive-raw-pointer", question=Q, needs=["g++"], timeout=300,
       statement="因为计数在对象里，`intrusive_ptr` 和裸指针可以来回转：拷贝一次 `use_count` 变成 {copy.use_count}、不分配内存"
                 "（{copy.allocations} 次），移动不改计数；`release()` 交出裸指针、不减计数，句柄{release_null:?变空|仍然有效}，"
                 "`intrusive_ptr::reclaim(raw)` 接回来、不加计数，`use_count` 仍是 {reclaim.use_count}，"
                 "{reclaim_same:?还是同一个对象|已不是同一个对象}。从一个裸指针再造一个拥有者"
                 "（`unsafe_reclaim_from_nonowning`）用的还是对象里那一份计数：`use_count` 变成 {nonowning.use_count}，"
                 "它离开作用域后回到 {nonowning.after_use_count}，对象被析构 {nonowning.destroyed} 次。"
                 "同样的事对 `shared_ptr` 是两个控制块、两次 delete。",
       expect={"copy": {"use_count": 2, "allocations": 0}, "move": {"use_count": 2, "source_null": 1},
               "release_null": True, "reclaim": {"use_count": 1, "same_object": 1}, "reclaim_same": True,
               "nonowning": {"use_count": 2, "after_use_count": 1, "destroyed": 0}})
def _(ctx):
    v = _run(ctx)
    reclaim = _group(v, "reclaim")
    return {"fresh_use_count": v["fresh.use_count"], "copy": _group(v, "copy"), "move": _group(v, "move"),
            "release_null": bool(v["release.handle_null"]), "reclaim": reclaim,
            "reclaim_same": bool(reclaim["same_object"]), "nonowning": _group(v, "nonowning")}


@claim("sp.intrusive-weak", question=Q, needs=["g++"], timeout=300,
       statement="`weak_intrusive_ptr` 的规则和 `make_shared` 出的对象一样，只是分成两步：有一个弱引用时 `weak_use_count` 是 "
                 "{weak.weak_use_count}（弱引用数，强计数大于 0 时再加 1）；最后一个强引用放手时调用的是虚函数 "
                 "`release_resources()`（{weak.released} 次），析构函数运行 {weak.destroyed_after_reset} 次，释放的内存为 "
                 "{weak.freed_after_reset:bytes}，`expired()` {expired:?为真|为假}、`lock()` {lock_null:?返回空|返回有效指针}；"
                 "弱引用也放手后才析构（{weak.destroyed_after_weak_reset} 次），还回 {weak.freed_after_weak_reset:bytes}。"
                 "StorageImpl 的 `release_resources()` 就是 `data_ptr_.clear()`：强引用一走就还掉张量数据，只把对象本身留给弱引用。",
       expect={"weak": {"use_count": 1, "weak_use_count": 2, "released": 1, "destroyed_after_reset": 0, "expired": 1,
                        "lock_null": 1, "freed_after_reset": 0, "destroyed_after_weak_reset": 1,
                        "freed_after_weak_reset": 64},
               "expired": True, "lock_null": True})
def _(ctx):
    v = _run(ctx)
    weak = _group(v, "weak")
    return {"weak": weak, "expired": bool(weak["expired"]), "lock_null": bool(weak["lock_null"])}


@claim("sp.tensor-refcount-python", question=Q,
       statement="从 Python 看同一个计数：新建的 `t` 的 `t._use_count()`（TensorImpl 的强计数）是 {fresh}，Python 的引用属于 "
                 "PyObject，不进这个计数：`a = t`、放进列表之后仍是 {after_alias}，而 `sys.getrefcount(t)` 从 {py_before} "
                 "变成 {py_after}。一个 PyObject 只持有 TensorImpl 的一个强引用，C++ 里的持有者才加计数：`v = t.view(3)` "
                 "之后是 {with_view}（view 经 `_base` 持有 `t`），`del v` 后回到 {after_del}。`d = t.detach()` 是新的 "
                 "TensorImpl，共享的是 StorageImpl：`torch._C._storage_Use_Count` 数到 {storage_count}（`t`、`d` 各一，"
                 "取 `untyped_storage()` 得到的 Python 对象一个）。反过来，C++ 持有者也让 PyObject 活着：给 `x` 设一个属性、"
                 "建 view 后 `del x`，`v._base` {same_pyobject:?还是原来那个 Python 对象|已换成新的 Python 对象}，"
                 "属性{attr_kept:?还在|丢了}。",
       expect={"fresh": 1, "after_alias": 1, "with_view": 2, "after_del": 1, "detach_use_count": 1, "storage_count": 3,
               "same_pyobject": True, "attr_kept": True, "py_grew": True})
def _(ctx):
    import gc  # noqa: PLC0415
    import sys  # noqa: PLC0415

    t = torch.randn(3, device=ctx.device)
    fresh = t._use_count()
    py_before = sys.getrefcount(t)
    a = t
    names = [t, t]
    after_alias = t._use_count()
    py_after = sys.getrefcount(t)
    v = t.view(3)
    with_view, base_is_t = t._use_count(), v._base is t
    del v
    after_del = t._use_count()
    d = t.detach()
    s = t.untyped_storage()
    storage_count = torch._C._storage_Use_Count(s._cdata)
    del a, names, d, s
    # PyObject preservation: the view's C++ reference to its base keeps the base's Python object.
    x = torch.randn(3, device=ctx.device)
    x.tag = "kept"
    x_id = id(x)
    v = x.view(3)
    del x
    gc.collect()
    return {"fresh": fresh, "after_alias": after_alias, "py_before": py_before, "py_after": py_after,
            "py_grew": py_after > py_before, "with_view": with_view, "base_is_t": base_is_t, "after_del": after_del,
            "detach_use_count": t.detach()._use_count(), "storage_count": storage_count,
            "same_pyobject": id(v._base) == x_id, "attr_kept": getattr(v._base, "tag", None) == "kept"}
