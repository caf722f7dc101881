"""The register file against the whole L1 / shared-memory SRAM of an SM, on two compute capabilities (spec table)."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "gpu-memory-hierarchy"


@claim(
    "spec.regfile-vs-l1",
    question=Q,
    statement="和整块 L1 / shared memory 的 SRAM 比：计算能力 9.0（H100、H200）每 SM 的寄存器文件 {h100_registers:bytes}、"
              "L1 加 shared memory 共 {h100_l1_shared:bytes}，{h100_tie:?一样大|不一样大}；8.0（A100）上寄存器文件 "
              "{a100_registers:bytes}、L1 加 shared memory {a100_l1_shared:bytes}，寄存器文件{a100_larger:?更大|不更大}。",
    expect={"h100_registers": 262144, "h100_l1_shared": 262144, "h100_tie": True,
            "a100_registers": 262144, "a100_l1_shared": 196608, "a100_larger": True},
)
def _(ctx):
    out = {}
    for key, cap in (("h100", "9.0"), ("a100", "8.0")):
        regs = int(specs.get(ctx, cap, "registers_per_sm")) * 4  # 32-bit registers
        sram = int(specs.get(ctx, cap, "l1_shared_per_sm"))
        out.update({f"{key}_registers": regs, f"{key}_l1_shared": sram})
    out["h100_tie"] = out["h100_registers"] == out["h100_l1_shared"]
    out["a100_larger"] = out["a100_registers"] > out["a100_l1_shared"]
    return out
