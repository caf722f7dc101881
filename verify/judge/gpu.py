"""A kernel problem's GPU section: what a GPU would see of the candidate's kernel, beside the reference solution's.

Nothing here runs on a GPU. Each section says where its numbers come from: compiled for a named
architecture (registers, shared memory, spills, load width, tensor-core instructions, read from the
compiler's output), or simulated (sectors per request, bank-conflict degree, masked lanes, out-of-bounds
accesses, from an address trace). Time is never among them: the report marks it 未测.

The candidate's code runs only in the judge's child (:mod:`verify.judge.sandbox`); the language modules
(:mod:`verify.judge.gpu_triton`, :mod:`verify.judge.gpu_numba`) gather their numbers there.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Row:
    name: str  # what is counted, in Chinese
    candidate: str
    reference: str


@dataclass
class Section:
    source: str  # how the numbers were obtained: 「编译：Triton 3.9.0，sm_90a（没有在 GPU 上运行）」
    rows: list[Row] = field(default_factory=list)
    note: str = ""  # what the numbers mean, or why a row is missing


def lines(found: list[Section]) -> list[str]:
    """The sections as report lines; timing is always 未测."""
    out: list[str] = []
    for section in found:
        out.append(f"GPU · {section.source}")
        out += [f"  {row.name}：你的 {row.candidate}；参考解 {row.reference}" for row in section.rows]
        if section.note:
            out.append(f"  {section.note}")
    if found:
        out.append("  计时：未测（这里没有在 GPU 上运行任何核函数）")
    return out
