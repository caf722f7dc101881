"""Where the page's LRUs stop holding: capacity 0 (every implementation of lru.py and lru.h/lru.cpp, against
functools.lru_cache(maxsize=0)), and how long lru_cache on a method keeps `self` (until its entry is evicted or
the cache is cleared), over two maxsizes."""

from __future__ import annotations

import ast
import functools
import gc
import subprocess
import weakref
from collections import OrderedDict
from pathlib import Path

from verify import cxx
from verify.claim import claim

Q = "lru-cache"
PY_SOURCE = "lru.py"
CPP_SOURCES = ("lru.h", "lru.cpp")
PY_CLASSES = ("Reference", "OrderedDictLRU", "_Node", "LinkedLRU", "TTLCache", "TTLReference")


def _py_classes(folder: Path) -> dict:
    """The page's Python caches, compiled from lru.py's class definitions alone (importing the file would
    declare its claims a second time)."""
    tree = ast.parse((folder / PY_SOURCE).read_text(encoding="utf-8"))
    body = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in PY_CLASSES]
    namespace: dict = {"OrderedDict": OrderedDict}
    exec(compile(ast.Module(body=body, type_ignores=[]), PY_SOURCE, "exec"), namespace)  # noqa: S102
    return namespace


def _uncap_data():
    """ASan reserves terabytes of address space for its shadow memory; the worker's RLIMIT_DATA would refuse it."""
    import resource  # noqa: PLC0415

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


def _asan_error(stderr: str) -> str:
    """The kind of error ASan's summary line names (``SUMMARY: AddressSanitizer: bad-free ...``)."""
    line = next((ln for ln in stderr.splitlines() if ln.startswith("SUMMARY: AddressSanitizer:")), "")
    return line.split("AddressSanitizer:", 1)[1].split()[0] if line else stderr[-200:]


@claim("lru.capacity-zero", question=Q, needs=["g++"], timeout=300,
       statement="上面所有实现都默认容量至少为 1（对拍用的容量最小是 1）。容量为 0 时，第一次 `put` 就满足“size == capacity”，"
                 "去删一个空表的表尾：Python 的 O(n) 参考模型抛 `{py.Reference}`，`OrderedDict` 版抛 `{py.OrderedDictLRU}`，"
                 "带哨兵的链表版把哨兵当表尾摘下、再删它的 key，抛 `{py.LinkedLRU}`，TTL 版抛 `{py.TTLCache}`；"
                 "C++ 的两个版本（`-fsanitize=address` 编译）都把不是 `new` 出来的表头节点释放掉，"
                 "ASan 报 `{cpp.list}`（`std::list` 版：对空 `std::list` 调 `back`/`pop_back` 是未定义行为，libstdc++ 下 `pop_back` 释放了表头）、`{cpp.hand}`（手写链表版，`delete` 了哨兵）。标准库的 "
                 "`functools.lru_cache(maxsize=0)` 单独处理了这种情况：同一个参数调两次，hits={zero.hits}、"
                 "misses={zero.misses}、currsize={zero.currsize}，等于不缓存。要支持容量 0，`put` 开头就得先判断。",
       expect={"py": {"Reference": "IndexError", "OrderedDictLRU": "KeyError", "LinkedLRU": "KeyError",
                      "TTLCache": "KeyError"},
               "cpp": {"list": "bad-free", "hand": "bad-free"},
               "cpp_rc_nonzero": {"list": True, "hand": True},
               "zero": {"hits": 0, "misses": 2, "currsize": 0}})
def _(ctx):
    folder = Path(ctx.snippet_dir())
    ns = _py_classes(folder)
    py = {}
    for name in ("Reference", "OrderedDictLRU", "LinkedLRU"):
        try:
            ns[name](0).put(1, 10)
            py[name] = "no error"
        except Exception as exc:  # noqa: BLE001 -- which exception is the observation
            py[name] = type(exc).__name__
    try:
        ns["TTLCache"](0, lambda: 0.0).put(1, 10, ttl=5)
        py["TTLCache"] = "no error"
    except Exception as exc:  # noqa: BLE001
        py["TTLCache"] = type(exc).__name__

    work = Path(ctx.workdir)
    asan = cxx.build({n: folder / n for n in CPP_SOURCES}, ("-O1", "-g", "-fsanitize=address", "-pthread"), name="asan",
                     std=("-std=c++17",))
    cpp, rc = {}, {}
    for impl in ("list", "hand"):
        run = subprocess.run([str(asan), "ops", impl], input="cap 0\np 1 10\ng 1\n", cwd=work,
                             capture_output=True, text=True, timeout=60, preexec_fn=_uncap_data)
        cpp[impl], rc[impl] = _asan_error(run.stderr), run.returncode != 0

    @functools.lru_cache(maxsize=0)
    def f(x):
        return x

    f(1), f(1)
    info = f.cache_info()
    return {"py": py, "cpp": cpp, "cpp_rc_nonzero": rc,
            "zero": {"hits": info.hits, "misses": info.misses, "currsize": info.currsize}}


@claim("lru.method-self-lifetime", question=Q,
       statement="`lru_cache` 持有 `self` 只到含它的项都离开缓存为止（这里每个实例只调一组参数，只有一项）：方法上的 `maxsize=1` 时，`m.forward(1)` 之后 `del m`、"
                 "`gc.collect()`，实例{bounded.alive_after_del:?还活着|已被释放}；另一个实例再调一次 `forward`，"
                 "`m` 那一项被淘汰，实例随之{bounded.alive_after_evict:?仍然活着|被释放}。`maxsize=None` 从不淘汰，"
                 "同样的第二次调用之后实例{unbounded.alive_after_evict:?仍然活着|被释放}，要等 `cache_clear()` 才"
                 "{unbounded.alive_after_clear:?仍不释放|释放}。所以“实例泄漏”的大小取决于 `maxsize`：有界时最多占着 "
                 "`maxsize` 项，不设上限时一直累积。",
       expect={"bounded": {"alive_after_del": True, "alive_after_evict": False, "alive_after_clear": False},
               "unbounded": {"alive_after_del": True, "alive_after_evict": True, "alive_after_clear": False}})
def _(ctx):
    def lifetime(maxsize):
        class Model:
            @functools.lru_cache(maxsize=maxsize)  # noqa: B019 -- the reference to self is what this claim shows
            def forward(self, x):
                return x + 1

        m, other = Model(), Model()
        m.forward(1)
        ref = weakref.ref(m)
        del m
        gc.collect()
        out = {"alive_after_del": ref() is not None}
        other.forward(1)
        gc.collect()
        out["alive_after_evict"] = ref() is not None
        Model.forward.cache_clear()
        gc.collect()
        out["alive_after_clear"] = ref() is not None
        return out

    return {"bounded": lifetime(1), "unbounded": lifetime(None)}
