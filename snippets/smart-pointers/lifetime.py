"""Lifetimes: a shared_ptr cycle, the weak_ptr that breaks it, move-only unique_ptr, and two control blocks."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from verify import cxx
from verify.claim import claim

Q = "smart-pointers"
STD = "-std=c++17"


def _sources(ctx, source: str) -> dict[str, Path]:
    here = ctx.snippet_dir()
    return {n: here / n for n in (source, "counting.h")}


def build(ctx, source: str) -> Path:
    """``source`` (with counting.h beside it) built with g++ -O2 once per source, flags and compiler (verify.cxx)."""
    return cxx.build(_sources(ctx, source), ("-O2",), std=(STD,))


def refused(ctx, source: str) -> cxx.Ran:
    """How the same g++ command ends on a file it must refuse (kept by verify.cxx like a build)."""
    return cxx.outcome(_sources(ctx, source), [STD, "-O2", source, "-o", "prog"])


def _no_core_dump():
    import resource  # noqa: PLC0415

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # two_owners.cpp ends in abort(): no core file


def run(ctx, prog: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(prog)], cwd=ctx.workdir, capture_output=True, text=True, timeout=30,
                          preexec_fn=_no_core_dump)


def build_run(ctx, source: str) -> tuple[dict[str, str], list[str]]:
    """``key=value`` lines of the program's output, and all its lines in order."""
    out = run(ctx, build(ctx, source))
    if out.returncode != 0:
        raise RuntimeError(f"{source} exited with {out.returncode}: {out.stderr[-500:]}")
    lines = out.stdout.splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line), lines


def _pair(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def _phase(lines: list[str], name: str) -> list[str]:
    """Output lines of one phase of cycle.cpp."""
    start = lines.index(f"phase={name}") if f"phase={name}" in lines else 0
    rest = lines[start + 1:]
    end = next((i for i, line in enumerate(rest) if line.startswith("phase=")), len(rest))
    return rest[:end]


@claim("sp.cycle-leaks", question=Q, needs=["g++"],
       statement="两个节点用 `shared_ptr` 互相指着（`a->next = b; b->next = a`）：作用域里两者的 `use_count` 都是 "
                 "{use_count_in_scope}；离开作用域，两个局部 `shared_ptr` 都销毁了，两个节点却都还活着（存活 {alive_after_scope} 个，"
                 "析构函数一次也没运行），`use_count` 各剩 {use_count_after_scope}：每个节点都被对方拥有。程序里只剩旁观的 "
                 "`weak_ptr` 还能找到它们，没有它就是泄漏；手动断开一条边（`b->next.reset()`）后存活 {alive_after_manual_break} 个。",
       expect={"use_count_in_scope": [2, 2], "alive_after_scope": 2, "use_count_after_scope": [1, 1],
               "dtors_before_break": 0, "alive_after_manual_break": 0})
def _(ctx):
    v, lines = build_run(ctx, "cycle.cpp")
    strong = lines[:lines.index("phase=weak")]
    before_break = strong[:next(i for i, line in enumerate(strong) if line.startswith("strong.expired"))]
    return {"use_count_in_scope": _pair(v["strong.use_count_in_scope"]),
            "alive_after_scope": int(v["strong.alive_after_scope"]),
            "use_count_after_scope": _pair(v["strong.use_count_after_scope"]),
            "dtors_before_break": sum(line.startswith("dtor=") for line in before_break),
            "alive_after_manual_break": int(v["strong.alive_after_manual_break"])}


@claim("sp.weak-breaks-cycle", question=Q, needs=["g++"],
       statement="把回指换成 `weak_ptr`（`b->back = a`）：`weak_ptr` 不计入 `use_count`，作用域里 `a` 的计数是 {use_count_in_scope}"
                 "（`b` 是 {b_count}，它被 `a->next` 拥有），离开作用域两个节点都析构，存活 {alive_after_scope} 个。",
       expect={"use_count_in_scope": 1, "b_count": 2, "alive_after_scope": 0})
def _(ctx):
    v, _ = build_run(ctx, "cycle.cpp")
    a, b = _pair(v["weak.use_count_in_scope"])
    return {"use_count_in_scope": a, "b_count": b, "alive_after_scope": int(v["weak.alive_after_scope"])}


@claim("sp.destruction-order", question=Q, needs=["g++"],
       statement="析构顺序跟着计数走，而不是跟着声明顺序：局部变量按声明的逆序销毁（先 `b` 后 `a`），打印出的析构顺序却是 {order}。"
                 "局部的 `b` 销毁时 `a->next` 还拥有 `b`，计数只降到 1；`a` 的计数归零，`a` 析构，它的成员 `a->next` 随之销毁，"
                 "`b` 才析构。",
       expect={"order": ["a", "b"]})
def _(ctx):
    _, lines = build_run(ctx, "cycle.cpp")
    leaving = _phase(lines, "leaving-scope")
    return {"order": [line.split("=", 1)[1] for line in leaving if line.startswith("dtor=")]}


@claim("sp.weak-lock", question=Q, needs=["g++"],
       statement="`weak_ptr` 不能直接解引用，要先 `lock()`：对象还在时 `lock()` 得到一个新的 owner（指向 {lock_name}，"
                 "`a` 的 `use_count` 随之变成 {use_count_while_locked}）；最后一个 owner 走后 `expired()` 为真，"
                 "`lock()` {lock_after_is_null:?返回空指针|仍返回有效指针}。",
       expect={"lock_name": "a", "use_count_while_locked": 2, "expired": [True, True], "lock_after_is_null": True})
def _(ctx):
    v, _ = build_run(ctx, "cycle.cpp")
    return {"lock_name": v["weak.lock_name"], "use_count_while_locked": int(v["weak.use_count_while_locked"]),
            "expired": [bool(x) for x in _pair(v["weak.expired"])],
            "lock_after_is_null": bool(int(v["weak.lock_after_is_null"]))}


@claim("sp.unique-move-only", question=Q, needs=["g++"],
       statement="`unique_ptr` 不能拷贝：`std::unique_ptr<int> b = a;` 编译失败，g++ 报 “{error}”（拷贝构造函数是 `= delete` 的）；"
                 "`std::move(a)` 则把所有权交给 `b`：不分配（{allocations} 次），`b` {same_object:?指向原来的对象|指向别的对象}，"
                 "`a` {source_null:?变空|不变空}。",
       expect={"compiled": False, "error": "use of deleted function", "allocations": 0, "same_object": True,
               "source_null": True})
def _(ctx):
    failed = refused(ctx, "unique_copy.cpp")
    found = "use of deleted function" in failed.output
    detail = next((line for line in failed.output.splitlines() if "error:" in line), "")
    v, _ = build_run(ctx, "unique_move.cpp")
    return {"compiled": failed.returncode == 0, "error": "use of deleted function" if found else detail[:200],
            "error_line": detail[-300:], "allocations": int(v["allocations"]), "same_object": bool(int(v["same_object"])),
            "source_null": bool(int(v["source_null"]))}


@claim("sp.two-control-blocks", question=Q, needs=["g++", "glibc"],
       statement="用同一个裸指针构造两个 `shared_ptr`，得到两个互不知情的控制块：两者的 `use_count` 都是 {use_counts}；"
                 "作用域结束时析构函数运行了 {dtor_count} 次，第二次 `delete` 被 glibc 查出 double free，进程被信号 {signal_name} 终止。",
       expect={"use_counts": [1, 1], "dtor_count": 2, "signal_name": "SIGABRT", "glibc_message": True, "reached_end": False})
def _(ctx):
    out = run(ctx, build(ctx, "two_owners.cpp"))
    lines = out.stdout.splitlines()
    v = dict(line.split("=", 1) for line in lines if "=" in line)
    sig = -out.returncode if out.returncode < 0 else None
    return {"use_counts": _pair(v["use_counts"]), "dtor_count": lines.count("dtor"),
            "signal_name": signal.Signals(sig).name if sig else f"exit {out.returncode}",
            "glibc_message": "double free" in out.stderr, "stderr": out.stderr[-300:],
            "reached_end": "unreachable" in lines}


@claim("sp.shared-from-this", question=Q, needs=["g++"],
       statement="对象要把“自己”交给别人共享时，继承 `enable_shared_from_this` 并调用 `shared_from_this()`：它加入已有的控制块"
                 "（{same_block:?同一个控制块|另一个控制块}，`use_count` 变成 {use_count}），而不是再造一个；对不归任何 `shared_ptr` "
                 "管理的对象调用它，C++17 起{threw:?抛出|不抛出} `std::bad_weak_ptr`。",
       expect={"same_block": True, "use_count": 2, "threw": True})
def _(ctx):
    v, _ = build_run(ctx, "from_this.cpp")
    return {"same_block": bool(int(v["owned.same_block"])), "use_count": int(v["owned.use_count"]),
            "threw": bool(int(v["unowned.threw"])), "what": v.get("unowned.what", "")}
