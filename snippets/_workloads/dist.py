"""Ranks of a distributed training step, as gloo processes on the CPU (ddp-bucketing, zero-stages).

A scenario is a function ``scenario(rank, store, outdir)`` of a snippet file. :func:`run_ranks`
starts it in ``WORLD`` processes with torch.multiprocessing and a file:// store under the claim's
workdir, so claims that run at the same time never share a port. A rank begins with
:func:`init_rank` and ends with :func:`finish_rank`, which writes ``rank<r>.json``; ``run_ranks``
returns those, one per rank, and keeps them, so the claims of one snippet file share one run.

The ranks are forked from the claim's worker, which has torch loaded: a spawned rank spends seconds
importing it again before its first collective. Where CUDA is initialised in the worker (a fork
cannot use it) they are spawned, and spawn pickles the function a child runs by its module and
name, while a snippet file is loaded under a name no child can import. So every child runs
:func:`_rank_main` of this module (the project root is on the children's path), which loads the
snippet file by its path and calls the scenario there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
import torch.distributed as dist
from snippets._workloads.modes import Mode
from torch.utils._pytree import tree_leaves

WORLD = 2

_RESULTS: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (snippet file, scenario) -> results by rank


def run_ranks(scenario: Callable[[int, str, str], None], ctx: Any, timeout: float = 90.0) -> list[dict[str, Any]]:
    """Run ``scenario`` on ``WORLD`` ranks (once per process); what each rank passed to :func:`finish_rank`."""
    path, name = str(Path(scenario.__code__.co_filename).resolve()), scenario.__name__
    if (path, name) in _RESULTS:
        return _RESULTS[path, name]
    outdir = ctx.path(name)
    outdir.mkdir(parents=True, exist_ok=True)
    method = "spawn" if torch.cuda.is_initialized() else "fork"
    procs = torch.multiprocessing.start_processes(_rank_main, args=(path, name, str(outdir / "store"), str(outdir)),
                                                  nprocs=WORLD, join=False, start_method=method)
    deadline = time.monotonic() + timeout
    while not procs.join(timeout=1):
        if time.monotonic() > deadline:
            for p in procs.processes:
                p.kill()
            raise TimeoutError(f"{name}: the ranks did not finish within {timeout:.0f} s")
    _RESULTS[path, name] = [json.loads((outdir / f"rank{r}.json").read_text()) for r in range(WORLD)]
    return _RESULTS[path, name]


def _rank_main(rank: int, path: str, name: str, store: str, outdir: str) -> None:
    """A child: load the snippet file by its path, run its scenario ``name`` as ``rank``."""
    spec = importlib.util.spec_from_file_location(f"_rank_{Path(path).stem}", path)
    assert spec and spec.loader
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    getattr(module, name)(rank, store, outdir)


def init_rank(rank: int, store: str) -> None:
    torch.set_num_threads(1)  # two ranks share the machine's cores
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=WORLD)


def finish_rank(rank: int, outdir: str, result: dict[str, Any]) -> None:
    (Path(outdir) / f"rank{rank}.json").write_text(json.dumps(result))
    dist.barrier()
    dist.destroy_process_group()
    # Leave without running C++ static destructors: with gloo, one exit in a dozen or so otherwise
    # aborts ("terminate called without an active exception") after everything above has finished.
    os._exit(0)


class CommLog(Mode):
    """Every c10d collective that runs while active: its name and the element counts of its tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[list[Any]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "c10d":
            sizes = [t.numel() for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
            self.ops.append([func.overloadpacket.__name__, sizes])
        return func(*args, **(kwargs or {}))
