"""Published GPU specifications, one table, each value with the NVIDIA document it comes from.

Two kinds of rows: a compute capability's per-SM limits (the CUDA C++ Programming Guide's table
"Technical Specifications per Compute Capability"), and a product's counts and rates (its
datasheet or architecture whitepaper). Rates are dense: NVIDIA's datasheets print Tensor Core
rates with 2:4 structured sparsity, twice the dense rate, and mark them so; the dense figure is
what a plain GEMM can reach. A claim that uses a value says so (``specs.get``) and its sentence
names the GPU; the page marks it 按规格计算.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets._gpu.note import note

GUIDE = "CUDA C++ Programming Guide, Technical Specifications per Compute Capability"
OCC = "CUDA Occupancy Calculator (Nsight Compute), GPU data of the compute capability"


@dataclass(frozen=True)
class Spec:
    value: float
    unit: str
    source: str


def _s(value: float, unit: str, source: str) -> Spec:
    return Spec(value, unit, source)


#: what compute capabilities 8.0 and 9.0 share, per SM
_SM_COMMON: dict[str, Spec] = {
    "max_threads_per_sm": _s(2048, "threads", GUIDE),
    "max_warps_per_sm": _s(64, "warps", GUIDE),
    "max_blocks_per_sm": _s(32, "blocks", GUIDE),
    "max_threads_per_block": _s(1024, "threads", GUIDE),
    "registers_per_sm": _s(65536, "32-bit registers", GUIDE),
    "max_registers_per_thread": _s(255, "registers", GUIDE),
    "warp_size": _s(32, "threads", GUIDE),
    "register_alloc_unit": _s(256, "registers, allocated per warp", OCC),
    "shared_alloc_unit": _s(128, "bytes", OCC),
    "shared_banks": _s(32, "banks of 4 bytes", "CUDA C++ Programming Guide, Compute Capability 5.x+, Shared Memory"),
}


def _capability(name: str, shared_kib: int, l1_shared_kib: int) -> dict[str, Spec]:
    """One capability's per-SM limits: the common ones, and its shared memory (a block may ask for 1 KiB less)."""
    return {**_SM_COMMON,
            "shared_per_sm": _s(shared_kib * 1024, "bytes", GUIDE),
            "l1_shared_per_sm": _s(l1_shared_kib * 1024, "bytes", GUIDE + " (unified L1 / shared memory per SM)"),
            "max_shared_per_block": _s((shared_kib - 1) * 1024, "bytes", GUIDE),
            "reserved_shared_per_block": _s(1024, "bytes", f"CUDA C++ Programming Guide, Compute Capability {name}, Shared Memory")}


#: per-SM limits of a compute capability
CAPABILITY: dict[str, dict[str, Spec]] = {"8.0": _capability("8.x", 164, 192), "9.0": _capability("9.0", 228, 256)}

_CC = "NVIDIA, CUDA GPUs: compute capability of each product"
_A100_DS = "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM)"
_A100_WP = "NVIDIA A100 Tensor Core GPU Architecture whitepaper"
_H100_DS = "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM)"
_H100_WP = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (GH100 in the SXM5 product)"
_H200_DS = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM)"

#: products: their compute capability, counts and rates (dense Tensor Core rates)
GPUS: dict[str, dict[str, Spec]] = {
    "A100 SXM 80GB": {
        "capability": _s(8.0, "compute capability", _CC),
        "sms": _s(108, "SMs", _A100_WP),
        "l2_bytes": _s(40 * 2**20, "bytes", _A100_WP),
        "hbm_bytes": _s(80e9, "bytes", _A100_DS),
        "hbm_bytes_per_s": _s(2039e9, "bytes/s", _A100_DS),
        "bf16_dense_flops": _s(312e12, "FLOP/s", _A100_DS),
        "fp16_dense_flops": _s(312e12, "FLOP/s", _A100_DS),
        "tf32_dense_flops": _s(156e12, "FLOP/s", _A100_DS),
        "fp32_flops": _s(19.5e12, "FLOP/s (CUDA cores)", _A100_DS),
        "int8_dense_ops": _s(624e12, "OP/s", _A100_DS + "; 1,248 TOPS printed with sparsity"),
        "nvlink_bytes_per_s": _s(600e9, "bytes/s (all links, both directions)", _A100_DS),
        "pcie_bytes_per_s": _s(64e9, "bytes/s (PCIe Gen4, both directions)", _A100_DS),
    },
    "H100 SXM": {
        "capability": _s(9.0, "compute capability", _CC),
        "sms": _s(132, "SMs", _H100_WP),
        "l2_bytes": _s(50 * 2**20, "bytes", _H100_WP),
        "hbm_bytes": _s(80e9, "bytes", _H100_DS),
        "hbm_bytes_per_s": _s(3.35e12, "bytes/s", _H100_DS),
        "bf16_dense_flops": _s(989.5e12, "FLOP/s", _H100_DS + "; 1,979 TFLOPS printed with sparsity"),
        "fp16_dense_flops": _s(989.5e12, "FLOP/s", _H100_DS + "; 1,979 TFLOPS printed with sparsity"),
        "fp8_dense_flops": _s(1979e12, "FLOP/s", _H100_DS + "; 3,958 TFLOPS printed with sparsity"),
        "tf32_dense_flops": _s(494.5e12, "FLOP/s", _H100_DS + "; 989 TFLOPS printed with sparsity"),
        "fp32_flops": _s(67e12, "FLOP/s (CUDA cores)", _H100_DS),
        "int8_dense_ops": _s(1979e12, "OP/s", _H100_DS + "; 3,958 TOPS printed with sparsity"),
        "nvlink_bytes_per_s": _s(900e9, "bytes/s (all links, both directions)", _H100_DS),
        "pcie_bytes_per_s": _s(128e9, "bytes/s (PCIe Gen5, both directions)", _H100_DS),
    },
    "H200 SXM": {
        "capability": _s(9.0, "compute capability", _CC),
        "sms": _s(132, "SMs", _H100_WP + "; H200 is the same GH100 configuration with HBM3e"),
        "l2_bytes": _s(50 * 2**20, "bytes", _H100_WP + "; H200 is the same GH100 configuration with HBM3e"),
        "hbm_bytes": _s(141e9, "bytes", _H200_DS),
        "hbm_bytes_per_s": _s(4.8e12, "bytes/s", _H200_DS),
        "bf16_dense_flops": _s(989.5e12, "FLOP/s", _H200_DS + "; 1,979 TFLOPS printed with sparsity"),
        "fp16_dense_flops": _s(989.5e12, "FLOP/s", _H200_DS + "; 1,979 TFLOPS printed with sparsity"),
        "fp8_dense_flops": _s(1979e12, "FLOP/s", _H200_DS + "; 3,958 TFLOPS printed with sparsity"),
        "tf32_dense_flops": _s(494.5e12, "FLOP/s", _H200_DS + "; 989 TFLOPS printed with sparsity"),
        "fp32_flops": _s(67e12, "FLOP/s (CUDA cores)", _H200_DS),
        "int8_dense_ops": _s(1979e12, "OP/s", _H200_DS + "; 3,958 TOPS printed with sparsity"),
        "nvlink_bytes_per_s": _s(900e9, "bytes/s (all links, both directions)", _H200_DS),
        "pcie_bytes_per_s": _s(128e9, "bytes/s (PCIe Gen5, both directions)", _H200_DS),
    },
}


def row(name: str) -> dict[str, Spec]:
    if name in GPUS:
        return GPUS[name]
    if name in CAPABILITY:
        return CAPABILITY[name]
    raise KeyError(f"no GPU or compute capability {name!r} in the spec table (known: {', '.join([*GPUS, *CAPABILITY])})")


def get(ctx: Any, name: str, field: str) -> float:
    """One published value; the claim's record names the GPU (or capability) and the document."""
    try:
        spec = row(name)[field]
    except KeyError:
        raise KeyError(f"spec table: {name!r} has no {field!r} (it has {', '.join(row(name))})") from None
    note(ctx, "spec", gpus=(name if name in GPUS else f"compute capability {name}",))
    ctx.observed.setdefault("sources", {})[f"{name} {field}"] = spec.source
    return spec.value


def capability_of(name: str) -> str:
    """A product's compute capability as the per-SM table's key (``9.0``)."""
    return f"{GPUS[name]['capability'].value:.1f}"


def table() -> list[dict[str, Any]]:
    """Every value with its unit and source, for the page that shows the table."""
    out = []
    for group in (GPUS, CAPABILITY):
        for name, fields in group.items():
            for key, spec in fields.items():
                out.append({"gpu": name, "field": key, "value": spec.value, "unit": spec.unit, "source": spec.source})
    return out
