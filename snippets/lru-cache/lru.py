"""An O(1) LRU cache in C++ (std::unordered_map + std::list, and a hand-written list) and in Python (OrderedDict,
dict + linked list), each checked against an O(n) reference over random operations; the standard containers under
it observed by counting (hash / comparison calls, allocations, bucket counts, addresses); TTL, locks, lru_cache.

lru.cpp is built once per source, flags and compiler (-O2, verify.cxx) and run in several modes; race.cpp once with
ThreadSanitizer.
"""

from __future__ import annotations

import functools
import gc
import math
import platform
import random
import shutil
import subprocess
import weakref
from collections import OrderedDict
from pathlib import Path

from verify import cxx
from verify.claim import claim

Q = "lru-cache"
STD = "-std=c++17"
SEEDS = (0, 1, 2, 3)
CAPACITIES = (1, 3, 16, 100)
N_OPS = 3000


# --- the Python caches and the reference ----------------------------------------------------------------

class Reference:
    """The O(n) model: a list in recency order (front = most recent), searched linearly."""

    def __init__(self, capacity: int):
        self.capacity, self.items = capacity, []

    def _find(self, key):
        return next((i for i, (k, _) in enumerate(self.items) if k == key), -1)

    def get(self, key):
        i = self._find(key)
        if i < 0:
            return -1
        self.items.insert(0, self.items.pop(i))
        return self.items[0][1]

    def put(self, key, value):
        i = self._find(key)
        if i >= 0:
            self.items.pop(i)
            self.items.insert(0, (key, value))
            return None
        evicted = self.items.pop()[0] if len(self.items) == self.capacity else None
        self.items.insert(0, (key, value))
        return evicted


class OrderedDictLRU:
    """collections.OrderedDict: the end is the most recent; move_to_end and popitem(last=False) are O(1)."""

    def __init__(self, capacity: int):
        self.capacity, self.d = capacity, OrderedDict()

    def get(self, key):
        if key not in self.d:
            return -1
        self.d.move_to_end(key)
        return self.d[key]

    def put(self, key, value):
        if key in self.d:
            self.d[key] = value
            self.d.move_to_end(key)
            return None
        evicted = self.d.popitem(last=False)[0] if len(self.d) == self.capacity else None
        self.d[key] = value
        return evicted


class _Node:
    __slots__ = ("key", "value", "prev", "next")

    def __init__(self, key=None, value=None):
        self.key, self.value, self.prev, self.next = key, value, self, self


class LinkedLRU:
    """A dict from key to node, and a doubly linked list with one sentinel (head.next = most recent)."""

    def __init__(self, capacity: int):
        self.capacity, self.index, self.head = capacity, {}, _Node()

    def _unlink(self, n):
        n.prev.next, n.next.prev = n.next, n.prev

    def _push_front(self, n):
        n.prev, n.next = self.head, self.head.next
        self.head.next.prev = n
        self.head.next = n

    def get(self, key):
        n = self.index.get(key)
        if n is None:
            return -1
        self._unlink(n)
        self._push_front(n)
        return n.value

    def put(self, key, value):
        n = self.index.get(key)
        if n is not None:
            n.value = value
            self._unlink(n)
            self._push_front(n)
            return None
        evicted = None
        if len(self.index) == self.capacity:
            last = self.head.prev
            self._unlink(last)
            del self.index[last.key]
            evicted = last.key
        n = _Node(key, value)
        self._push_front(n)
        self.index[key] = n
        return evicted

    def consistent(self) -> bool:
        seen, n = 0, self.head.next
        while n is not self.head:
            if n.next.prev is not n or self.index.get(n.key) is not n:
                return False
            seen, n = seen + 1, n.next
        return seen == len(self.index) <= self.capacity


def _ops(seed: int, capacity: int, n: int = N_OPS) -> list[tuple]:
    """Random gets and puts (half each) over 2 * capacity + 1 keys: hits, misses, updates and evictions."""
    rng = random.Random(seed)
    keys = 2 * capacity + 1
    return [("g", rng.randrange(keys)) if rng.random() < 0.5 else ("p", rng.randrange(keys), i) for i in range(n)]


def _replay(cache, ops: list[tuple]) -> list[str]:
    """One line per operation: the value a get returns (-1 for a miss), the key a put evicts (e- for none)."""
    out = []
    for op in ops:
        if op[0] == "g":
            out.append(str(cache.get(op[1])))
        else:
            evicted = cache.put(op[1], op[2])
            out.append("e-" if evicted is None else f"e{evicted}")
    return out


# --- the C++ programs ---------------------------------------------------------------------------------

def _sh(*cmd: str, cwd: Path) -> str:
    done = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


@functools.cache
def _prog(folder: str) -> Path:
    """lru.cpp, built once per source, flags and compiler by the project's g++ builder (verify.cxx)."""
    here = Path(folder)
    return cxx.build({n: here / n for n in ("lru.h", "lru.cpp")}, ("-O2", "-pthread"), std=(STD,))


@functools.cache
def _race(folder: str) -> Path:
    here = Path(folder)
    return cxx.build({n: here / n for n in ("lru.h", "race.cpp")}, ("-O1", "-g", "-fsanitize=thread", "-pthread"),
                     name="race", std=(STD,))


def _run(ctx, *args: str, stdin: str | None = None) -> str:
    prog = _prog(str(ctx.snippet_dir()))
    return subprocess.run([str(prog), *args], input=stdin, capture_output=True, text=True, timeout=120,
                          check=True).stdout


def _kv(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _uncap_data():
    """TSan reserves terabytes of address space for its shadow memory; the worker's RLIMIT_DATA would refuse it."""
    import resource  # noqa: PLC0415

    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


def _tsan(ctx, *args: str) -> dict:
    cmd = [str(_race(str(ctx.snippet_dir()))), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, preexec_fn=_uncap_data)
    if "unexpected memory mapping" in done.stderr and shutil.which("setarch"):
        # Some kernels randomise the address space more than this TSan runtime expects: run without ASLR.
        done = subprocess.run(["setarch", platform.machine(), "-R", *cmd], capture_output=True, text=True, timeout=60,
                              preexec_fn=_uncap_data)
    races = done.stderr.count("WARNING: ThreadSanitizer: data race")
    if races == 0 and done.returncode != 0:
        raise RuntimeError(f"race {args} exited with {done.returncode}: {done.stderr[-800:]}")
    frame = next((line.strip()[3:].split(" /")[0] for line in done.stderr.splitlines()
                  if line.strip().startswith("#0 ")), "")
    both_readers = done.stderr.count("(mutexes: read ")
    return {"races": races, "first_frame": frame, "reader_lock_reports": both_readers, **_kv(done.stdout)}


# --- claims: C++ ----------------------------------------------------------------------------------------

@claim("lru.cpp-matches-reference", question=Q, needs=["g++"], timeout=300,
       statement="两个 C++ 实现（`std::unordered_map` + `std::list::splice`，和手写双向链表）与 O(n) 的参考模型"
                 "（按新旧排好的列表、线性查找）跑同样的随机操作：{sequences} 组（种子 0 到 3，容量 1、3、16、100），"
                 "每组 {=3000} 次 get/put，一共 {total_ops:,d} 个结果（get 的返回值、put 淘汰了谁）"
                 "{list_equal:?与参考模型全部相同|与参考模型有不同}（list 版），{hand_equal:?也全部相同|有不同}（手写链表版）；"
                 "每组结束时两者的内部不变式（表项与链表节点一一对应、都指向自己的节点、不超容量）都{consistent:?成立|不成立}。",
       expect={"list_equal": True, "hand_equal": True, "consistent": True, "sequences": 16, "total_ops": 48000,
               "evictions": {">": 1000}})
def _(ctx):
    list_ok = hand_ok = consistent = True
    total = evictions = sequences = 0
    for seed in SEEDS:
        for cap in CAPACITIES:
            ops = _ops(seed, cap)
            want = _replay(Reference(cap), ops)
            stdin = f"cap {cap}\n" + "".join(f"g {o[1]}\n" if o[0] == "g" else f"p {o[1]} {o[2]}\n" for o in ops)
            for impl in ("list", "hand"):
                lines = _run(ctx, "ops", impl, stdin=stdin).splitlines()
                got, tail = lines[:len(ops)], _kv("\n".join(lines[len(ops):]))
                same = got == want
                list_ok, hand_ok = (list_ok and same, hand_ok) if impl == "list" else (list_ok, hand_ok and same)
                consistent = consistent and tail.get("consistent") == "1"
            total += len(ops)
            evictions += sum(1 for w in want if w.startswith("e") and w != "e-")
            sequences += 1
    return {"list_equal": list_ok, "hand_equal": hand_ok, "consistent": consistent, "sequences": sequences,
            "total_ops": total, "evictions": evictions}


def _counts(ctx) -> dict[str, float]:
    return {k: float(v) for k, v in _kv(_run(ctx, "counts")).items()}


@claim("lru.counts-flat", question=Q, needs=["g++"], timeout=300,
       statement="每次操作做多少事，不随容量变：给哈希表装上计数的 hash 和相等比较，容量 {=1e2}、{=1e4}、{=1e5} 各装满后"
                 "随机 get/put {=2000} 次，平均每次操作调用 hash {hash.100:.2f}、{hash.10000:.2f}、{hash.100000:.2f} 次，"
                 "比较键 {eq.100:.2f}、{eq.10000:.2f}、{eq.100000:.2f} 次，分配内存 {alloc.100:.2f}、{alloc.10000:.2f}、"
                 "{alloc.100000:.2f} 次（一次淘汰加插入是链表节点和哈希节点各一次），都不超过 {max_per_op:.2f}。"
                 "比较次数的起伏跟的是负载因子（三个表分别是 {load.100:.2f}、{load.10000:.2f}、{load.100000:.2f}），"
                 "不是容量。",
       expect={"max_per_op": {"<": 3.0}, "hash_below": True})
def _(ctx):
    c = _counts(ctx)
    caps = (100, 10000, 100000)
    out = {name: {str(n): c[f"hashed.{n}.{name}"] for n in caps} for name in ("hash", "eq", "alloc", "load")}
    spreads = [max(out[k].values()) / min(out[k].values()) for k in ("hash", "eq", "alloc")]
    return out | {"max_per_op": max(x for k in ("hash", "eq", "alloc") for x in out[k].values()),
                  "max_spread": max(spreads), "hash_below": all(x < 4 for x in out["hash"].values())}


@claim("lru.map-is-log", kind="measured", question=Q, needs=["g++"], timeout=300,
       statement="同一个 LRU 把索引换成 `std::map`（红黑树），同样的操作平均每次调用比较函数 {less.100:.1f}、{less.10000:.1f}、"
                 "{less.100000:.1f} 次，随容量增长，和 log₂n 之比 {ratio_min:.2f} 到 {ratio_max:.2f}：每次查找、插入、删除都沿树高走一遍。"
                 "O(n) 的参考模型（`std::vector` 按新旧排列、线性查找）每次操作访问元素 {visits.100:,.0f}、{visits.10000:,.0f}、"
                 "{visits.100000:,.0f} 个，约为容量的 {visits_over_n:.2f} 倍。",
       expect={"less_grows": True, "ratio_min": {">": 1.0}, "ratio_max": {"<": 4.0}, "visits_linear": True})
def _(ctx):
    c = _counts(ctx)
    caps = (100, 10000, 100000)
    less = {str(n): c[f"ordered.{n}.less"] for n in caps}
    visits = {str(n): c[f"vector.{n}.visits"] for n in caps}
    ratios = [less[str(n)] / math.log2(n) for n in caps]
    per_n = [visits[str(n)] / n for n in caps]
    return {"less": less, "visits": visits, "ratio_min": min(ratios), "ratio_max": max(ratios),
            "less_grows": less["100"] < less["10000"] < less["100000"], "visits_over_n": sum(per_n) / len(per_n),
            "visits_linear": max(per_n) / min(per_n) < 1.3}


@claim("lru.hash-worst-case", question=Q, needs=["g++"], timeout=300,
       statement="“平均 O(1)”靠的是键被哈希打散。libstdc++ 的 `std::hash<long>` 是恒等函数（`hash(12345)` = {hash_of_12345:d}），"
                 "`reserve({=1000})` 后桶数是 {buckets}：插入键 {=0…999}，每次查找比较 {sequential:.1f} 次；插入键 {=k·桶数（k = 0…999）}，"
                 "{largest} 个键全落进同一个桶，每次查找平均比较 {multiples:.1f} 次，退化成链表的 O(n)。"
                 "键可能被外部控制时（哈希洪水攻击），要换成带随机种子的哈希。",
       expect={"hash_of_12345": 12345, "sequential": 1.0, "largest": 1000, "multiples": {">": 400}})
def _(ctx):
    c = _counts(ctx)
    return {"hash_of_12345": int(c["collide.hash_of_12345"]), "buckets": int(c["collide.multiples.buckets"]),
            "sequential": c["collide.sequential.eq"], "multiples": c["collide.multiples.eq"],
            "largest": int(c["collide.multiples.largest_bucket"])}


def _rehash(ctx) -> dict[str, str]:
    return _kv(_run(ctx, "rehash"))


@claim("lru.rehash-growth", question=Q, needs=["g++"], timeout=300,
       statement="libstdc++ 的 `std::unordered_map` 什么时候扩容：`max_load_factor()` 默认 {max_load_factor}，空表 "
                 "`bucket_count()` 是 {empty}；逐个插入 {inserted} 个随机键，桶数变了 {changes} 次："
                 "{bucket_counts}（除起始的 1 外{primes:?都是素数|不全是素数}，约翻倍），分别发生在元素个数变成 {grew_at} 时，即除第一次外都是新的个数超过"
                 "桶数乘 max_load_factor 的那一刻（{rule:?每次都符合|有不符合的}），负载因子始终{below:?不超过|超过了} "
                 "max_load_factor。先 `reserve({=1000})` 再插同样多的元素，桶数一开始就是 {reserved}，插入过程中变了 "
                 "{reserved_changes} 次。",
       expect={"max_load_factor": "1.0", "empty": 1, "changes": 7, "rule": True, "below": True, "reserved_changes": 0,
               "reserved": {">=": 1000}, "primes": True})
def _(ctx):
    v = _rehash(ctx)
    counts = [int(x) for x in v["bucket_counts"].split(",")]
    return {"primes": all(n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1)) for n in counts[1:]),
            "max_load_factor": v["max_load_factor"], "empty": int(v["bucket_count.empty"]),
            "inserted": int(v["inserted"]), "changes": int(v["bucket_changes"]),
            "bucket_counts": v["bucket_counts"].replace(",", "、"), "grew_at": v["grew_at_size"].replace(",", "、"),
            "rule": v["rehash_rule"] == "1", "below": v["load_factor_below"] == "1",
            "reserved": int(v["reserved.bucket_count"]), "reserved_changes": int(v["reserved.changes"])}


@claim("lru.rehash-pointers", question=Q, needs=["g++"], timeout=300,
       statement="扩容时元素本身不动：上面 {inserted} 个元素插入后各记下 `&m.at(k)`，经过 {changes} 次 rehash，地址变了的有 "
                 "{moved} 个，值错了的 {wrong} 个：`unordered_map` 是节点式的，rehash 只把节点重新挂到新的桶数组上。"
                 "变的是位置：一个刚好装满 {one_n} 个元素的表再插一个，桶数从 {one_from} 变成 {one_to}，原来的 "
                 "{one_n} 个元素里有 {rebucketed} 个换了桶，遍历顺序{order_changed:?变了|没变}，所以标准说 rehash 让迭代器失效，"
                 "而指针和引用仍然有效。LRU 的索引存的是 `std::list` 的迭代器：装满容量 {=1000} 的 LRU 时它的哈希表 rehash 了 "
                 "{lru_changes} 次，之后不变式{lru_consistent:?仍然成立|被破坏}。",
       expect={"moved": 0, "wrong": 0, "order_changed": True, "rebucketed": {">=": 1}, "lru_consistent": True,
               "lru_changes": {">=": 1}})
def _(ctx):
    v = _rehash(ctx)
    b0, b1 = v["one.buckets"].split(",")
    return {"inserted": int(v["inserted"]), "changes": int(v["bucket_changes"]), "moved": int(v["pointers_moved"]),
            "wrong": int(v["values_wrong"]), "one_n": int(v["one.elements"]), "one_from": int(b0), "one_to": int(b1),
            "rebucketed": int(v["one.rebucketed"]), "order_changed": v["one.order_changed"] == "1",
            "lru_changes": int(v["lru.bucket_changes"]), "lru_consistent": v["lru.consistent"] == "1"}


@claim("lru.splice", question=Q, needs=["g++"], timeout=300,
       statement="`std::list::splice` 把节点挪到表头，只改指针：{=1000} 个元素的链表把最后一个 splice 到最前，元素拷贝 "
                 "{list.copies} 次、移动 {list.moves} 次、分配内存 {list.allocations} 次；指向它的迭代器"
                 "{same_address:?仍指向同一个地址|换了地址}、{at_front:?正是新的 begin()|不在表头}，别的元素的迭代器也"
                 "{other_valid:?仍然有效|失效了}。同样的“移到最前”在 `std::vector` 上（`std::rotate`）要移动元素 "
                 "{vector.moves:,d} 次。",
       expect={"list": {"copies": 0, "moves": 0, "allocations": 0}, "same_address": True, "at_front": True,
               "other_valid": True, "vector_moves_at_least_n": True})
def _(ctx):
    v = _kv(_run(ctx, "splice"))
    lst = {k: int(v[f"list.{k}"]) for k in ("copies", "moves", "allocations")}
    vec = {k: int(v[f"vector.{k}"]) for k in ("copies", "moves")}
    return {"list": lst, "vector": vec, "same_address": v["list.same_address"] == "1",
            "at_front": v["list.at_front"] == "1" and v["list.value"] == "999", "other_valid": v["list.other_valid"] == "1",
            "vector_moves_at_least_n": vec["moves"] >= 999}


@claim("lru.threads-locked", question=Q, needs=["g++"], timeout=300,
       statement="加一把 `std::mutex`、每次 get/put 都持锁：{threads} 个线程各做 {ops_each:,d} 次随机 get/put，"
                 "数到的操作一共 {ops_counted:,d} 次（一次不少），结束时缓存里 {size} 项（容量 {=1000}），"
                 "不变式{consistent:?成立|不成立}。",
       expect={"threads": 4, "ops_counted": 200000, "size": 1000, "consistent": True})
def _(ctx):
    v = _kv(_run(ctx, "threads"))
    return {"threads": int(v["threads"]), "ops_each": int(v["ops_each"]), "ops_counted": int(v["ops_counted"]),
            "size": int(v["size"]), "consistent": v["consistent"] == "1"}


@claim("lru.reader-lock-races", kind="measured", question=Q, needs=["g++"], timeout=300,
       statement="LRU 的 get 也是写操作，读写锁的读锁护不住它。两个线程只调用 get，每次持 `std::shared_lock`"
                 "（读锁，两个线程可以同时持有）；为了让结果确定，第二个线程等第一个做完才开始（等的是一个 relaxed 原子标志，"
                 "它不建立任何先后关系），两者从不同时运行，这次链表的不变式也{consistent:?仍然成立|被破坏了}。"
                 "但两个读锁之间没有同步，两边对同一批节点指针的写仍是 C++ 内存模型里的数据竞争：ThreadSanitizer 报告 "
                 "{shared.races} 处，报告里两边都{both_readers:?只持有读锁|不只持有读锁}，第一处在 `{frame}`"
                 "（get 要把节点摘下再挂到表头）。换成 `std::unique_lock`，解锁和下一次加锁建立了先后，报告 {unique.races} 处。",
       expect={"shared_races": {">=": 1}, "unique_races": 0, "both_readers": True, "frame_in_relink": True,
               "consistent": True})
def _(ctx):
    shared, unique = _tsan(ctx, "hand", "shared"), _tsan(ctx, "hand", "unique")
    frame = shared["first_frame"]
    return {"shared": {"races": shared["races"]}, "unique": {"races": unique["races"]},
            "shared_races": shared["races"], "unique_races": unique["races"], "frame": frame,
            "consistent": shared.get("consistent") == "1",
            "both_readers": shared["reader_lock_reports"] >= 2 * shared["races"] > 0,
            "frame_in_relink": "unlink" in frame or "push_front" in frame}


@claim("lru.tsan-blind-spot", question=Q, needs=["g++"], timeout=300,
       statement="同样的读锁用在 `std::list` 版上，ThreadSanitizer 报 {races} 处：竞争还在，只是它看不见。"
                 "`splice` 改指针的代码 `_List_node_base::_M_transfer` 不在头文件里，而在没有插桩的 libstdc++.so 里"
                 "（用 `nm` 看这个程序，它{undefined:?是未定义符号 U，运行时才从 libstdc++.so 解析|已定义在程序里}）。TSan 只报它插过桩的访问，报 0 处不等于没有竞争。",
       expect={"races": 0, "undefined": True, "in_libstdcxx": True})
def _(ctx):
    listed = _tsan(ctx, "list", "shared")
    race = _race(str(ctx.snippet_dir()))
    rows = _sh("nm", str(race), cwd=ctx.workdir).splitlines()
    transfer = [r.split() for r in rows if "_List_node_base11_M_transfer" in r]
    undefined = bool(transfer) and transfer[0][0] == "U"
    lib = subprocess.run(["g++", "-print-file-name=libstdc++.so.6"], capture_output=True, text=True).stdout.strip()
    exported = _sh("nm", "-D", "--defined-only", lib, cwd=ctx.workdir) if lib and Path(lib).exists() else ""
    return {"races": listed["races"], "undefined": undefined,
            "in_libstdcxx": "_List_node_base11_M_transfer" in exported, "consistent": listed.get("consistent")}


# --- claims: Python -------------------------------------------------------------------------------------

@claim("lru.python-matches-reference", question=Q,
       statement="Python 的两种写法跑同样的 {sequences} 组、共 {total_ops:,d} 次随机操作：`OrderedDict`"
                 "（`move_to_end` 和 `popitem(last=False)`）{ordered_equal:?与参考模型全部相同|与参考模型有不同}，"
                 "dict + 带哨兵的双向链表{linked_equal:?也全部相同|有不同}，链表的不变式{consistent:?始终成立|被破坏}。"
                 "get 改变了顺序：对 `[1, 2, 3]` 做 `get(1)` 后，`OrderedDict` 的键顺序变成 {order_after}，"
                 "最先被淘汰的从 1 变成了 {next_victim}。",
       expect={"ordered_equal": True, "linked_equal": True, "consistent": True, "sequences": 16, "total_ops": 48000,
               "order_after": [2, 3, 1], "next_victim": 2})
def _(ctx):
    ordered_ok = linked_ok = consistent = True
    total = sequences = 0
    for seed in SEEDS:
        for cap in CAPACITIES:
            ops = _ops(seed, cap)
            want = _replay(Reference(cap), ops)
            linked = LinkedLRU(cap)
            ordered_ok = ordered_ok and _replay(OrderedDictLRU(cap), ops) == want
            linked_ok = linked_ok and _replay(linked, ops) == want
            consistent = consistent and linked.consistent()
            total, sequences = total + len(ops), sequences + 1
    demo = OrderedDictLRU(3)
    for k in (1, 2, 3):
        demo.put(k, k)
    demo.get(1)
    order = list(demo.d)
    return {"ordered_equal": ordered_ok, "linked_equal": linked_ok, "consistent": consistent, "sequences": sequences,
            "total_ops": total, "order_after": order, "next_victim": order[0]}


class TTLCache:
    """LRU with a time to live per entry, expired lazily: an expired entry is removed when a get finds it.
    The clock is a function, so that tests move time by hand."""

    def __init__(self, capacity: int, clock):
        self.capacity, self.clock, self.d = capacity, clock, OrderedDict()

    def get(self, key):
        item = self.d.get(key)
        if item is None:
            return -1
        value, expires = item
        if self.clock() >= expires:
            del self.d[key]  # lazy expiry: only now, because someone asked
            return -1
        self.d.move_to_end(key)
        return value

    def put(self, key, value, ttl):
        if key in self.d:
            self.d.move_to_end(key)
        elif len(self.d) == self.capacity:
            self.d.popitem(last=False)
        self.d[key] = (value, self.clock() + ttl)


class TTLReference:
    """The O(n) model of the same rules."""

    def __init__(self, capacity: int, clock):
        self.capacity, self.clock, self.items = capacity, clock, []  # front = most recent: (key, value, expires)

    def get(self, key):
        i = next((i for i, it in enumerate(self.items) if it[0] == key), -1)
        if i < 0:
            return -1
        if self.clock() >= self.items[i][2]:
            self.items.pop(i)
            return -1
        self.items.insert(0, self.items.pop(i))
        return self.items[0][1]

    def put(self, key, value, ttl):
        i = next((i for i, it in enumerate(self.items) if it[0] == key), -1)
        if i >= 0:
            self.items.pop(i)
        elif len(self.items) == self.capacity:
            self.items.pop()
        self.items.insert(0, (key, value, self.clock() + ttl))


@claim("lru.ttl-lazy", question=Q,
       statement="TTL 用惰性过期：每项存下过期时刻，get 时才检查。时钟由测试手动推进：`put(\"a\", ttl={=10})` 在 t=0，"
                 "t={=5} 时 get {at5:?命中|未命中}；t={=10} 时项已过期，但在被访问之前还占着位置（size {size_before}），"
                 "get {at10:?命中|未命中}，项随之删除（size {size_after}）。和同样规则的 O(n) 模型跑 {sequences} 组"
                 "随机操作（时间随机前进，TTL 随机取），{events:,d} 个结果{equal:?全部相同|有不同}。",
       expect={"at5": True, "at10": False, "size_before": 1, "size_after": 0, "equal": True, "expired_hits": {">": 100}})
def _(ctx):
    now = [0.0]
    cache = TTLCache(4, lambda: now[0])
    cache.put("a", 1, ttl=10)
    now[0] = 5
    at5 = cache.get("a") == 1
    now[0] = 10
    size_before = len(cache.d)
    at10 = cache.get("a") == 1
    size_after = len(cache.d)
    equal, events, expired_hits, sequences = True, 0, 0, 0
    for seed in SEEDS:
        for cap in (1, 4, 32):
            rng, t = random.Random(seed), [0.0]
            a, b = TTLCache(cap, lambda t=t: t[0]), TTLReference(cap, lambda t=t: t[0])
            for i in range(2000):
                t[0] += rng.choice((0, 0, 1, 2))
                key = rng.randrange(2 * cap + 1)
                if rng.random() < 0.5:
                    present = key in a.d
                    x, y = a.get(key), b.get(key)
                    expired_hits += present and x == -1
                    equal = equal and x == y
                else:
                    ttl = rng.choice((1, 5, 20))
                    a.put(key, i, ttl)
                    b.put(key, i, ttl)
                equal = equal and list(a.d) == [it[0] for it in reversed(b.items)]
                events += 1
            sequences += 1
    return {"at5": at5, "at10": at10, "size_before": size_before, "size_after": size_after, "equal": equal,
            "events": events, "expired_hits": expired_hits, "sequences": sequences}


@claim("lru.functools", question=Q,
       statement="`functools.lru_cache` 就是这个结构：CPython 的 `_lru_cache_wrapper` {c_impl:?来自 C 模块 _functools|是纯 Python 的}，"
                 "functools.py 里同名的纯 Python 后备实现写明了它的结构：一个 dict 加一个以 `root` 为哨兵的环形双向链表"
                 "（{documented:?源码注释这样写|源码里没有这句注释}）。`maxsize=2` 的函数依次以 "
                 "1、2、1、3、2 调用：`cache_info()` 是 hits={small.hits}、misses={small.misses}、currsize={small.currsize}"
                 "（调用 3 时淘汰了最久未用的 2，所以最后的 2 又未命中）。`maxsize=None` 不淘汰、也不维护顺序：`fib(30)` "
                 "递归下 hits={fib.hits}、misses={fib.misses}（后备实现的注释：{unordered_note:?只缓存、不排序也不限大小|没有这句}）。`typed=False`（默认）时 `g(1, 0)` 之后的 `g(1.0, 0)` "
                 "{untyped_hit:?命中同一项|另算一项}（`1 == 1.0`、哈希也相同），`typed=True` 时{typed_hit:?仍命中|另算一项}；"
                 "但只有一个参数时，`f(1)` 之后的 `f(1.0)` {single_hit:?命中|也另算一项}：参数恰好是一个 int 或 str 时，"
                 "键就是参数本身而不是元组，`1.0` 的键是元组，两者不相等。",
       expect={"small": {"hits": 1, "misses": 4, "currsize": 2}, "fib": {"hits": 28, "misses": 31},
               "untyped_hit": True, "typed_hit": False, "single_hit": False, "c_impl": True, "documented": True,
               "unordered_note": True})
def _(ctx):
    import _functools  # noqa: PLC0415
    import inspect  # noqa: PLC0415

    @functools.lru_cache(maxsize=2)
    def square(x):
        return x * x

    for x in (1, 2, 1, 3, 2):
        square(x)

    @functools.lru_cache(maxsize=None)  # noqa: UP033 -- the spelling the page discusses
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    fib(30)

    @functools.lru_cache(maxsize=8)
    def untyped(x, y):
        return x

    @functools.lru_cache(maxsize=8, typed=True)
    def typed(x, y):
        return x

    @functools.lru_cache(maxsize=8)
    def single(x):
        return x

    untyped(1, 0), untyped(1.0, 0), typed(1, 0), typed(1.0, 0), single(1), single(1.0)
    s, f = square.cache_info(), fib.cache_info()
    return {"small": {"hits": s.hits, "misses": s.misses, "currsize": s.currsize},
            "fib": {"hits": f.hits, "misses": f.misses}, "untyped_hit": untyped.cache_info().hits == 1,
            "typed_hit": typed.cache_info().hits == 1, "single_hit": single.cache_info().hits == 1,
            "c_impl": functools._lru_cache_wrapper is getattr(_functools, "_lru_cache_wrapper", None),
            "documented": "root of the circular doubly linked list" in inspect.getsource(functools),
            "unordered_note": "Simple caching without ordering or size limit" in inspect.getsource(functools)}


@claim("lru.functools-method", question=Q,
       statement="`lru_cache` 装在方法上，`self` 是键的一部分，缓存引用着实例（`maxsize=128`，两个实例各调一次，没有项被淘汰）：`del` 掉唯一的名字、`gc.collect()` 之后，"
                 "弱引用{alive_after_del:?仍能找到对象|已经找不到对象}；`cache_clear()` 之后{alive_after_clear:?仍然活着|才被释放}。"
                 "缓存挂在类上、被所有实例共享，`maxsize` 也是所有实例合计的。",
       expect={"alive_after_del": True, "alive_after_clear": False, "shared_between_instances": True})
def _(ctx):
    class Model:
        @functools.lru_cache(maxsize=128)  # noqa: B019 -- the leak is what this claim shows
        def forward(self, x):
            return x + 1

    m, other = Model(), Model()
    m.forward(1)
    other.forward(1)
    shared = Model.forward.cache_info().currsize == 2
    ref = weakref.ref(m)
    del m
    gc.collect()
    alive = ref() is not None
    Model.forward.cache_clear()
    gc.collect()
    return {"alive_after_del": alive, "alive_after_clear": ref() is not None, "shared_between_instances": shared}
