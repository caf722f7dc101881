"""What the CUDA runtime reports for the GPU it runs on, against the spec table (a GPU run; torch only)."""

from __future__ import annotations

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "gpu-execution-model"

# torch's device property -> (table row: the product or its compute capability, field)
FIELDS = {
    "multi_processor_count": ("gpu", "sms"),
    "regs_per_multiprocessor": ("cc", "registers_per_sm"),
    "max_threads_per_multi_processor": ("cc", "max_threads_per_sm"),
    "shared_memory_per_multiprocessor": ("cc", "shared_per_sm"),
    "L2_cache_size": ("gpu", "l2_bytes"),
    "warp_size": ("cc", "warp_size"),
}


def _product(name):
    """The spec table's row for a device name, or None (H100 PCIe / NVL and others are not in the table)."""
    if "H200" in name and "NVL" not in name:
        return "H200 SXM"
    if "H100" in name and ("SXM" in name or "HBM3" in name):
        return "H100 SXM"
    if "A100" in name and "SXM" in name and "80GB" in name:
        return "A100 SXM 80GB"
    return None


@claim(
    "exec.device-properties",
    question=Q,
    statement="在 {device}（对应规格表的 {gpu}）上，`torch.cuda.get_device_properties(0)` 报告 SM {props.multi_processor_count} 个、"
              "每 SM 寄存器 {props.regs_per_multiprocessor} 个、线程上限 {props.max_threads_per_multi_processor}、shared memory "
              "{props.shared_memory_per_multiprocessor:bytes}、L2 {props.L2_cache_size:bytes}、warp 大小 {props.warp_size}，"
              "与规格表{all_match:?逐项相同|有不一致的项}。",
    expect={"all_match": True, "gpu": {"in": ["A100 SXM 80GB", "H100 SXM", "H200 SXM"]}},
    needs=["cuda"],
)
def _(ctx):
    """torch 从运行时读出的 SM 数、每 SM 寄存器数与线程上限、shared memory、L2 和 warp 大小，与规格表逐项对照。"""
    p = torch.cuda.get_device_properties(0)
    gpu = _product(p.name)
    props, table, match = {}, {}, {}
    for attr, (where, field) in FIELDS.items():
        value = getattr(p, attr, None)
        if value is None:
            continue  # an older torch without the attribute: left out, not compared
        props[attr] = int(value)
        if gpu is not None:
            row = specs.row(gpu if where == "gpu" else specs.capability_of(gpu))
            table[attr] = int(row[field].value)
            match[attr] = props[attr] == table[attr]
    return {"device": p.name, "gpu": gpu, "capability": f"{p.major}.{p.minor}", "props": props, "table": table,
            "match": match, "all_match": bool(match) and all(match.values())}
