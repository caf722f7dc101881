"""expand is O(1) metadata work, repeat is O(n) copying: measured as the size grows."""

import torch

from verify import timing
from verify.claim import claim

Q = "repeat-vs-expand"


def _minor_faults():
    """Minor page faults of this process so far (None where getrusage is not available)."""
    try:
        import resource  # noqa: PLC0415
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@claim("expand.constant-time", question=Q, kind="perf",
       statement="把目标从 {rows_small} 行放大到 {rows_large} 行（{size_ratio} 倍），`expand` 的耗时从 "
                 "{timings.expand_small} 变为 {timings.expand_large}，是原来的 {expand_growth:x}（O(1)，只改元数据）；"
                 "`repeat` 要写出 {repeat_large_bytes:bytes}，耗时从 {timings.repeat_small} 涨到 "
                 "{timings.repeat_large}，是原来的 {repeat_growth:x}（O(n)，拷贝数据）。",
       expect={"expand_growth": {"<": 3.0}, "repeat_growth": {">": 1.0}})
def _(ctx):
    # Rows 16 against 16384 of 1024 floats: 64 KiB against 64 MiB of output for repeat.
    x = torch.randn(1, 1024, device=ctx.device)
    small, large = 16, 16384
    # Nothing cheap is sampled right after a 64 MiB repeat: on a CPU whatever comes next pays for
    # what that repeat left behind (the "naive" pair below measures how much). So the two expands
    # are interleaved with each other, and each repeat is timed in a group of its own.
    t = timing.compare({
        "expand_small": lambda: x.expand(small, -1),
        "expand_large": lambda: x.expand(large, -1),
    }, rounds=15, warmup=3, inner=100, device=ctx.device)
    t.update(timing.compare({"repeat_small": lambda: x.repeat(small, 1)}, rounds=15, warmup=3, device=ctx.device))
    t.update(timing.compare({"repeat_large": lambda: x.repeat(large, 1)}, rounds=15, warmup=3, device=ctx.device))
    # The naive way: one expand sampled right after each large repeat, against expand sampled alone
    # (both one call per sample).
    t.update(timing.compare({
        "naive_repeat_large": lambda: x.repeat(large, 1),
        "expand_after_repeat": lambda: x.expand(small, -1),
    }, rounds=15, warmup=3, device=ctx.device))
    t.update(timing.compare({"expand_alone": lambda: x.expand(small, -1)}, rounds=15, warmup=3, device=ctx.device))
    # The same 64 MiB copy into memory that was written before: no first touch of fresh pages.
    buf = torch.empty(large, 1024, device=ctx.device)
    buf.fill_(0)
    t.update(timing.compare({"copy_large_prefaulted": lambda: buf.copy_(x.expand(large, -1))},
                            rounds=15, warmup=3, device=ctx.device))
    faults = None
    if ctx.device == "cpu":
        before = _minor_faults()
        z = x.repeat(large, 1)
        after = _minor_faults()
        del z
        faults = None if before is None else after - before
    return {
        "timings": t,
        "expand_growth": timing.ratio(t, "expand_large", "expand_small"),
        "repeat_growth": timing.ratio(t, "repeat_large", "repeat_small"),
        "naive_penalty": timing.ratio(t, "expand_after_repeat", "expand_alone"),
        "first_touch_share": 1.0 - float(t["copy_large_prefaulted"]["median_s"]) / float(t["repeat_large"]["median_s"]),
        "repeat_page_faults": faults,
        "rows_small": small,
        "rows_large": large,
        "size_ratio": large // small,
        "repeat_large_bytes": large * x.shape[1] * x.element_size(),
    }
