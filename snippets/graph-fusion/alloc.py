"""Allocation on the CPU: how often fresh outputs page-fault, eager against compiled.

Kept apart from the timed claims: counting page faults is not a timing, so it runs with the
ordinary claims.
"""

from __future__ import annotations

import resource

import torch

from snippets._workloads.fusion import SIZES, cheap_chain, cheap_chain_out, compiled
from verify.claim import claim


def _faults_per_call(fn, calls: int = 4) -> float:
    """Minor page faults of this process per call of ``fn`` (after one call to settle)."""
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def _thp() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
            return fh.read().strip()
    except OSError:
        return "unknown"


@claim(
    "alloc.page-faults", kind="measured",
    question="graph-fusion",
    statement="用缺页次数看分配：16M 元素时，eager 三步链每次调用缺页 {eager_fresh_faults_16M:int} 次，合 {eager_fresh_pages_touched_16M:.3g} 个输出的全部页数（页大小 {page_bytes} 字节）；编译版只有一个新输出，缺页 {compiled_fresh_faults_16M:int} 次，eager 是它的 {eager_over_compiled_faults_16M:x}；写进预分配缓冲区时缺页 {eager_preallocated_faults_16M:int} 次。",
    expect={"eager_fresh_faults_16M": {">=": 16}, "eager_over_compiled_faults_16M": {"approx": [3, 0.1]},
            "preallocated_over_fresh_faults_16M": {"<": 0.01}},
)
def _(ctx):
    page = resource.getpagesize()
    out: dict = {"page_bytes": page, "transparent_hugepages": _thp()}
    for label, n in (("64K", 1 << 16), ("1M", SIZES["1M"]), ("16M", SIZES["16M"])):
        x, tmp, buf = torch.randn(n), torch.empty(n), torch.empty(n)
        pages = n * 4 / page  # pages of one float32 output
        fresh = _faults_per_call(lambda: cheap_chain(x))
        out[f"eager_fresh_faults_{label}"] = fresh
        # in tensors' worth of pages: 3.0 means every page of all three outputs faulted
        out[f"eager_fresh_pages_touched_{label}"] = round(fresh / pages, 3)
        out[f"eager_preallocated_faults_{label}"] = _faults_per_call(lambda: cheap_chain_out(x, tmp, buf))
        if label == "16M":
            fused, _ = compiled(cheap_chain, x, dynamic=True)
            comp = _faults_per_call(lambda: fused(x))
            out["compiled_fresh_faults_16M"] = comp
            out["compiled_fresh_pages_touched_16M"] = round(comp / pages, 3)
            out["eager_over_compiled_faults_16M"] = round(fresh / comp, 3) if comp else None
            out["preallocated_over_fresh_faults_16M"] = round(out["eager_preallocated_faults_16M"] / fresh, 5)
    return out
