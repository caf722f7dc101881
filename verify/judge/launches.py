"""Kernel problems in the judge's child: Triton's interpreter and numba's CUDA simulator, with launches watched.

Loaded by :mod:`verify.judge.child` by path (the child imports only the standard library, torch and the
pinned GPU toolchain), before the candidate's file. :func:`install` turns the interpreter or the simulator
on and wraps its launch, so that each launch

- is counted: a kernel problem fails a case in which no kernel ran;
- runs with the operator log paused (the interpreter's own copies are not the solution's PyTorch code, so
  the problem's list of allowed operators judges only what the solution runs outside its kernels);
- leaves a copy of every tensor or array argument as the kernel left it. The value a case returns must be
  one of those copies, element for element: an answer computed outside a kernel and returned instead of
  what the kernel wrote fails. An answer computed outside and then copied in by a kernel is not caught;
  the operator log (Triton) and the allowed imports are what stand against that.

A numba solution is given NumPy arrays and returns them; :func:`to_numpy` and :func:`to_torch` convert at
the boundary, so that cases and outputs travel as tensors like every other problem's. ``numpy.empty`` and
``numpy.empty_like`` (and the simulator's ``device_array``) fill new floating arrays with NaN, as the
operator log does for ``torch.empty``: an element the kernel never writes stays NaN.
"""

from __future__ import annotations

import os
import sys
from typing import Any


class Launches:
    """What the kernels of one case did: how many ran, and the arrays each left behind."""

    def __init__(self) -> None:
        self.count = 0
        self.left: list[Any] = []
        self.outside = 0  # Triton: lanes of loads and stores outside every tensor of their launch, left out

    def reset(self) -> None:
        self.count, self.left, self.outside = 0, [], 0

    def wrote(self, value: Any) -> bool:
        """Whether every tensor in ``value`` is, element for element, an array a kernel left."""
        import torch  # noqa: PLC0415

        if isinstance(value, (list, tuple)):
            return bool(value) and all(self.wrote(v) for v in value)
        if not isinstance(value, torch.Tensor):
            return False
        flat = value.detach().reshape(-1)
        return any(_same(flat, seen) for seen in self.left)


def _same(a: Any, b: Any) -> bool:
    import torch  # noqa: PLC0415

    if a.numel() != b.numel() or a.dtype != b.dtype:
        return False
    both_nan = torch.isnan(a) & torch.isnan(b) if a.is_floating_point() else torch.zeros_like(a, dtype=torch.bool)
    return bool(((a == b) | both_nan).all())


def install(language: str, tools: str, launches: Launches, log: Any) -> None:
    """Turn on Triton's interpreter or numba's simulator from the toolchain folder ``tools``, launches watched."""
    if tools and tools not in sys.path:
        sys.path.append(tools)
    if language == "triton":
        _triton(launches, log)
    elif language == "numba":
        _numba(launches)


def _triton(launches: Launches, log: Any) -> None:
    """Triton's interpreter, with each launch counted, its programs run last to first, and its memory guarded.

    The interpreter runs a grid's programs first to last; a GPU runs them in no set order. Run first to last,
    a program that writes past its own part (a store without its mask) is overwritten by the next program, and
    the bug never shows; run last to first, its stray write stays where the judge sees it.

    The interpreter reads and writes raw addresses: an access outside every tensor of the launch would read the
    process's other memory or corrupt it. Such a lane is left out: a load gets NaN there (an integer load
    keeps ``other``), a store writes nothing, and ``launches.outside`` counts them.
    """
    os.environ["TRITON_INTERPRET"] = "1"
    import torch  # noqa: PLC0415
    from triton.runtime import interpreter  # noqa: PLC0415

    extents: list[tuple[int, int]] = []  # the storages of the running launch's tensors, [start, end) in bytes

    def watched(self: Any, *args: Any, **kwargs: Any) -> Any:
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        log.paused += 1
        try:
            extents[:] = [(t.untyped_storage().data_ptr(), t.untyped_storage().data_ptr() + t.untyped_storage().nbytes())
                          for t in tensors]
            _last_to_first(interpreter, self, args, kwargs)
            launches.count += 1
            launches.left += [t.detach().reshape(-1).clone() for t in tensors]
        finally:
            extents.clear()
            log.paused -= 1

    interpreter.GridExecutor.__call__ = watched  # type: ignore[method-assign]
    _guard_memory(interpreter, extents, launches)
    _builtins_listed_once(interpreter)


def _builtins_listed_once(interpreter: Any) -> None:
    """The interpreter's patching of ``triton.language``, with each package's builtins listed once.

    The interpreter patches the language's builtins on every launch and on every call of a ``@triton.jit``
    function inside a kernel (``tl.max``, ``tl.sum`` and the rest of Triton's own library are such functions),
    and each time it finds them with ``inspect.getmembers``: about half of a softmax's judging. Listed here before
    any patching, they are the ones every call would find; a package not listed here is searched as before. A call
    inside a kernel, where the launch has already patched the package, wraps the same builtins again (where the
    search would find nothing left to patch): the same functions. Only a launch restores its patches, and its
    record holds the package as it was before the launch.
    """
    import inspect  # noqa: PLC0415

    import triton.language as tl  # noqa: PLC0415

    real = interpreter._patch_builtin
    packages = [tl, tl.core, tl.tensor, tl.math, tl.core.tensor_descriptor_base]
    listed = {id(pkg): [(name, member) for name, member in inspect.getmembers(pkg) if tl.core.is_builtin(member)]
              for pkg in packages}

    def patch_builtin(pkg: Any, builder: Any, scope: Any) -> None:
        members = listed.get(id(pkg))
        if members is None:
            real(pkg, builder, scope)
            return
        for name, member in members:
            interpreter._patch_attr(pkg, name, member, builder, scope)

    interpreter._patch_builtin = patch_builtin


def _last_to_first(interpreter: Any, self: Any, args_dev: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``GridExecutor.__call__`` of the pinned Triton, with the grid's programs run in reverse order."""
    import inspect  # noqa: PLC0415
    import itertools  # noqa: PLC0415

    spec = inspect.getfullargspec(self.fn)
    kwargs = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs}
    args_hst, kwargs_hst = self._init_args_hst(args_dev, kwargs)
    for hook in self.pre_run_hooks:
        hook(*args_hst, **kwargs_hst)
    scope = interpreter._patch_lang(self.fn)
    try:
        named = inspect.getcallargs(self.fn, *args_hst, **kwargs_hst)
        named = {k: v if k in self.constexprs else interpreter._implicit_cvt(v) for k, v in named.items()}
        grid = self.grid(named) if callable(self.grid) else self.grid
        if len(grid) > 3:
            raise ValueError("grid must have at most 3 dimensions")
        grid = (*grid, *(1,) * (3 - len(grid)))
        interpreter.interpreter_builder.set_grid_dim(*grid)
        for x, y, z in reversed(list(itertools.product(*(range(int(n)) for n in grid)))):
            interpreter.interpreter_builder.set_grid_idx(x, y, z)
            self.fn(**named)
    finally:
        scope.restore()
    self._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)


def _guard_memory(interpreter: Any, extents: list[tuple[int, int]], launches: Launches) -> None:
    import numpy as np  # noqa: PLC0415

    builder, handle = interpreter.InterpreterBuilder, interpreter.TensorHandle
    load, store = builder.create_masked_load, builder.create_masked_store

    def outside(ptrs: Any, mask: Any, size: int) -> Any:
        addr = ptrs.data.astype(np.uint64)
        inside = np.zeros(addr.shape, dtype=bool)
        for start, end in extents:
            inside |= (addr >= start) & (addr + size <= end)
        return np.broadcast_to(mask.data, addr.shape) & ~inside

    def guarded_load(self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
        size = np.dtype(interpreter._get_np_dtype(ptrs.get_element_ty())).itemsize
        out = outside(ptrs, mask, size)
        if not out.any():
            return load(self, ptrs, mask, other, *rest)
        launches.outside += int(out.sum())
        got = load(self, ptrs, handle(mask.data & ~out, mask.dtype), other, *rest)
        if got.data.dtype.kind in "fc":
            got.data[out] = np.nan
        return got

    def guarded_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        out = outside(ptrs, mask, value.data.dtype.itemsize)
        if not out.any():
            return store(self, ptrs, value, mask, *rest)
        launches.outside += int(out.sum())
        return store(self, ptrs, value, handle(mask.data & ~out, mask.dtype), *rest)

    builder.create_masked_load, builder.create_masked_store = guarded_load, guarded_store


class TritonLaunches:
    """The GPU report's mode: the candidate's launches recorded, not run, then compiled for named targets.

    Triton is imported without its interpreter, so that the candidate's kernels (and Triton's own library
    functions) are real ``JITFunction``s; a launch goes to :meth:`record` instead of a driver. Each kernel's
    first launch is compiled as a launch on a GPU would specialise it (the same binder: the argument types,
    16-byte alignment and divisibility of pointers and integers, the constexprs, ``num_warps``), for each
    target, by ``triton.compile`` with no driver; ptxas and cuobjdump are the ones Triton's wheel bundles.
    An autotuned kernel (``triton.autotune``) benchmarks on a GPU first: it is not supported here.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []

    def record(self, jit: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if all(j is not jit for j, _, _ in self.seen):
            self.seen.append((jit, args, kwargs))

    def compile(self, targets: dict[str, int], work: str) -> dict[str, Any]:
        """Per target, each recorded kernel's numbers (or the compiler's error), as JSON-ready data."""
        import triton  # noqa: PLC0415
        from triton.backends.compiler import GPUTarget  # noqa: PLC0415
        from triton.compiler import ASTSource, make_backend  # noqa: PLC0415
        from triton.runtime.jit import create_function_from_signature  # noqa: PLC0415

        tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
        out: dict[str, Any] = {"triton": triton.__version__, "targets": {}}
        for name, cc in targets.items():
            target = GPUTarget("cuda", cc, 32)
            backend = make_backend(target)
            kernels = []
            for k, (jit, args, kwargs) in enumerate(self.seen):
                entry: dict[str, Any] = {"kernel": jit.__name__}
                try:
                    binder = create_function_from_signature(jit.signature, jit.params, backend)
                    bound, spec, options = binder(*args, **kwargs)
                    options, signature, constexprs, attrs = jit._pack_args(backend, kwargs, bound, spec, options)
                    made = triton.compile(ASTSource(jit, signature, constexprs, attrs), target=target,
                                          options=options.__dict__)
                    cubin = os.path.join(work, f"k{k}-{name}.cubin")
                    with open(cubin, "wb") as f:
                        f.write(made.asm["cubin"])
                    entry |= _cubin_numbers(tools, cubin) | {"shared": int(made.metadata.shared),
                                                             "num_warps": int(made.metadata.num_warps)}
                except Exception as exc:  # noqa: BLE001  (the candidate's kernel may not compile for a GPU)
                    lines = [line for line in f"{type(exc).__name__}: {exc}".splitlines() if line.strip()]
                    # a CompilationError lists the kernel's source between where it is and why: keep those two
                    entry["error"] = " … ".join(dict.fromkeys([lines[0], lines[-1]]))[:600] if lines else "?"
                kernels.append(entry)
            out["targets"][name] = kernels
        return out


def triton_recorder(tools: str) -> TritonLaunches:
    """Import Triton from ``tools`` without its interpreter; every launch is recorded, none runs."""
    if tools and tools not in sys.path:
        sys.path.append(tools)
    os.environ.pop("TRITON_INTERPRET", None)
    from triton.runtime.jit import JITFunction  # noqa: PLC0415

    recorder = TritonLaunches()

    def record(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        recorder.record(self, args, kwargs)

    JITFunction.run = record  # type: ignore[method-assign]
    return recorder


def _cubin_numbers(tools: str, cubin: str) -> dict[str, Any]:
    """What cuobjdump reads from one kernel's cubin: registers, stack (spills), and the SASS opcodes that tell
    the widest global load and the tensor-core instructions."""
    import re  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    def dump(flag: str) -> str:
        done = subprocess.run([os.path.join(tools, "cuobjdump"), flag, cubin], capture_output=True, text=True,
                              timeout=120, check=True)
        return done.stdout

    usage = re.search(r"REG:(\d+) STACK:(\d+) SHARED:\d+ LOCAL:(\d+)", dump("-res-usage"))
    if usage is None:
        raise RuntimeError("cuobjdump -res-usage: no REG line")
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", dump("-sass"))
    loads = [op for op in ops if op.split(".")[0] in ("LDG", "LDGSTS")]
    width = {op: max((int(w) for w in re.findall(r"\.(64|128)\b", op)), default=32) for op in loads}
    return {"registers": int(usage[1]), "stack": int(usage[2]), "local": int(usage[3]),
            "widest_load": max(width, key=lambda op: width[op]) if width else "",
            "widest_bits": max(width.values(), default=0),
            "mma": sum(1 for op in ops if op.split(".")[0] in ("HMMA", "HGMMA", "IMMA", "IGMMA", "QGMMA"))}


def _numba(launches: Launches) -> None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from numba import cuda  # noqa: PLC0415
    from numba.cuda.simulator import kernel  # noqa: PLC0415

    real = kernel.FakeCUDAKernel.__call__

    def watched(self: Any, *args: Any) -> Any:
        out = real(self, *args)
        if not self._device:  # a device function called from a kernel is not a launch
            launches.count += 1
            for a in args:
                host = getattr(a, "_ary", a)  # a simulated device array keeps its data in ``_ary``
                if isinstance(host, np.ndarray):
                    launches.left.append(torch.from_numpy(np.array(host, copy=True)).reshape(-1))
        return out

    kernel.FakeCUDAKernel.__call__ = watched  # type: ignore[method-assign]
    _shared_keyed_by_frame()
    _nan_filled(np, cuda)
    _one_thread_at_a_time(kernel, np)
    _bounds_poisoned(launches)


def _shared_keyed_by_frame() -> None:
    """The simulator's shared arrays told apart by the kernel line that asks for one, read from its frame.

    The simulator keys each ``cuda.shared.array`` call by its caller's file and line, and finds them with
    ``traceback.extract_stack``: every frame of the stack, with its source line, on each call of every thread (a
    third of a scan's simulated time). The caller's frame gives the same file and line. Frames of this module are
    passed over: the GPU sections' access tracing (:func:`_shared_traced`) calls the simulator's ``array`` for the
    kernel, and as the caller it would make every shared array of a kernel one array.
    """
    import types  # noqa: PLC0415

    from numba.cuda.simulator import kernelapi  # noqa: PLC0415

    def extract_stack(frame: Any) -> list[tuple[str, int]]:
        caller = frame.f_back
        while caller.f_back is not None and caller.f_code.co_filename == __file__:
            caller = caller.f_back
        return [(caller.f_code.co_filename, caller.f_lineno), (frame.f_code.co_filename, frame.f_lineno)]

    kernelapi.traceback = types.SimpleNamespace(extract_stack=extract_stack)  # type: ignore[attr-defined]


def _nan_filled(np: Any, cuda: Any) -> None:
    def filling(make: Any) -> Any:
        def made(*args: Any, **kwargs: Any) -> Any:
            out = make(*args, **kwargs)
            data = getattr(out, "_ary", out)
            if isinstance(data, np.ndarray) and data.dtype.kind in "fc":
                data.fill(np.nan)
            return out
        return made

    np.empty, np.empty_like = filling(np.empty), filling(np.empty_like)
    cuda.device_array, cuda.device_array_like = filling(cuda.device_array), filling(cuda.device_array_like)


def _one_thread_at_a_time(kernel: Any, np: Any) -> None:
    """The simulator's threads of a block, run one at a time in a fixed order instead of as the OS schedules them.

    Each thread runs, in the order of its linear index, until it waits at ``syncthreads`` or ends; when every
    living thread waits, they all go on, in the same order. A race-free kernel gives the same result under any
    order; a missing barrier gives the same wrong result on every run (thread 0 runs all its tree steps before
    thread 1 starts), so a known-wrong solution with it can be named. Code that relies on the threads of a warp
    running in step without a barrier fails here too (since Volta a GPU does not promise it either), and a thread
    that spins waiting for another never gives way: that ends as a timeout.

    The threads are kept from block to block and launch to launch while the block's shape stays the same (starting a
    Python thread for every simulated thread of every block was a fifth of a scan's judging); a block that ends in
    an exception lets its threads go and the next block starts new ones.
    """
    import sys  # noqa: PLC0415
    import threading  # noqa: PLC0415

    threading.stack_size(1 << 20)  # up to 1024 threads a block within the child's address-space limit

    class Turn(kernel.BlockThread):  # type: ignore[misc,name-defined]
        """One simulated thread: it runs each block it is given (``go``) until that block's end, then waits."""

        def __init__(self, manager: Any, block_point: Any, back: Any) -> None:
            super().__init__(None, manager, (0, 0, 0), block_point, False)
            self.back, self.go, self.job, self.finished = back, threading.Semaphore(0), None, True

        def give(self, manager: Any, grid_point: Any, job: Any) -> None:
            self._manager, self.blockIdx, self.job = manager, kernel.Dim3(*grid_point), job
            self.exception, self.abort, self.syncthreads_blocked, self.finished = None, False, False, False
            self.syncthreads_event.clear()
            self.go.release()

        def stop(self) -> None:
            self.job = None
            self.go.release()

        def run(self) -> None:
            while True:
                self.go.acquire()
                job = self.job
                if job is None:
                    return
                try:
                    job()
                except Exception as e:  # noqa: BLE001  (worded as the simulator's own BlockThread words it)
                    where = f"tid={list(self.threadIdx)} ctaid={list(self.blockIdx)}"
                    self.exception = (type(e)(f"{where}: {e}" if str(e) else where), sys.exc_info()[2])
                except BaseException:
                    self.finished = True
                    self.back.release()
                    raise
                self.finished = True
                self.back.release()

        def syncthreads(self) -> None:
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            self.syncthreads_blocked = True
            self.back.release()  # the manager runs the next thread
            self.syncthreads_event.wait()
            self.syncthreads_event.clear()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

    kept: dict[str, Any] = {"shape": None, "threads": []}

    def threads_for(manager: Any) -> list[Any]:
        shape = tuple(manager._block_dim)
        threads = kept["threads"]
        if kept["shape"] != shape or not all(t.is_alive() for t in threads):
            for t in threads:
                t.stop()
            back = threading.Semaphore(0)
            threads = sorted((Turn(manager, p, back) for p in np.ndindex(*shape)), key=lambda t: t.thread_id)
            for t in threads:
                t.start()
            kept["shape"], kept["threads"] = shape, threads
        return threads

    class InOrder(kernel.BlockManager):  # type: ignore[misc,name-defined]
        def run(self, grid_point: Any, *args: Any) -> None:
            threads = threads_for(self)
            back = threads[0].back
            try:
                for t in threads:
                    t.give(self, grid_point, lambda: self._f(*args))
                    back.acquire()
                    _raise_first(threads, t)
                alive = [t for t in threads if not t.finished]
                while alive:
                    for t in alive:
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
                        back.acquire()
                        _raise_first(threads, t)
                    alive = [t for t in alive if not t.finished]
            except BaseException:
                for t in threads:  # told to stop by _raise_first, they wind down; none of them is given a block again
                    t.stop()
                kept["shape"], kept["threads"] = None, []
                raise

    kernel.BlockManager = InOrder


def _raise_first(threads: list[Any], t: Any) -> None:
    """The exception ``t`` ended with, raised after the other threads of its block are told to stop."""
    if not t.exception:
        return
    for other in threads:
        other.abort = True
        other.syncthreads_blocked = False
        other.syncthreads_event.set()
    raise t.exception[0].with_traceback(t.exception[1])


def _outside(ary: Any, idx: Any) -> bool:
    """Whether ``idx`` (one whole integer index per dimension) falls outside ``ary``; a negative index is outside
    too (a GPU does not wrap it). A slice or a partial index is left to NumPy."""
    import operator  # noqa: PLC0415

    idx = idx if isinstance(idx, tuple) else (idx,)
    if len(idx) != ary.ndim:
        return False
    for i, n in zip(idx, ary.shape):
        try:
            k = operator.index(i)
        except TypeError:
            return False
        if not 0 <= k < n:
            return True
    return False


class NumbaTrace:
    """What the kernels of a numba run touched: out-of-bounds accesses always, every element access when ``on``.

    An access is a row ``(array, block, thread, seq, byte, size, write)``: the array named by launch and kind
    (``k0:global1``, ``k0:shared0``), the block index, the thread's linear index in its block, that thread's
    n-th access to that array, the byte offset in the array (a view's offset from the array it views included),
    the element size and whether it writes. :mod:`verify.judge.gpu_numba` turns the rows into requests.
    """

    CAP = 150_000  # rows kept: the result file stays well under the child's output cap

    def __init__(self, launches: Launches) -> None:
        self.launches, self.on = launches, False
        self.outside, self.rows, self.capped = 0, [], False  # type: tuple[int, list[tuple[Any, ...]], bool]
        self.names: dict[Any, str] = {}
        self.seq: dict[tuple[Any, ...], int] = {}

    def take(self) -> dict[str, Any]:
        """The rows recorded since the last call, and the counts; then starts again."""
        out = {"rows": self.rows, "outside": self.outside, "launches": self.launches.count, "capped": self.capped}
        self.outside, self.rows, self.capped, self.names, self.seq = 0, [], False, {}, {}
        return out

    def name(self, key: Any, kind: str) -> str:
        launch = self.launches.count  # counted after a launch ends: during it, its own index
        full = (launch, kind, key)
        if full not in self.names:
            self.names[full] = f"k{launch}:{kind}{sum(1 for k in self.names if k[:2] == (launch, kind))}"
        return self.names[full]

    def record(self, array: str, ary: Any, idx: Any, write: bool) -> None:
        import operator  # noqa: PLC0415
        import threading  # noqa: PLC0415

        idx = idx if isinstance(idx, tuple) else (idx,)
        try:
            offset = sum(operator.index(i) * s for i, s in zip(idx, ary.strides, strict=True))
        except (TypeError, ValueError):  # a slice or a partial index: not an element access
            return
        offset += ary.__array_interface__["data"][0] - _root(ary).__array_interface__["data"][0]
        me = threading.current_thread()
        block = tuple(int(b) for b in getattr(me, "blockIdx", (0, 0, 0)))
        thread = int(getattr(me, "thread_id", 0))
        key = (array, block, thread)
        seq = self.seq.get(key, 0)
        self.seq[key] = seq + 1
        if len(self.rows) >= self.CAP:
            self.capped = True
            return
        self.rows.append((array, block, thread, seq, offset, int(ary.itemsize), write))


_TRACE: list[NumbaTrace] = []  # the one a numba child made (install)


def numba_trace() -> NumbaTrace:
    """The child's :class:`NumbaTrace`; the sim-report mode turns it ``on`` and shares its shared arrays."""
    trace = _TRACE[0]
    if not trace.on:
        trace.on = True
        _shared_traced(trace)
    return trace


def _bounds_poisoned(launches: Launches) -> None:
    """A global float array's element outside its shape, read or written in a kernel, as a GPU's address arithmetic
    takes it: ``x[row, col]`` with ``col`` past the row is the element that far into the array (the next row's);
    past the whole allocation, a read is NaN and a write is dropped.

    The simulator would raise ``IndexError`` at once; a GPU reads and writes the neighbouring elements (or faults),
    which is what lets a missing bounds check corrupt another row. Each such access is counted (the GPU section
    reports it). Integer arrays keep the simulator's error.
    """
    from numba.cuda.simulator.cudadrv import devicearray  # noqa: PLC0415

    trace = NumbaTrace(launches)
    _TRACE[:] = [trace]
    within = devicearray.FakeWithinKernelCUDAArray
    get, put = within.__getitem__, within.__setitem__

    def outside(self: Any, idx: Any, write: bool) -> tuple[Any, int] | None:
        """Where an access outside the array lands (``(flat root, -1)`` beyond it), or ``None`` for one inside it."""
        ary = self._item._ary
        if ary.dtype.kind == "f" and _outside(ary, idx):
            trace.outside += 1
            return _landing(ary, idx)
        if trace.on:
            trace.record(trace.name(id(_root(ary)), "global"), ary, idx, write)
        return None

    def checked_get(self: Any, idx: Any) -> Any:
        lands = outside(self, idx, False)
        if lands is None:
            return get(self, idx)
        flat, k = lands
        return flat[k] if k >= 0 else self._item._ary.dtype.type("nan")

    def checked_put(self: Any, idx: Any, value: Any) -> None:
        lands = outside(self, idx, True)
        if lands is None:
            put(self, idx, value)
        elif lands[1] >= 0:
            lands[0][lands[1]] = value

    within.__getitem__, within.__setitem__ = checked_get, checked_put  # type: ignore[method-assign]


def _root(ary: Any) -> Any:
    """The array that owns the memory ``ary`` views."""
    while hasattr(ary.base, "__array_interface__"):
        ary = ary.base
    return ary


def _landing(ary: Any, idx: Any) -> tuple[Any, int]:
    """The flat owning array and the element an out-of-shape index reaches by address arithmetic (-1: past it)."""
    import operator  # noqa: PLC0415

    root = _root(ary)
    idx = idx if isinstance(idx, tuple) else (idx,)
    pos = ary.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    pos += sum(operator.index(i) * s for i, s in zip(idx, ary.strides))
    if root.dtype != ary.dtype or not root.flags.c_contiguous or pos % ary.itemsize or not 0 <= pos < root.nbytes:
        return root, -1
    return root.reshape(-1), pos // ary.itemsize


def _shared_traced(trace: NumbaTrace) -> None:
    """Shared arrays handed out as views whose element accesses ``trace`` records."""
    from numba.cuda.simulator import kernelapi  # noqa: PLC0415

    real = kernelapi.FakeCUDAShared.array

    class Shared:
        def __init__(self, ary: Any, name: str) -> None:
            self.__dict__.update(_ary=ary, _name=name)

        def __getitem__(self, idx: Any) -> Any:
            trace.record(self._name, self._ary, idx, False)
            return self._ary[idx]

        def __setitem__(self, idx: Any, value: Any) -> None:
            trace.record(self._name, self._ary, idx, True)
            self._ary[idx] = value

        def __getattr__(self, name: str) -> Any:
            return getattr(self._ary, name)

        def __len__(self) -> int:
            return len(self._ary)

    def traced(self: Any, shape: Any, dtype: Any) -> Any:
        ary = real(self, shape, dtype)
        return Shared(ary, trace.name((id(self), id(ary)), "shared"))

    kernelapi.FakeCUDAShared.array = traced  # type: ignore[method-assign]


def to_numpy(value: Any) -> Any:
    """A case's tensors as the NumPy arrays a numba solution is given (copies)."""
    import torch  # noqa: PLC0415

    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    return value


def to_torch(value: Any) -> Any:
    """What a numba solution returned (arrays, or simulated device arrays) as tensors; anything else as it is."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    data = getattr(value, "_ary", value)
    if isinstance(data, np.ndarray):
        return torch.from_numpy(np.array(data, copy=True))
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value
