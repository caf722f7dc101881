"""The CPU allocator under eager ops: a 64 KiB tensor's free can pay for giving tens of MiB of
heap back to the kernel (glibc's trim), a millisecond hiccup in a microsecond op."""

from __future__ import annotations

from snippets._workloads.heap import FIXED, STAGING, attempts
from verify.claim import claim


def _summary(runs: list[dict]) -> dict:
    trimmed = [r for r in runs if r["heap_drop_on_64k_free_mib"] > 0]
    return {"processes": len(runs), "trimmed": len(trimmed), "runs": runs,
            "worst_64k_free_us": max(r["that_64k_free_us"] for r in runs),
            "largest_drop_mib": max(r["heap_drop_on_64k_free_mib"] for r in runs),
            "trim_free_over_plain_free": (trimmed[0]["that_64k_free_us"] / trimmed[0]["later_64k_free_us"]
                                          if trimmed else None)}


@claim(
    "heap.trim-on-small-free",
    question="python-overhead",
    statement="glibc 下，先释放的 32 MiB 大张量可能暂时留在堆里；之后释放一个 64 KiB 的小张量时，"
              "free() 才把这 32 MiB 一次还给内核，这一次释放要花毫秒级（平时约 1 µs）。"
              "把 MALLOC_TRIM_THRESHOLD_ 和 MALLOC_MMAP_THRESHOLD_ 设成固定值后，这个现象消失。",
    kind="perf",
    needs=["glibc"],
    expect={"trimmed": {">=": 1}, "largest_drop_mib": {">=": 16}, "trim_free_over_plain_free": {">=": 50},
            "fixed_trimmed": 0},
    timeout=180,
)
def _(ctx):
    # Up to five fresh processes until one shows the trim: the heap layout, and so whether the
    # freed blocks can reach the top, changes with address-space randomisation.
    default = _summary(attempts(STAGING, tries=5, stop_at_first_trim=True))
    fixed = _summary(attempts({**STAGING, **FIXED}, tries=3, stop_at_first_trim=False))
    return {**default, "fixed_trimmed": fixed["trimmed"], "fixed_worst_64k_free_us": fixed["worst_64k_free_us"],
            "fixed_runs": fixed["runs"], "fixed_env": FIXED, "staging_env": STAGING}
