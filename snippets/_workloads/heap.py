"""How glibc's malloc hands freed heap memory back to the kernel, seen from PyTorch CPU tensors.

PyTorch's CPU allocator is ``posix_memalign``/``free``, so tensor storage follows glibc's rules:

* a block above the mmap threshold (128 KiB at first) gets its own ``mmap``; freeing one raises
  the threshold to that block's size and the trim threshold to twice it, so later blocks of that
  size come from the ``brk`` heap instead;
* ``posix_memalign`` leaves tiny spare chunks beside each block; parked in a fastbin they look
  in use, so freed neighbours cannot merge across them into the free top of the heap;
* a free of at least 64 KiB (``FASTBIN_CONSOLIDATION_THRESHOLD``) consolidates the fastbins and
  then checks whether the top has grown past the trim threshold; if so it shrinks the heap with
  ``brk``, giving every page of it back to the kernel.

So tens of MiB freed by large tensors can stay on the heap until some later 64 KiB tensor is
freed, and that innocent free pays for returning them all.

Run as a module (``python -m snippets._workloads.heap``) it stages that sequence in a fresh
process and prints what it saw as JSON.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

BIG = 4 << 20  # float32 elements: 16 MiB
TRIGGER = 16384  # float32 elements: 64 KiB, the smallest block whose free consolidates and trims


def _heap_end() -> int:
    """The program break: where the ``brk`` heap ends."""
    libc = ctypes.CDLL(None)
    libc.sbrk.restype = ctypes.c_void_p
    libc.sbrk.argtypes = [ctypes.c_long]
    return int(libc.sbrk(0))


def _free(holder: list[torch.Tensor]) -> tuple[float, float]:
    """Drop the only reference to a tensor: (seconds the free took, MiB the heap shrank by)."""
    before = _heap_end()
    start = time.perf_counter()
    holder.clear()
    seconds = time.perf_counter() - start
    return seconds, (before - _heap_end()) / 2**20


def stage() -> dict[str, Any]:
    """Free 32 MiB of large tensors below a live 64 KiB one, then free the 64 KiB tensor."""
    torch.set_num_threads(1)
    _free([torch.ones(BIG)])  # an mmap'ed block: freeing it raises the mmap threshold to 16 MiB
    bigs = [torch.ones(BIG), torch.ones(BIG)]  # both now come from the brk heap, pages touched
    small = [torch.ones(TRIGGER)]  # carved from the top, just above the two
    _, big_drop = _free(bigs)  # tiny spare chunks keep the 32 MiB apart from the top: no trim
    small_s, small_drop = _free(small)  # consolidates: the top may pass the threshold, and is trimmed
    later = sorted(_free([torch.ones(TRIGGER)])[0] for _ in range(21))
    return {
        "heap_drop_on_32m_free_mib": big_drop,
        "heap_drop_on_64k_free_mib": small_drop,
        "that_64k_free_us": small_s * 1e6,
        "later_64k_free_us": later[len(later) // 2] * 1e6,
    }


# Staging only: with glibc's per-thread cache off, the spare chunks that ``posix_memalign``
# leaves beside each block go straight to the fastbins, as they do in a long-running program
# whose cache is full. Even so the heap layout differs between processes (address-space
# randomisation moves the alignment), so the trim shows in most fresh processes, not all.
STAGING = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}
# The usual remedy: fixed thresholds, which also switch off glibc's dynamic adjustment.
FIXED = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(1 << 30)}


def run_stage(env: dict[str, str] | None = None, timeout: float = 60.0) -> dict[str, Any]:
    """:func:`stage` in a fresh Python, with extra environment (``GLIBC_TUNABLES``, ``MALLOC_*``)."""
    root = Path(__file__).resolve().parents[2]
    full = dict(os.environ, **(env or {}))
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), full.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "snippets._workloads.heap"], env=full, cwd=root,
                         capture_output=True, text=True, timeout=timeout, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def attempts(env: dict[str, str], tries: int, stop_at_first_trim: bool) -> list[dict[str, Any]]:
    """Stage the sequence in up to ``tries`` fresh processes."""
    seen = []
    for _ in range(tries):
        seen.append(run_stage(env))
        if stop_at_first_trim and seen[-1]["heap_drop_on_64k_free_mib"] > 0:
            break
    return seen


if __name__ == "__main__":
    print(json.dumps(stage()))
