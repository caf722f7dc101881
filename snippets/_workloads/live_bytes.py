"""Bytes of live tensor storage, counted by a dispatch mode (activation-checkpoint, train-memory).

A CPU has no allocator statistics like ``torch.cuda.memory_allocated``, and tensors under
``FakeTensorMode`` have no memory at all, so :class:`LiveBytes` counts the bytes itself: it sees
every tensor an ATen op returns and holds a weak reference to its storage, adding the storage's
bytes when it first appears and taking them away when it is freed. That is the number
``memory_allocated`` reports on a GPU, minus the allocator's rounding. Tensors made before the mode
was entered (parameters, gradients) are counted once :meth:`LiveBytes.add` is given them.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch
from snippets._workloads.modes import Mode
from torch.utils._pytree import tree_flatten


class LiveBytes(Mode):
    """Bytes of tensor storage alive now (``now``) and at the highest point since :meth:`reset_peak` (``peak``).

    Options: ``copies_of`` (parameters): the ``_to_copy`` outputs of these tensors, autocast's
    lower-precision copies of the weights, are also counted apart, in ``copies``; ``ops_named`` (a
    substring): the ops whose name contains it are written down in ``ops_seen`` (which SDPA kernel ran).
    """

    def __init__(self, copies_of: Iterable[torch.Tensor] = (), ops_named: str | None = None) -> None:
        super().__init__()
        self._refs: dict[int, weakref.ref[Any]] = {}  # id(storage) -> weak reference to it
        self._param_ids = {id(p) for p in copies_of}
        self._ops_named = ops_named
        self.ops_seen: set[str] = set()
        self.now = self.peak = self.copies = 0

    def add(self, t: torch.Tensor, copy: bool = False) -> None:
        """Count ``t``'s storage (once: a view or a tensor seen before adds nothing); ``copy``: in ``copies`` too."""
        st = t.untyped_storage()
        key = id(st)
        ref = self._refs.get(key)
        if ref is not None and ref() is st:
            return
        size = st.nbytes()
        copied = size if copy else 0

        def freed(_ref: weakref.ref[Any]) -> None:
            self.now -= size
            self.copies -= copied
            self._refs.pop(key, None)

        self._refs[key] = weakref.ref(st, freed)
        self.now += size
        self.copies += copied
        self.peak = max(self.peak, self.now)

    def add_all(self, tensors: Iterable[torch.Tensor]) -> None:
        for t in tensors:
            self.add(t)

    def reset_peak(self) -> None:
        self.peak = self.now

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        copy = bool(self._param_ids) and func is torch.ops.aten._to_copy.default and id(args[0]) in self._param_ids
        if self._ops_named is not None and self._ops_named in str(func):
            self.ops_seen.add(str(func))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.add(t, copy)
        return out
