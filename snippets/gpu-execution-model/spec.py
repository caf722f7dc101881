"""Occupancy arithmetic and Little's law on published numbers (no kernel, no GPU: 按规格计算)."""

from __future__ import annotations

import math

from snippets._gpu import occupancy, specs
from verify.claim import claim

Q = "gpu-execution-model"
LATENCY_S = 600e-9  # an assumed loaded DRAM latency, an input: no datasheet states one
LOAD_BYTES = 16  # one float4 / LDG.E.128 per thread


@claim(
    "exec.register-granularity",
    question=Q,
    statement="compute capability 9.0（H100 / H200）上，{=256} 线程的 block 每线程用 {a.registers} 个寄存器时每 SM 放 "
              "{a.blocks} 个 block、occupancy {a.occupancy:pct}；多用一个（{b.registers} 个）就按 {b.allocated} 个分配，"
              "只放得下 {b.blocks} 个、occupancy {b.occupancy:pct}（不计分配粒度会算成 {b.naive_blocks} 个）。",
    expect={"a": {"registers": 32, "allocated": 32, "blocks": 8, "occupancy": 1.0, "naive_blocks": 8},
            "b": {"registers": 33, "allocated": 40, "blocks": 6, "occupancy": 0.75, "naive_blocks": 7}},
)
def _(ctx):
    unit = int(specs.get(ctx, "9.0", "register_alloc_unit"))
    warp = int(specs.get(ctx, "9.0", "warp_size"))
    regs_per_sm = int(specs.get(ctx, "9.0", "registers_per_sm"))
    out = {}
    for key, r in (("a", 32), ("b", 33)):
        occ = occupancy.blocks_per_sm(ctx, "9.0", 256, r, 0)
        out[key] = {"registers": r, "allocated": -(-r * warp // unit) * unit // warp, "blocks": occ["blocks"],
                    "occupancy": occ["occupancy"], "naive_blocks": regs_per_sm // (r * 256)}
    return out


def _littles_law(ctx, gpu):
    bw = specs.get(ctx, gpu, "hbm_bytes_per_s")
    sms = int(specs.get(ctx, gpu, "sms"))
    max_warps = int(specs.get(ctx, specs.capability_of(gpu), "max_warps_per_sm"))
    warp = int(specs.get(ctx, specs.capability_of(gpu), "warp_size"))
    per_sm = bw * LATENCY_S / sms  # bytes that must be in flight on each SM to keep HBM busy
    per_warp = warp * LOAD_BYTES  # one outstanding 16-byte load per thread
    need = {f"ilp{k}": math.ceil(per_sm / (per_warp * k)) for k in (1, 2, 4)}
    return {"tb_per_s": bw / 1e12, "sms": sms, "in_flight_per_sm": per_sm, "bytes_per_warp_load": per_warp,
            "warps": need, "occupancy_ilp1": need["ilp1"] / max_warps, "max_warps": max_warps}


@claim(
    "exec.littles-law-h100",
    question=Q,
    statement="H100 SXM 的 HBM 带宽 {tb_per_s} TB/s，假设访存延迟 {=600 ns}，要让带宽跑满，"
              "{sms} 个 SM 每个要有 {in_flight_per_sm:bytes} 的读请求在路上；一个 warp 每线程一个 {=16 字节} 的 load "
              "是 {bytes_per_warp_load:bytes}，所以每 SM 要 {warps.ilp1} 个 warp 同时在等（占 {max_warps} 个 warp 槽的 "
              "{occupancy_ilp1:pct}）；每线程同时发 {=2} 个或 {=4} 个独立的 load 时只要 {warps.ilp2} 个或 {warps.ilp4} 个 warp。",
    expect={"warps": {"ilp1": 30, "ilp2": 15, "ilp4": 8}, "sms": 132},
)
def _(ctx):
    return _littles_law(ctx, "H100 SXM")


@claim(
    "exec.littles-law-h200",
    question=Q,
    statement="H200 SXM 的 SM 数同样是 {sms}、带宽升到 {tb_per_s} TB/s：同样假设 {=600 ns} 的延迟，每 SM 要 "
              "{in_flight_per_sm:bytes} 在路上，每线程一个 {=16 字节} load 时要 {warps.ilp1} 个 warp（{occupancy_ilp1:pct}），"
              "每线程 {=4} 个时 {warps.ilp4} 个。",
    expect={"warps": {"ilp1": 43, "ilp2": 22, "ilp4": 11}, "sms": 132},
)
def _(ctx):
    return _littles_law(ctx, "H200 SXM")
