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

    def reset(self) -> None:
        self.count, self.left = 0, []

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
    os.environ["TRITON_INTERPRET"] = "1"
    import torch  # noqa: PLC0415
    from triton.runtime import interpreter  # noqa: PLC0415

    real = interpreter.GridExecutor.__call__

    def watched(self: Any, *args: Any, **kwargs: Any) -> Any:
        log.paused += 1
        try:
            out = real(self, *args, **kwargs)
            launches.count += 1
            launches.left += [a.detach().reshape(-1).clone() for a in (*args, *kwargs.values())
                              if isinstance(a, torch.Tensor)]
        finally:
            log.paused -= 1
        return out

    interpreter.GridExecutor.__call__ = watched  # type: ignore[method-assign]


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
    _nan_filled(np, cuda)


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
