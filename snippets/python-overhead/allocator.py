"""The CPU allocator under eager ops: a 64 KiB block's free can pay for giving tens of MiB of
heap back to the kernel (glibc's trim), a millisecond hiccup in a microsecond op."""

from __future__ import annotations

from snippets._workloads.heap import FIXED, STAGING, run_stage
from verify.claim import claim


@claim(
    "heap.trim-on-small-free",
    question="python-overhead",
    statement="glibc 下，先释放的 32 MiB 大块可能暂时留在堆里；之后释放一个 64 KiB 的小块时，"
              "free() 才把这 32 MiB 一次还给内核，这一次释放要花毫秒级（平时不到 1 µs）。"
              "PyTorch 的 CPU 张量用的正是这个堆；把 MALLOC_TRIM_THRESHOLD_ 和 MALLOC_MMAP_THRESHOLD_ 设成固定值后，这个现象消失。",
    kind="perf",
    needs=["glibc"],
    expect={"heap_drop_on_32m_free_mib": 0, "heap_drop_on_64k_free_mib": {">=": 16},
            "trim_free_over_plain_free": {">=": 50}, "heap_growth_for_16m_tensor_mib": {">=": 15},
            "fixed_heap_drop_on_64k_free_mib": 0},
    timeout=120,
)
def _(ctx):
    # Each in a fresh process: the sequence needs a heap in a known state.
    default = run_stage(STAGING)
    fixed = run_stage({**STAGING, **FIXED})
    return {**default,
            "trim_free_over_plain_free": default["that_64k_free_us"] / default["later_64k_free_us"],
            "fixed_heap_drop_on_64k_free_mib": fixed["heap_drop_on_64k_free_mib"],
            "fixed_that_64k_free_us": fixed["that_64k_free_us"],
            "fixed_env": FIXED, "staging_env": STAGING}
