"""```gpu-specs fence: the one table of published GPU specifications (snippets/_gpu/specs.json), with sources.

The claims that compute from it name the GPU and the value's document; this table shows every
value once, so a reader can check a number against NVIDIA's own words. The table is data: the
claims' helper (``snippets/_gpu/specs.py``) loads the same file, and the page reads it against
:class:`SpecTable` without importing any snippet code.
"""

from __future__ import annotations

import math
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

_WORDS = {
    "capability": "计算能力", "sms": "SM 数", "l2_bytes": "L2 容量", "hbm_bytes": "显存容量", "hbm_bytes_per_s": "显存带宽",
    "bf16_dense_flops": "BF16 Tensor Core（稠密）", "fp16_dense_flops": "FP16 Tensor Core（稠密）",
    "fp8_dense_flops": "FP8 Tensor Core（稠密）", "tf32_dense_flops": "TF32 Tensor Core（稠密）",
    "fp32_flops": "FP32（CUDA core）", "max_threads_per_sm": "每 SM 最多线程", "max_warps_per_sm": "每 SM 最多 warp",
    "max_blocks_per_sm": "每 SM 最多 block", "max_threads_per_block": "每 block 最多线程",
    "registers_per_sm": "每 SM 寄存器（32 位）", "max_registers_per_thread": "每线程最多寄存器",
    "shared_per_sm": "每 SM 共享内存上限", "l1_shared_per_sm": "每 SM 的 L1 与共享内存合计", "max_shared_per_block": "每 block 共享内存上限",
    "reserved_shared_per_block": "每 block 系统保留的共享内存", "warp_size": "warp 大小",
    "register_alloc_unit": "寄存器分配粒度（每 warp）", "shared_alloc_unit": "共享内存分配粒度", "shared_banks": "共享内存 bank",
}


def fmt(value: float, unit: str) -> str:
    """A published value as NVIDIA prints it: TB/s, TFLOPS, KiB or MiB, plain counts."""
    if unit.startswith("FLOP/s"):
        return f"{value / 1e12:g} TFLOPS"
    if unit == "bytes/s":
        return f"{value / 1e12:g} TB/s"
    if unit == "bytes":
        if value >= 1e9 and value % 2**20:
            return f"{value / 1e9:g} GB"
        for size, name in ((2**20, "MiB"), (2**10, "KiB")):
            if value >= size and value % size == 0:
                return f"{value / size:g} {name}"
        return f"{value:g} 字节"
    if unit == "compute capability":
        return f"{value:.1f}"
    return f"{value:g}{_UNITS.get(unit, ' ' + unit)}"


_UNITS = {"threads": "", "warps": "", "blocks": "", "SMs": "", "32-bit registers": "", "registers": "",
          "registers, allocated per warp": " 个寄存器", "banks of 4 bytes": " 个，每个 4 字节宽"}


@safe_fence
def gpu_specs_fence(source: str, language: str, css_class: str, options: dict[str, Any], md: Any, **kwargs: Any) -> str:
    from verify import settings as settings_mod  # noqa: PLC0415

    table = read_table(settings_mod.for_site().snippets_dir)
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for row in table.rows():
        name = row["gpu"] if row["gpu"] in table.gpus else f"计算能力 {row['gpu']}（每 SM 的上限）"
        groups.setdefault(name, []).append((_WORDS.get(row["field"], row["field"]), fmt(row["value"], row["unit"]),
                                            row["source"]))
    return render("gpu_specs.html", groups=groups)
