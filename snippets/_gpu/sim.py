"""Run a CUDA kernel written in numba's CUDA Python in numba's simulator, with an address trace.

The simulator runs every thread of a block as a Python thread, one block after another: thread
and block indices, shared memory, ``syncthreads`` and atomics work; warp shuffles do not exist,
and no time is learned. Its threads interleave as Python's scheduler lets them, not as a GPU's
warps do: a race may show as a wrong result or may not, so a right result proves no kernel
race-free (that is ``compute-sanitizer --tool racecheck`` on a GPU). What it can show is which address each
thread touches, and from that what the memory system would be asked for:

- a global *request* is one access of the 32 threads of a warp (each thread's n-th access to that
  array); the hardware serves it in 32-byte sectors, so :meth:`Trace.sectors` counts the distinct
  sectors a request touches (4 for 32 consecutive floats, 32 for a stride of 32 floats);
- a shared-memory request is served by 32 banks of 4-byte words; threads that touch different
  words of one bank are serialised, threads reading the same word share it (broadcast), so
  :meth:`Trace.conflicts` gives, per request, the largest number of distinct words in one bank
  (1: conflict-free, 32: every thread waits for the others).

Arrays are placed at 256-byte-aligned addresses (as ``cudaMalloc`` returns them), each shared
array at offset 0 of its own space. The model is for 4-byte and smaller elements.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from snippets._gpu.note import note
from verify import toolchain

WARP = 32
SECTOR = 32  # bytes
BANKS, BANK_WIDTH = 32, 4


def cuda() -> Any:
    """numba's ``cuda`` module, in simulator mode (the variable is read when numba.cuda is first imported)."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    toolchain.activate()
    from numba import cuda as numba_cuda  # noqa: PLC0415

    if not numba_cuda.is_available() and numba_cuda.gpus is None:  # the simulator always says it has its fake GPU
        raise RuntimeError("numba's CUDA simulator did not start")
    return numba_cuda


def kernel(ctx: Any, fn: Any) -> Any:
    """``fn`` as a simulated CUDA kernel (``cuda.jit``): launch it as ``k[grid, block](...)``."""
    import numba  # noqa: PLC0415

    jitted = cuda().jit(fn)
    note(ctx, "simulated", tools={"numba simulator": numba.__version__})
    return jitted


@dataclass(frozen=True)
class Access:
    block: tuple[int, int, int]
    thread: int  # linear index in the block (x fastest)
    array: str
    seq: int  # this thread's n-th access to this array
    byte: int  # address in the array's space
    size: int
    write: bool

    @property
    def warp(self) -> int:
        return self.thread // WARP


@dataclass
class Trace:
    accesses: list[Access] = field(default_factory=list)

    def requests(self, array: str) -> list[list[Access]]:
        """Each warp's n-th access to ``array``: one memory request per (block, warp, n)."""
        groups: dict[tuple[Any, ...], list[Access]] = defaultdict(list)
        for a in self.accesses:
            if a.array == array:
                groups[(a.block, a.warp, a.seq)].append(a)
        return [groups[k] for k in sorted(groups)]

    def sectors(self, array: str) -> list[int]:
        """Distinct 32-byte sectors of each request to a global array."""
        return [len({b // SECTOR for a in req for b in range(a.byte, a.byte + a.size)}) for req in self.requests(array)]

    def conflicts(self, array: str) -> list[int]:
        """Per request to a shared array: the most distinct 4-byte words that fall in one bank (1: none)."""
        out = []
        for req in self.requests(array):
            words: dict[int, set[int]] = defaultdict(set)
            for a in req:
                word = a.byte // BANK_WIDTH
                words[word % BANKS].add(word)
            out.append(max(len(w) for w in words.values()))
        return out

    def bytes_requested(self, array: str) -> list[int]:
        return [sum(a.size for a in req) for req in self.requests(array)]


def _offset(ary: Any, idx: Any) -> int:
    idx = idx if isinstance(idx, tuple) else (idx,)
    if len(idx) != ary.ndim or not all(isinstance(i, (int,)) or hasattr(i, "__index__") for i in idx):
        raise TypeError(f"traced arrays take one whole index per dimension, not {idx!r}")
    return sum(int(i) * s for i, s in zip(idx, ary.strides))


class _Recorder:
    def __init__(self, names: dict[int, str]):
        self.names, self.trace, self.lock = names, Trace(), threading.Lock()
        self.seq: dict[tuple[Any, ...], int] = defaultdict(int)
        self.shared_names: dict[tuple[Any, ...], str] = {}
        self.bases = {name: i << 32 for i, name in enumerate(sorted(names.values()))}

    def record(self, name: str, ary: Any, idx: Any, write: bool, base: int = 0) -> None:
        me = threading.current_thread()
        block = tuple(getattr(me, "blockIdx", (0, 0, 0)))
        thread = int(getattr(me, "thread_id", 0))
        with self.lock:
            key = (block, thread, name)
            seq = self.seq[key]
            self.seq[key] += 1
            self.trace.accesses.append(Access(block, thread, name, seq, base + _offset(ary, idx), ary.itemsize, write))  # type: ignore[arg-type]


class _SharedView:
    """A shared array whose element accesses are recorded."""

    def __init__(self, ary: Any, name: str, rec: _Recorder):
        self.__dict__.update(_ary=ary, _name=name, _rec=rec)

    def __getitem__(self, idx: Any) -> Any:
        self._rec.record(self._name, self._ary, idx, False)
        return self._ary[idx]

    def __setitem__(self, idx: Any, value: Any) -> None:
        self._rec.record(self._name, self._ary, idx, True)
        self._ary[idx] = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ary, name)


@contextlib.contextmanager
def _tracing(rec: _Recorder) -> Iterator[None]:
    from numba.cuda.simulator import kernelapi  # noqa: PLC0415
    from numba.cuda.simulator.cudadrv import devicearray  # noqa: PLC0415

    within = devicearray.FakeWithinKernelCUDAArray
    get, put, shared = within.__getitem__, within.__setitem__, kernelapi.FakeCUDAShared.array

    def traced_get(self: Any, idx: Any) -> Any:
        name = rec.names.get(id(self._item))
        if name is not None:
            rec.record(name, self._item._ary, idx, False, rec.bases[name])
        return get(self, idx)

    def traced_put(self: Any, idx: Any, value: Any) -> None:
        name = rec.names.get(id(self._item))
        if name is not None:
            rec.record(name, self._item._ary, idx, True, rec.bases[name])
        put(self, idx, value)

    def traced_shared(self: Any, shape: Any, dtype: Any) -> Any:
        ary = shared(self, shape, dtype)
        with rec.lock:  # named by the order the block first asks for them: shared0, shared1, ...
            key = (id(self), id(ary))
            name = rec.shared_names.setdefault(key, f"shared{sum(1 for k in rec.shared_names if k[0] == id(self))}")
        return _SharedView(ary, name, rec)

    within.__getitem__, within.__setitem__ = traced_get, traced_put  # type: ignore[method-assign]
    kernelapi.FakeCUDAShared.array = traced_shared  # type: ignore[method-assign]
    try:
        yield
    finally:
        within.__getitem__, within.__setitem__ = get, put  # type: ignore[method-assign]
        kernelapi.FakeCUDAShared.array = shared  # type: ignore[method-assign]


def traced(ctx: Any, fn: Any, grid: Any, block: Any, **args: Any) -> tuple[Trace, dict[str, Any]]:
    """Run ``fn`` over ``grid`` × ``block`` with ``args`` as its arguments, in order; NumPy arrays are traced by name.

    Returns the trace and the arrays as the kernel left them (copied back from the simulated device).
    """
    import numpy as np  # noqa: PLC0415

    numba_cuda = cuda()
    k = kernel(ctx, fn)
    passed = {name: numba_cuda.to_device(a) if isinstance(a, np.ndarray) else a for name, a in args.items()}
    arrays = {name: d for name, d in passed.items() if isinstance(args[name], np.ndarray)}
    rec = _Recorder({id(d): name for name, d in arrays.items()})
    with _tracing(rec):
        k[grid, block](*passed.values())
    return rec.trace, {name: d.copy_to_host() for name, d in arrays.items()}
