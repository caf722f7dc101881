"""expand is O(1) metadata work, repeat is O(n) copying: measured as the size grows."""

import torch

from verify import timing
from verify.claim import claim

Q = "repeat-vs-expand"


@claim("expand.constant-time", question=Q, kind="perf",
       statement="expand 的耗时不随目标大小变化（O(1)，只改元数据）；repeat 的耗时随大小线性增长（O(n)，拷贝数据）。",
       expect={"expand_growth": {"<": 3.0}, "repeat_growth": {">": 20.0}})
def _(ctx):
    # Rows 16 against 16384 of 1024 floats: 64 KiB against 64 MiB of output for repeat.
    x = torch.randn(1, 1024, device=ctx.device)
    small, large = 16, 16384
    # Each op is timed against itself: a cheap expand sampled right after a 64 MiB repeat pays
    # for freeing that buffer (about 50 us here), which would be charged to expand.
    t = timing.compare({
        "expand_small": lambda: x.expand(small, -1),
        "expand_large": lambda: x.expand(large, -1),
    }, rounds=15, warmup=3, inner=100, device=ctx.device)
    t.update(timing.compare({
        "repeat_small": lambda: x.repeat(small, 1),
        "repeat_large": lambda: x.repeat(large, 1),
    }, rounds=15, warmup=3, device=ctx.device))
    return {
        "timings": t,
        "expand_growth": timing.ratio(t, "expand_large", "expand_small"),
        "repeat_growth": timing.ratio(t, "repeat_large", "repeat_small"),
        "size_ratio": large // small,
    }
