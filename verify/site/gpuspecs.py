"""```gpu-specs fence: the one table of published GPU specifications (snippets/_gpu/specs.py), with sources.

The claims that compute from it name the GPU and the value's document; this table shows every
value once, so a reader can check a number against NVIDIA's own words.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from verify.site.fences import safe_fence
from verify.site.templating import render

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


def _specs() -> Any:
    """The checkout's spec table (``snippets/`` is the checkout's package, not an installed one)."""
    from verify import settings as settings_mod  # noqa: PLC0415

    root = str(settings_mod.for_site().root)
    if root not in sys.path:
        sys.path.append(root)
    return importlib.import_module("snippets._gpu.specs")


@safe_fence
def gpu_specs_fence(source: str, language: str, css_class: str, options: dict[str, Any], md: Any, **kwargs: Any) -> str:
    specs = _specs()

    groups: dict[str, list[tuple[str, str, str]]] = {}
    for row in specs.table():
        name = row["gpu"] if row["gpu"] in specs.GPUS else f"计算能力 {row['gpu']}（每 SM 的上限）"
        groups.setdefault(name, []).append((_WORDS.get(row["field"], row["field"]), fmt(row["value"], row["unit"]),
                                            row["source"]))
    return render("gpu_specs.html", groups=groups)
