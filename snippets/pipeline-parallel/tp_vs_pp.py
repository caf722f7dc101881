"""Tensor or pipeline parallelism across a node boundary: bytes per microbatch and what they cost.

Spec arithmetic, not a measurement. The model's shape is a given input (a dense decoder with hidden size
8192, sequence 4096, one sequence per microbatch, BF16 activations); the GPU's NVLink bandwidth and
Tensor Core rate come from ``snippets._gpu.specs``; the network between nodes is an assumption written
as an input (one 400 Gb/s NIC per GPU). Tensor parallelism: the 4 all-reduces of a layer (2 forward,
2 backward, Megatron-LM style), a ring all-reduce sending 2(t-1)/t of the tensor from each rank.
Pipeline parallelism: one activation forward and one gradient backward across a stage boundary.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "pipeline-parallel"

HIDDEN, SEQ, MICRO, BF16 = 8192, 4096, 1, 2
TP = 8
NIC = 50e9  # bytes/s per GPU between nodes: one 400 Gb/s NIC (an assumption, not in the spec table)
GPU = "H100 SXM"


def _activation_bytes():
    """One (s, b, h) activation in BF16: what an all-reduce of TP moves, and what PP sends at a boundary."""
    return SEQ * MICRO * HIDDEN * BF16


def _layer_flops():
    """Forward and backward FLOPs of one GPT layer (Megatron-LM's count without recomputation): 72bsh² + 12bs²h."""
    return 72 * MICRO * SEQ * HIDDEN**2 + 12 * MICRO * SEQ**2 * HIDDEN


@claim("pp.tp-bytes-per-layer", question=Q,
       statement="按 h={=8192}、s={=4096}、每个微批 {=1} 条序列、BF16：一份激活是 {act:bytes}。TP={=8} 时一层前向加反向有 "
                 "{=4} 次这样的 all-reduce，环形算法下每张卡要发 {tp_layer:bytes}。H100 SXM 的 NVLink 每个方向 "
                 "{nvlink_gb_s:.0f} GB/s，搬完要 {t_nvlink_ms:.2f} ms；这一层每张卡的计算（72bsh² + 12bs²h，除以 {=8}）"
                 "按 BF16 稠密峰值是 {t_compute_ms:.2f} ms。同样的字节走每卡 {=50 GB/s} 的跨节点网卡，要 {t_nic_ms:.1f} ms，"
                 "是计算的 {nic_over_compute:x}：TP 放在 NVLink 域里，出了节点就被网卡卡住。",
       expect={"act": 64 * 2**20, "tp_layer": 4 * 2 * 7 * 64 * 2**20 // 8, "nic_over_compute": {">": 2},
               "nvlink_below_compute": True})
def _(ctx):
    nvlink = specs.get(ctx, GPU, "nvlink_bytes_per_s") / 2  # the table gives both directions together
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    act = _activation_bytes()
    tp_layer = 4 * 2 * (TP - 1) / TP * act
    t_compute = _layer_flops() / TP / peak
    return {"act": act, "tp_layer": int(tp_layer), "nvlink_gb_s": nvlink / 1e9, "t_nvlink_ms": tp_layer / nvlink * 1e3,
            "t_compute_ms": t_compute * 1e3, "t_nic_ms": tp_layer / NIC * 1e3,
            "nic_over_compute": tp_layer / NIC / t_compute, "nvlink_below_compute": tp_layer / nvlink < t_compute}


@claim("pp.pp-bytes-per-boundary", question=Q,
       statement="PP 在一个 stage 边界上，每个微批只传一份激活（前向）和一份梯度（反向），共 {pp_bytes:bytes}，与这个 stage "
                 "有几层无关；走同样的 {=50 GB/s} 网卡要 {t_nic_ms:.1f} ms。同样按每张卡比：一个 stage 放 {=10} 层、由 TP={=8} 的 "
                 "{=8} 张卡分担时，TP 在这些层上每卡要发 {tp_stage:bytes}；把这 {=8} 张卡改排成流水线，中间的每张卡每个微批"
                 "只发一份激活（给下一段）和一份梯度（给上一段），也是上面这 {pp_bytes:bytes}，与它放几层无关。每卡之比是 "
                 "{ratio:.0f} 倍。",
       expect={"pp_bytes": 2 * 64 * 2**20, "ratio": {"approx": [35.0, 1e-9]}})
def _(ctx):
    act = _activation_bytes()
    pp = 2 * act
    tp_stage = 10 * 4 * 2 * (TP - 1) / TP * act
    return {"pp_bytes": pp, "t_nic_ms": pp / NIC * 1e3, "tp_stage": int(tp_stage), "ratio": tp_stage / pp}
