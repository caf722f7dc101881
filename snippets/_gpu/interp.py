"""Run a Triton kernel in Triton's interpreter, on CPU tensors.

The interpreter runs each program of the grid in turn with NumPy: masks, grids, ``tl.dot``,
atomics and block pointers behave as on a GPU, but ``num_warps`` is ignored, ``tl.dot`` is exact
fp32 (no TF32), an out-of-bounds load is not caught, and nothing about time is learned.

Triton's own library functions (``tl.sum``, ``tl.max``, ``tl.cumsum``, ``tl.zeros``…) are
``@triton.jit`` functions made when ``triton.language`` was imported, without
``TRITON_INTERPRET=1`` (this process also compiles kernels for GPU targets). While an interpreted
kernel runs, their calls are interpreted too, and each call undoes the patching of
``triton.language`` it needed, so a ``triton.compile`` later in the same process is unaffected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from snippets._gpu.note import note
from verify import toolchain


@contextlib.contextmanager
def _library_interpreted() -> Iterator[None]:
    from triton.runtime.interpreter import InterpretedFunction, _patch_lang  # noqa: PLC0415
    from triton.runtime.jit import JITFunction  # noqa: PLC0415

    def interpreted_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _patch_lang(self.fn)
        try:
            return InterpretedFunction(self.fn).rewrite()(*args, **kwargs)
        finally:
            scope.restore()

    call = JITFunction.__call__
    JITFunction.__call__ = interpreted_call  # type: ignore[method-assign]
    try:
        yield
    finally:
        JITFunction.__call__ = call  # type: ignore[method-assign]


class Interpreted:
    """An interpreted kernel: ``k[grid](*args, **constexprs)`` runs it."""

    def __init__(self, fn: Any):
        from triton.runtime.interpreter import InterpretedFunction  # noqa: PLC0415

        self.fn = InterpretedFunction(fn)

    def __getitem__(self, grid: Any) -> Any:
        def launch(*args: Any, **kwargs: Any) -> Any:
            with _library_interpreted():
                return self.fn[grid](*args, **kwargs)
        return launch


def kernel(ctx: Any, fn: Any) -> Interpreted:
    """``fn`` (a plain function in Triton's language) as an interpreted kernel: launch it as ``k[grid](...)``."""
    toolchain.activate()
    import triton  # noqa: PLC0415

    note(ctx, "simulated", tools={"triton interpreter": triton.__version__})
    return Interpreted(fn)
