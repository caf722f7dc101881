"""The scope a claim ran in, as a short tag a reader sees beside its sentence.

A sentence is no wider than its evidence: a reader of a GPU answer must see at a glance that a
sentence rests on a CPU run, a kernel compiled but not run, a simulator or published specs. The
backend comes from what the claim needs and how its record says it was made (``observed.evidence``);
a model, shape family or library the claim fixed is declared in its docstring (``范围：…``,
:attr:`verify.core.registry.ClaimSpec.scope`). The page shows both (``CPU · Mixtral 8x7B 的专家形状``).
"""

from __future__ import annotations

from typing import Any

from verify.core.registry import ClaimSpec
from verify.core.states import gpu_side

#: how a GPU-side record was made (snippets/_gpu/note.py's kinds), in the tag's words
MADE = {"compiled": "编译", "simulated": "模拟", "spec": "规格"}
#: what a claim that has not run yet will be, by what it needs (a compiler's claims compile, numba's simulate)
_BY_NEED = (("cuda", "GPU"), ("nvcc", "编译"), ("triton", "编译"), ("numba", "模拟"))
CPU = "CPU"


def backend(spec: ClaimSpec, record: Any = None) -> str:
    """``GPU``, ``编译``, ``模拟``, ``规格`` or ``CPU``: where the claim's observation comes from."""
    if "cuda" in spec.needs:
        return "GPU"
    made = gpu_side(record).get("kind") if record is not None else None
    if made in MADE:
        return MADE[made]
    for need, word in _BY_NEED:
        if need in spec.needs:
            return word
    return CPU


def tag(spec: ClaimSpec, record: Any = None) -> str:
    """The tag beside the sentence: the backend, and the declared scope where there is one."""
    return " · ".join(part for part in (backend(spec, record), spec.scope) if part)
