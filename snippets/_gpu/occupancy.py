"""Occupancy from a kernel's resource use and a compute capability's published per-SM limits.

What NVIDIA's occupancy calculator does: a block fits on an SM while threads, warps, blocks,
registers and shared memory all still fit. Registers are given out per warp in units of
``register_alloc_unit``; shared memory per block in units of ``shared_alloc_unit``, plus what the
system reserves per block. The smallest of the limits is how many blocks stay resident, and the
resident warps over the SM's maximum is the occupancy. Arithmetic on published numbers: it says
nothing of how fast the kernel runs.
"""

from __future__ import annotations

import math
from typing import Any

from snippets._gpu import specs


def _up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def blocks_per_sm(ctx: Any, capability: str, threads_per_block: int, registers_per_thread: int,
                  shared_per_block: int) -> dict[str, Any]:
    """Resident blocks per SM under each limit, the smallest, which limit it is, and the occupancy."""
    get = lambda field: int(specs.get(ctx, capability, field))  # noqa: E731
    if registers_per_thread > get("max_registers_per_thread") or threads_per_block > get("max_threads_per_block"):
        raise ValueError(f"{registers_per_thread} registers x {threads_per_block} threads cannot launch on {capability}")
    warps = math.ceil(threads_per_block / get("warp_size"))
    regs_per_warp = _up(registers_per_thread * get("warp_size"), get("register_alloc_unit"))
    shared = _up(shared_per_block + get("reserved_shared_per_block"), get("shared_alloc_unit"))
    limits = {
        "threads": get("max_threads_per_sm") // threads_per_block,
        "warps": get("max_warps_per_sm") // warps,
        "blocks": get("max_blocks_per_sm"),
        "registers": (get("registers_per_sm") // regs_per_warp) // warps if registers_per_thread else get("max_blocks_per_sm"),
        "shared": get("shared_per_sm") // shared if shared_per_block else get("max_blocks_per_sm"),
    }
    blocks = min(limits.values())
    limiter = min(limits, key=lambda k: (limits[k], k != "registers" and k != "shared"))
    return {"limits": limits, "blocks": blocks, "limiter": limiter, "warps": blocks * warps,
            "occupancy": blocks * warps / get("max_warps_per_sm")}
