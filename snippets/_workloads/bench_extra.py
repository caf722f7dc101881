"""Workloads only the benchmarks use: per-call overhead against size, and CUDA graphs.

Dispatch overhead: ``torch.add`` of ``n`` elements costs a fixed part (Python binding, argument
parsing, dispatcher, allocation of the output) plus a part proportional to ``n``. Over a sweep of
sizes the fixed part is the floor of the curve; where the proportional part overtakes it,
compute hides the overhead.

The fresh-output variant is the python-overhead claims' own ``tiny_add``; the DataLoader, C++
extension and compile benchmarks take their workloads from :mod:`snippets._workloads.overhead`.

CUDA graphs: a loop of tiny in-place kernels is bound by launch cost; captured once into a graph
and replayed, the launches go to the GPU as one unit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from snippets._workloads.overhead import tiny_add

TINY_KERNELS = 64  # kernels per step in the CUDA-graph workload


def add_case(n: int, device: str, preallocated: bool) -> Callable[[], Any]:
    """``a + b`` on ``n`` float32 elements, into a fresh or a preallocated output."""
    a = torch.randn(n, device=device)
    b = torch.randn(n, device=device)
    if not preallocated:
        return lambda: tiny_add(a, b)  # the same call as the eager claims time, at every size
    out = torch.empty_like(a)
    return lambda: torch.add(a, b, out=out)


def tiny_step(x: torch.Tensor) -> None:
    for _ in range(TINY_KERNELS):
        x.mul_(1.0001).add_(1e-4)


def graph_case(device: str, numel: int = 1024) -> dict[str, Callable[[], Any]]:
    """The tiny-kernel step eagerly and as a captured CUDA graph (CUDA only)."""
    x = torch.zeros(numel, device=device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up off the capture stream, as the graph API asks
        for _ in range(3):
            tiny_step(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tiny_step(x)
    return {"eager": lambda: tiny_step(x), "graph": graph.replay}
