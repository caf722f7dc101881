"""Memory a function allocates while it runs, read from the profiler's allocation timeline
(flash-attention, graph-fusion: attention with and without the (N, N) score matrix)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.profiler import ProfilerActivity, profile


def memory_profile(fn: Callable[[], Any]) -> profile:
    """Run ``fn`` once to warm (its one-time allocations are not measured), then once more under the
    profiler with memory recording; what it returns is freed inside the profile."""
    fn()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True, with_stack=True) as prof:
        result = fn()
        del result
    return prof


def allocations(prof: profile) -> tuple[int, list[int]]:
    """(peak bytes, the size of every allocation) during a memory profile. Tensors that existed before
    the profile are not counted: the peak is what the profiled code needs on top of its inputs."""
    live = peak = 0
    sizes = []
    for _, action, _, size in prof._memory_profile().timeline:
        if action.name == "CREATE":
            live += size
            sizes.append(size)
        elif action.name == "DESTROY":
            live -= size
        peak = max(peak, live)
    return peak, sizes


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak of bytes allocated while ``fn`` runs, warm (see :func:`memory_profile`)."""
    return allocations(memory_profile(fn))[0]
