"""How glibc's malloc hands freed heap memory back to the kernel, under PyTorch's CPU allocator.

PyTorch's CPU allocator is ``posix_memalign(64)``/``free``, so tensor storage follows glibc:

* a block above the mmap threshold (128 KiB at first) gets its own ``mmap``; freeing one raises
  the threshold to that block's size and the trim threshold to twice it, so later blocks of that
  size come from the ``brk`` heap instead;
* ``posix_memalign`` leaves tiny spare chunks beside each block; parked in a fastbin they look
  in use, so freed neighbours cannot merge across them into the free top of the heap;
* a free of at least 64 KiB (``FASTBIN_CONSOLIDATION_THRESHOLD``) consolidates the fastbins and
  then checks whether the top has grown past the trim threshold; if so it shrinks the heap with
  ``brk``, giving every page of it back to the kernel.

So tens of MiB freed by large tensors can stay on the heap until some later 64 KiB block is
freed, and that innocent free pays for returning them all.

With tensors the layout depends on what else PyTorch allocates between the steps (it differs
between runs and torch versions), so :func:`stage` makes the same calls PyTorch's allocator makes,
directly, in a fresh process; a last step checks that a tensor's storage lands on that heap too.
Run as a module (``python -m snippets._workloads.heap``) it prints what it saw as JSON.
"""

from __future__ import annotations

import ctypes
import json
import time
from typing import Any

from snippets._workloads.child import run_json

BIG = 16 << 20  # bytes: a 4M-element float32 tensor
TRIGGER = 64 << 10  # bytes: a 16384-element float32 tensor, the smallest free that consolidates
ALIGN = 64  # PyTorch's CPU allocator alignment (c10's gAlignment on x86-64)

# Staging: with glibc's per-thread cache off, the spare chunks go straight to the fastbins, as
# they do in a long-running program whose cache is full.
STAGING = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}
# The usual remedy: fixed thresholds, which also switch off glibc's dynamic adjustment.
FIXED = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(1 << 30)}


class _Libc:
    def __init__(self) -> None:
        libc = ctypes.CDLL(None)
        libc.sbrk.restype = ctypes.c_void_p
        libc.sbrk.argtypes = [ctypes.c_long]
        libc.free.argtypes = [ctypes.c_void_p]
        libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
        self.c = libc

    def heap_end(self) -> int:
        """The program break: where the ``brk`` heap ends."""
        return int(self.c.sbrk(0))

    def alloc(self, size: int) -> int:
        """What PyTorch's allocator does for a new CPU storage, and first-touch every page."""
        ptr = ctypes.c_void_p()
        if self.c.posix_memalign(ctypes.byref(ptr), ALIGN, size) != 0:
            raise MemoryError(f"posix_memalign({size})")
        self.c.memset(ptr, 1, size)
        return int(ptr.value or 0)

    def free(self, ptr: int) -> tuple[float, float]:
        """Free a block: (seconds the free took, MiB the heap shrank by)."""
        before = self.heap_end()
        start = time.perf_counter()
        self.c.free(ptr)
        seconds = time.perf_counter() - start
        return seconds, (before - self.heap_end()) / 2**20


def stage() -> dict[str, Any]:
    """Free 32 MiB of large blocks below a live 64 KiB one, then free the 64 KiB block."""
    libc = _Libc()
    libc.free(libc.alloc(BIG))  # an mmap'ed block: freeing it raises the mmap threshold to 16 MiB
    start = libc.heap_end()
    bigs = [libc.alloc(BIG), libc.alloc(BIG)]  # both now come from the brk heap
    small = libc.alloc(TRIGGER)  # carved from the top, just above the two
    grown = (libc.heap_end() - start) / 2**20
    big_drop = sum(libc.free(p)[1] for p in bigs)  # spare chunks keep them apart from the top
    small_s, small_drop = libc.free(small)  # consolidates; the top passes the threshold: trimmed
    later = sorted(libc.free(libc.alloc(TRIGGER))[0] for _ in range(21))
    # A tensor's storage takes the same path: a 16 MiB tensor now grows the brk heap.
    import torch  # noqa: PLC0415  (after the staging, so that its own allocations come first)

    before = libc.heap_end()
    tensor = torch.ones(BIG // 4)
    tensor_growth = (libc.heap_end() - before) / 2**20
    del tensor
    return {
        "heap_growth_for_two_16m_blocks_mib": grown,
        "heap_drop_on_32m_free_mib": big_drop,
        "heap_drop_on_64k_free_mib": small_drop,
        "that_64k_free_us": small_s * 1e6,
        "later_64k_free_us": later[len(later) // 2] * 1e6,
        "heap_growth_for_16m_tensor_mib": tensor_growth,
    }


def run_stage(env: dict[str, str], timeout: float = 60.0) -> dict[str, Any]:
    """:func:`stage` in a fresh Python, with extra environment (``GLIBC_TUNABLES``, ``MALLOC_*``)."""
    return run_json("snippets._workloads.heap", env=env, timeout=timeout)


if __name__ == "__main__":
    print(json.dumps(stage()))
