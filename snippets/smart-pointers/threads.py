"""Threads: what the reference count costs, and what "shared_ptr is thread-safe" covers (g++ programs)."""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

from verify import cxx
from verify.claim import claim
from verify.timing import stats

Q = "smart-pointers"


@claim("sp.refcount-single-threaded", question=Q, kind="perf", needs=["g++", "glibc"], timeout=120,
       statement="按值传递 `shared_ptr`，每次调用都要把计数加一、再减一。本机上，进程还没有第二个线程时每次调用 "
                 "{times.value_before:time}，创建并 join 过一个线程之后变成 {times.value_after:time}，慢了 {slowdown:x}。"
                 "原因在 libstdc++：第二个线程出现之前 glibc 的 `__libc_single_threaded` {single_before:?为真|为假}，计数用普通的加减；"
                 "有过第二个线程之后它{single_after:?仍为真|变为假}，计数改用原子的读-改-写，而且不再改回来。按 `const&` 传递不碰计数，"
                 "前后都是 {times.ref_after:time}。",
       expect={"single_before": True, "single_after": False, "slowdown": {">=": 1.2}, "value_over_ref": {">=": 2},
               "use_count": 1})
def _(ctx):
    # Each run of the program measures before and after its own first thread (there is no going back),
    # best of five repetitions each; the rounds are separate runs, and the medians are taken over them.
    # What holds on every CPU: an atomic read-modify-write costs several times a plain add, and a call
    # that passes a reference does no counting at all.
    prog = cxx.build({"refcount_cost.cpp": ctx.snippet_dir() / "refcount_cost.cpp"}, ("-O2", "-pthread"),
                     std=("-std=c++17",))
    samples: dict[str, list[float]] = {"value_before": [], "value_after": [], "ref_before": [], "ref_after": []}
    flags = set()
    for _ in range(7):
        out = subprocess.run([str(prog)], cwd=ctx.workdir, capture_output=True, text=True, timeout=30, check=True)
        v = dict(line.split("=", 1) for line in out.stdout.splitlines())
        for name in samples:
            samples[name].append(float(v[f"{name}_ns"]) * 1e-9)
        flags.add((v["single_before"], v["single_after"], v["use_count"]))
    (single_before, single_after, use_count), = flags
    times = {name: stats(values) for name, values in samples.items()}
    med = {name: t["median_s"] for name, t in times.items()}
    return {"times": times, "single_before": single_before == "1", "single_after": single_after == "1",
            "use_count": int(use_count), "slowdown": med["value_after"] / med["value_before"],
            "value_over_ref": med["value_after"] / med["ref_after"]}


def _uncap_data():
    """TSan reserves terabytes of address space for its shadow memory (reserved, not filled); the worker's cap
    on the data segment (RLIMIT_DATA) would refuse that reservation, so the sanitized child runs without it."""
    import resource  # noqa: PLC0415

    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))


def _tsan(race: Path, wd: Path, mode: str) -> dict:
    cmd = [str(race), mode]
    done = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=60, preexec_fn=_uncap_data)
    if "unexpected memory mapping" in done.stderr and shutil.which("setarch"):
        # Some kernels randomise the address space more than this TSan runtime expects: run without ASLR.
        done = subprocess.run(["setarch", platform.machine(), "-R", *cmd], cwd=wd, capture_output=True, text=True,
                              timeout=60, preexec_fn=_uncap_data)
    races = done.stderr.count("WARNING: ThreadSanitizer: data race")
    if races == 0 and done.returncode != 0:
        raise RuntimeError(f"race {mode} exited with {done.returncode}: {done.stderr[-800:]}")
    v = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    first = next((line.strip() for line in done.stderr.splitlines() if "shared_ptr" in line and "#" in line), "")
    return {"races": races, "rc": done.returncode, "use_count_after": int(v["use_count_after"]), "first_frame": first[:200]}


@claim("sp.thread-safety-tsan", kind="measured", question=Q, needs=["g++"], timeout=180,
       statement="“`shared_ptr` 是线程安全的”只对控制块成立。用 ThreadSanitizer 编译运行：两个线程同时拷贝同一个全局 `shared_ptr`，"
                 "计数被两边并发地加减，报告 {copy.races} 处数据竞争，结束时 `use_count` 回到 {copy.use_count_after}；"
                 "两个线程同时给同一个 `shared_ptr` 对象赋值，报告 {assign.races} 处数据竞争（退出码 {assign.rc}）；"
                 "换成 C++20 的 `std::atomic<std::shared_ptr<int>>` 再同时赋值，报告 {atomic.races} 处。",
       expect={"races": {"copy": 0, "atomic": 0}, "assign_races": {">=": 1}, "copy_use_count_after": 1})
def _(ctx):
    race = cxx.build({"race.cpp": ctx.snippet_dir() / "race.cpp"}, ("-O1", "-g", "-fsanitize=thread"), name="race",
                     std=("-std=c++20",))
    out = {mode: _tsan(race, ctx.workdir, mode) for mode in ("copy", "assign", "atomic")}
    out["races"] = {mode: out[mode]["races"] for mode in ("copy", "atomic")}
    out["assign_races"] = out["assign"]["races"]
    out["copy_use_count_after"] = out["copy"]["use_count_after"]
    return out
