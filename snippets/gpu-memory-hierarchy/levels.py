"""The sizes and bandwidths of the memory levels, from the published spec table (arithmetic only)."""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "gpu-memory-hierarchy"
REGISTER_BYTES = 4  # a register is 32 bits


def _per_sm(ctx, capability):
    regs = specs.get(ctx, capability, "registers_per_sm") * REGISTER_BYTES
    shared = specs.get(ctx, capability, "shared_per_sm")
    return int(regs), int(shared)


@claim(
    "spec.regfile-vs-smem",
    question=Q,
    statement="每个 SM 上，寄存器文件是 {=65536} 个 32 位寄存器，即 {h100_registers:bytes}；可配置给 shared memory 的上限在"
              "计算能力 9.0（H100、H200）上是 {h100_shared:bytes}，8.0（A100）上是 {a100_shared:bytes}。寄存器文件分别是它的 "
              "{h100_ratio:x} 和 {a100_ratio:x}：SM 上最大的一块可编程存储是寄存器，不是 shared memory。",
    expect={"h100_registers": 262144, "a100_registers": 262144, "h100_shared": 233472, "a100_shared": 167936,
            "h100_ratio": {">": 1.0}, "a100_ratio": {">": 1.0}},
)
def _(ctx):
    out = {}
    for key, cap in (("h100", "9.0"), ("a100", "8.0")):
        regs, shared = _per_sm(ctx, cap)
        out.update({f"{key}_registers": regs, f"{key}_shared": shared, f"{key}_ratio": regs / shared,
                    f"{key}_margin": regs - shared})
    return out


@claim(
    "spec.chip-capacity",
    question=Q,
    statement="整颗芯片加起来：H100 SXM 有 {h100.sms} 个 SM，寄存器文件共 {h100.registers:bytes}，shared memory 最多共 "
              "{h100.shared:bytes}，L2 是 {h100.l2:bytes}；A100 有 {a100.sms} 个 SM，寄存器文件共 {a100.registers:bytes}、"
              "shared 最多 {a100.shared:bytes}、L2 {a100.l2:bytes}。全芯片的寄存器文件是 L2 的 {h100.regs_over_l2:pct}（H100）"
              "和 {a100.regs_over_l2:pct}（A100）。再往下是 HBM：H200 的 {h200_hbm_gb:.0f} GB 是它 L2 的 {h200_hbm_over_l2:,.0f} 倍。",
    expect={"h100_regs_below_l2": True, "a100_regs_below_l2": True, "h200_hbm_over_l2": {">": 1000}},
)
def _(ctx):
    out = {}
    for key, gpu in (("h100", "H100 SXM"), ("a100", "A100 SXM 80GB")):
        regs, shared = _per_sm(ctx, specs.capability_of(gpu))
        sms = int(specs.get(ctx, gpu, "sms"))
        l2 = int(specs.get(ctx, gpu, "l2_bytes"))
        out[key] = {"sms": sms, "registers": sms * regs, "shared": sms * shared, "l2": l2,
                    "regs_over_l2": sms * regs / l2}
        out[f"{key}_regs_below_l2"] = sms * regs < l2
    hbm = specs.get(ctx, "H200 SXM", "hbm_bytes")
    out["h200_hbm_gb"] = hbm / 1e9
    out["h200_hbm_over_l2"] = hbm / specs.get(ctx, "H200 SXM", "l2_bytes")
    return out


@claim(
    "spec.hbm-ridge",
    question=Q,
    statement="HBM 带宽：A100 SXM（{=80GB}）{a100.tb_s:.2f} TB/s，H100 SXM {h100.tb_s:.2f} TB/s，H200 SXM {h200.tb_s:.1f} TB/s。"
              "拿稠密 BF16 Tensor Core 算力除以它，每从 HBM 读一个字节要做 {a100.ridge:.0f}（A100）、{h100.ridge:.0f}（H100）、"
              "{h200.ridge:.0f}（H200）次 FLOP 才不被带宽卡住；只用 FP32 CUDA core 时 H100 也要 {h100_fp32_ridge:.0f} 次。",
    expect={"h100_ridge_over_100": True, "h100_over_a100_ridge": {">": 1.5}, "h200_below_h100_ridge": True},
)
def _(ctx):
    out = {}
    for key, gpu in (("a100", "A100 SXM 80GB"), ("h100", "H100 SXM"), ("h200", "H200 SXM")):
        bw = specs.get(ctx, gpu, "hbm_bytes_per_s")
        out[key] = {"tb_s": bw / 1e12, "ridge": specs.get(ctx, gpu, "bf16_dense_flops") / bw}
    out["h100_fp32_ridge"] = specs.get(ctx, "H100 SXM", "fp32_flops") / specs.get(ctx, "H100 SXM", "hbm_bytes_per_s")
    out["h100_ridge_over_100"] = out["h100"]["ridge"] > 100
    out["h200_below_h100_ridge"] = out["h200"]["ridge"] < out["h100"]["ridge"]
    out["h100_over_a100_ridge"] = out["h100"]["ridge"] / out["a100"]["ridge"]
    return out
