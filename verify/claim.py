"""The claim decorator that snippet files use, and the context a claim runs with.

A snippet file declares claims like this::

    from verify.claim import claim

    @claim(
        "expand.stride-zero",
        question="repeat-vs-expand",
        statement="expand 出来的维度 stride 为 0。",
        expect={"stride": [0, 1]},
    )
    def _(ctx):
        y = torch.tensor([[1, 2, 3]], device=ctx.device).expand(4, 3)
        return {"stride": list(y.stride())}

Every argument of ``@claim`` must be a Python literal: the registry reads them from the source
with ``ast`` so that listing claims, checking pages and building the quiz never import torch.
The function itself runs only inside a worker subprocess (see ``verify.worker``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A ``measured`` claim is a fact whose observed value differs between machines (an error ratio, a count
# that depends on the allocator or on scheduling, a fault count): it is judged like a fact, runs like
# one, and every inequality bound it checks keeps room on every machine and under every stress variant
# (``verify.core.room``), as a ``perf`` claim's does. A plain ``fact`` is the same everywhere.
KINDS = ("fact", "measured", "error", "perf")

ClaimFn = Callable[["Context"], "dict[str, Any] | None"]

# Filled when a snippet module is imported inside a worker: id -> function.
LOADED: dict[str, ClaimFn] = {}


def claim(
    claim_id: str,
    *,
    question: str,
    statement: str,
    expect: dict[str, Any] | None = None,
    raises: list[str] | tuple[str, str] | None = None,
    kind: str | None = None,
    needs: list[str] | tuple[str, ...] = (),
    min_torch: str | None = None,
    timeout: float | None = None,
) -> Callable[[ClaimFn], ClaimFn]:
    """Declare a claim. The arguments are read statically; see ``verify.registry``.

    Args:
        claim_id: stable, readable id, ``<topic>.<what>``.
        question: id of the question page the claim belongs to.
        statement: one sentence of what the claim shows (Chinese, as on the page).
        expect: observed key -> expected value or matcher (see ``verify.matchers``).
        raises: ``(exception type name, message fragment)`` for an expected error.
        kind: ``fact`` (default), ``measured``, ``error`` (implied by ``raises``) or ``perf``.
        needs: requirements beyond a CPU with torch (``cuda``, ``g++``, ``mkl``, ...: ``verify.core.needs``).
        min_torch: lowest torch version the claim is meaningful on.
        timeout: seconds this claim may take (default: the runner's).
    """

    def register(fn: ClaimFn) -> ClaimFn:
        LOADED[claim_id] = fn
        return fn

    return register


@dataclass
class Context:
    """What a claim function receives.

    Attributes:
        device: ``"cuda"`` when the worker has a GPU, else ``"cpu"``.
        workdir: an empty directory for this claim (compiled objects, caches it wants cold).
        snippet_folder: the folder of the snippet file being run (C++ sources beside it).
        observed: values recorded with :meth:`observe`; merged with the function's return value.
    """

    device: str
    workdir: Path
    snippet_folder: Path = Path(".")
    observed: dict[str, Any] = field(default_factory=dict)

    def observe(self, **values: Any) -> None:
        """Record observed values now (useful before an expected exception is raised)."""
        self.observed.update(values)

    @property
    def cuda(self) -> bool:
        return self.device == "cuda"

    def path(self, name: str) -> Path:
        """A path inside this claim's work directory."""
        return self.workdir / name

    def snippet_dir(self) -> Path:
        """The directory of the snippet file being run (for C++ sources beside it)."""
        return self.snippet_folder
