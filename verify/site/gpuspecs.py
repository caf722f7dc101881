"""```gpu-specs fence: the published GPU specifications (snippets/_gpu/specs.json) as one comparison.

The claims that compute from it name the GPU and the value's document; the page shows one table,
a row per quantity (its Chinese name and unit) and a column per GPU, each value with a numbered
footnote naming its document, so a reader can check a number against NVIDIA's own words. A
compute capability's per-SM limits sit in the column of each GPU of that capability. The table is
data: the claims' helper (``snippets/_gpu/specs.py``) loads the same file, and the page reads it
against :class:`SpecTable` without importing any snippet code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec

from verify.site.fences import safe_fence
from verify.site.templating import render
from verify.storage import edge

#: where the table is, under the checkout's snippets folder
SPEC_FILE = Path("_gpu") / "specs.json"
FORMAT = 1
MAX_BYTES = 256 * 1024
_Name = Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
_Text = Annotated[str, msgspec.Meta(max_length=400)]


class Value(msgspec.Struct, forbid_unknown_fields=True):
    """One published value: a finite number in ``unit``, and the document that prints it."""

    value: Annotated[float, msgspec.Meta(ge=0, le=1e18)]
    unit: Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
    source: _Text

    def __post_init__(self) -> None:
        if not math.isfinite(self.value):
            raise ValueError("value: not a finite number")


_Fields = Annotated[dict[_Name, Value], msgspec.Meta(max_length=64)]


class SpecTable(msgspec.Struct, forbid_unknown_fields=True):
    """``specs.json``: products (their counts and rates) and compute capabilities (per-SM limits)."""

    format: Annotated[int, msgspec.Meta(ge=1)]
    gpus: Annotated[dict[_Name, _Fields], msgspec.Meta(max_length=64)]
    capabilities: Annotated[dict[_Name, _Fields], msgspec.Meta(max_length=64)]

    def __post_init__(self) -> None:
        if self.format > FORMAT:
            raise ValueError(f"format: {self.format} is newer than this reader knows ({FORMAT}); update the checkout")

    def rows(self) -> list[dict[str, Any]]:
        """Every value with its unit and source, products first (``snippets._gpu.specs.table``'s order)."""
        return [{"gpu": name, "field": key, "value": v.value, "unit": v.unit, "source": v.source}
                for group in (self.gpus, self.capabilities) for name, fields in group.items()
                for key, v in fields.items()]


def read_table(snippets_dir: Path) -> SpecTable:
    """The checkout's spec table, as data; :class:`verify.storage.edge.FileRefused` naming the field."""
    path = Path(snippets_dir) / SPEC_FILE
    return edge.read(path, SpecTable, f"snippets/{SPEC_FILE.as_posix()}", MAX_BYTES)


@dataclass(frozen=True)
class Row:
    """One quantity of the table: the data's field, its Chinese name, the unit shown and how to get there.

    ``reads`` is the unit the data must carry (the part before any parenthesis); a value in another
    unit stops the page rather than being shown scaled wrong.
    """

    field: str
    name: str
    unit: str
    reads: str
    scale: float = 1.0


_TFLOPS, _KIB = ("TFLOP/s", "FLOP/s", 1e12), ("KiB", "bytes", 2.0**10)
#: the table's sections and rows, in the order shown
SECTIONS: tuple[tuple[str, tuple[Row, ...]], ...] = (
    ("算力（Tensor Core 为稠密数字）", (
        Row("bf16_dense_flops", "BF16 稠密算力", *_TFLOPS), Row("fp16_dense_flops", "FP16 稠密算力", *_TFLOPS),
        Row("fp8_dense_flops", "FP8 稠密算力", *_TFLOPS), Row("tf32_dense_flops", "TF32 稠密算力", *_TFLOPS),
        Row("int8_dense_ops", "INT8 稠密算力", "TOP/s", "OP/s", 1e12),
        Row("fp32_flops", "FP32 算力（CUDA core）", *_TFLOPS))),
    ("显存、L2 与互联", (
        Row("hbm_bytes", "显存", "GB", "bytes", 1e9), Row("hbm_bytes_per_s", "显存带宽", "TB/s", "bytes/s", 1e12),
        Row("l2_bytes", "L2 缓存", "MiB", "bytes", 2.0**20),
        Row("nvlink_bytes_per_s", "NVLink 带宽（全部链路，双向合计）", "GB/s", "bytes/s", 1e9),
        Row("pcie_bytes_per_s", "PCIe 带宽（双向合计）", "GB/s", "bytes/s", 1e9))),
    ("SM 与线程（每 SM、每 block 的上限由计算能力决定）", (
        Row("capability", "计算能力", "", "compute capability"), Row("sms", "SM 数", "", "SMs"),
        Row("warp_size", "warp 大小", "线程", "threads"),
        Row("max_threads_per_sm", "每 SM 最多线程", "", "threads"), Row("max_warps_per_sm", "每 SM 最多 warp", "", "warps"),
        Row("max_blocks_per_sm", "每 SM 最多 block", "", "blocks"),
        Row("max_threads_per_block", "每 block 最多线程", "", "threads"),
        Row("registers_per_sm", "每 SM 寄存器（32 位）", "个", "32-bit registers"),
        Row("max_registers_per_thread", "每线程最多寄存器", "个", "registers"),
        Row("register_alloc_unit", "寄存器分配粒度（每 warp）", "个", "registers, allocated per warp"))),
    ("共享内存（由计算能力决定）", (
        Row("l1_shared_per_sm", "每 SM 的 L1 与共享内存合计", *_KIB), Row("shared_per_sm", "每 SM 共享内存上限", *_KIB),
        Row("max_shared_per_block", "每 block 共享内存上限", *_KIB),
        Row("reserved_shared_per_block", "每 block 系统保留的共享内存", *_KIB),
        Row("shared_alloc_unit", "共享内存分配粒度", "字节", "bytes"),
        Row("shared_banks", "共享内存 bank 数（每个 4 字节宽）", "", "banks of 4 bytes"))),
)
ROWS = {row.field: row for _, rows in SECTIONS for row in rows}
MISSING = "—"


def number(value: float, row: Row) -> str:
    """``value`` in the row's unit, in plain digits (never e-notation): whole numbers as integers,
    others with at most four decimals; a compute capability as major.minor."""
    if row.reads == "compute capability":
        return f"{value:.1f}"
    x = value / row.scale
    if abs(x - round(x)) < 1e-9 * max(1.0, abs(x)):
        return str(round(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")


def _cell(field: str, v: Value) -> tuple[str, str]:
    """A value as the table shows it, and the note under it (PCIe's generation, from the unit's words)."""
    row = ROWS.get(field)
    if row is None:
        raise ValueError(f"{field}: the table has no Chinese name for it (add a Row to gpuspecs.SECTIONS)")
    if v.unit.split(" (")[0] != row.reads:
        raise ValueError(f"{field}: unit {v.unit!r}, the table shows it as {row.reads!r}")
    generation = re.search(r"\bPCIe Gen\d+\b", v.unit)
    return number(v.value, row), generation.group() if generation else ""


_REMARKS = (  # the English remarks after a source's "; ", as the page says them
    (re.compile(r"([\d,.]+) (TFLOPS|TOPS) printed with sparsity"), r"手册上的 \1 \2 是 2:4 稀疏下的数字"),
    (re.compile(r"H200 is the same GH100 configuration with HBM3e"), "H200 是同样配置的 GH100，显存换成 HBM3e"),
)


def source_text(source: str) -> str:
    """A source as its footnote reads: the document's name, then any remark, in Chinese where known."""
    document, *remarks = source.split("; ")
    said = []
    for remark in remarks:
        for pattern, words in _REMARKS:
            if pattern.fullmatch(remark):
                remark = pattern.sub(words, remark)
                break
        said.append(remark)
    return "；".join([document, *said])


def columns(table: SpecTable) -> dict[str, dict[str, Value]]:
    """Each GPU's values with its compute capability's limits; a capability no GPU has gets its own column."""
    out: dict[str, dict[str, Value]] = {}
    used: set[str] = set()
    for name, fields in table.gpus.items():
        cap = f"{fields['capability'].value:.1f}" if "capability" in fields else ""
        limits = table.capabilities.get(cap, {})
        if clash := set(fields) & set(limits):
            raise ValueError(f"{name}: {', '.join(sorted(clash))} given for the GPU and for compute capability {cap}")
        used.add(cap)
        out[name] = {**fields, **limits}
    for cap, limits in table.capabilities.items():
        if cap not in used:
            out[f"计算能力 {cap}"] = dict(limits)
    return out


def comparison(table: SpecTable) -> dict[str, Any]:
    """The template's context: column heads, sections of rows with formatted cells, numbered sources.

    A row whose values all come from one document carries its footnote on its name; otherwise each
    value carries its own. Footnotes are numbered in the order they are first met, top to bottom.
    """
    cols = columns(table)
    for fields in cols.values():
        for field, v in fields.items():
            _cell(field, v)  # a field without a row, or in another unit, stops here
    numbers: dict[str, int] = {}

    def ref(source: str) -> int:
        return numbers.setdefault(source, len(numbers) + 1)

    sections: list[dict[str, Any]] = []
    missing = False
    for title, rows in SECTIONS:
        shown: list[dict[str, Any]] = []
        for row in rows:
            values = [fields.get(row.field) for fields in cols.values()]
            given = [v for v in values if v is not None]
            if not given:
                continue
            shared = len({v.source for v in given}) == 1
            head_ref = ref(given[0].source) if shared else None
            cells = [(MISSING, "", None) if v is None else (*_cell(row.field, v), None if shared else ref(v.source))
                     for v in values]
            missing = missing or len(given) < len(values)
            shown.append({"name": row.name, "unit": row.unit, "ref": head_ref, "cells": cells})
        if shown:
            sections.append({"title": title, "rows": shown})
    return {"heads": list(cols), "sections": sections,
            "sources": [(n, source_text(source)) for source, n in numbers.items()],
            "has_missing": missing}


@safe_fence
def gpu_specs_fence(source: str, language: str, css_class: str, options: dict[str, Any], md: Any, **kwargs: Any) -> str:
    from verify import settings as settings_mod  # noqa: PLC0415

    return render("gpu_specs.html", missing=MISSING, **comparison(read_table(settings_mod.for_site().snippets_dir)))
