"""Why buckets of about 25 MiB, and why a smaller first one: the alpha-beta cost of a ring all-reduce
on published NVLink bandwidth (a latency per step given as an input), and the first bucket's cap as
torch's DistributedDataParallel sets it, read from the installed source and seen on two gloo processes."""

import math

import torch
import torch.distributed as dist
from torch import nn

from snippets._gpu import specs
from snippets._workloads.dist import finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "ddp-bucketing"
MiB = 1024 * 1024
RANKS = 8  # one HGX node
ALPHA = 3.4e-6  # seconds per ring step: an input, of the order NCCL's cost model gives NVLink (Ring, Simple)
GRAD_BYTES = 4e9  # 10^9 fp32 gradients


def _ring(n_bytes, p, alpha, beta):
    """Seconds of a ring all-reduce of n bytes on p ranks: 2(p-1) steps, each moving n/p bytes per rank."""
    return {"latency": 2 * (p - 1) * alpha, "bandwidth": 2 * (p - 1) / p * n_bytes / beta}


@claim("ddp.alpha-beta", question=Q,
       statement="用 α–β 模型算环形 all-reduce：T = 2(p−1)·α + 2(p−1)/p·n/β。取 H100 SXM 的 NVLink（规格 "
                 "{nvlink_gbs:.0f} GB/s 是所有链路两个方向之和，每个方向 β = {beta_gbs:.0f} GB/s），p = {=8}，"
                 "每一步的延迟 α 取 {=3.4 µs}（一个输入，量级同 NCCL 代价模型里 NVLink 上的 Ring/Simple）：两项相等的消息大小是 "
                 "p·α·β = {n_half:bytes}。一个 {=1 MiB} 的桶要 {t.1:time}，带宽只用上 {eff.1:pct}；{=25 MiB} 的桶 "
                 "{t.25:time}，用上 {eff.25:pct}。把 {=10⁹} 个 fp32 梯度按 {=1 MiB} 分桶，光延迟就是 {alpha_total.1:time}，"
                 "是传输本身（{beta_total:time}）的 {alpha_vs_beta_1:.0f} 倍；按 {=25 MiB} 分，延迟降到 "
                 "{alpha_total.25:time}。桶也不能太大：反向结束后才能发起的最后一个桶的通信露在外面，{=25 MiB} 时就是上面那一个桶的"
                 "时间，全部梯度一个桶则是整整 {t_one:time}。",
       expect={"eff_25_above_half": True, "eff_1_below_tenth": True})
def _(ctx):
    nvlink = specs.get(ctx, "H100 SXM", "nvlink_bytes_per_s")
    beta = nvlink / 2
    out_t, eff, alpha_total = {}, {}, {}
    for mib in (1, 25):
        parts = _ring(mib * MiB, RANKS, ALPHA, beta)
        out_t[str(mib)] = parts["latency"] + parts["bandwidth"]
        eff[str(mib)] = parts["bandwidth"] / (parts["latency"] + parts["bandwidth"])
        alpha_total[str(mib)] = math.ceil(GRAD_BYTES / (mib * MiB)) * parts["latency"]
    whole = _ring(GRAD_BYTES, RANKS, ALPHA, beta)
    return {"nvlink_gbs": nvlink / 1e9, "beta_gbs": beta / 1e9, "n_half": RANKS * ALPHA * beta, "t": out_t, "eff": eff,
            "alpha_total": alpha_total, "beta_total": whole["bandwidth"],
            "t_one": whole["latency"] + whole["bandwidth"],
            "alpha_vs_beta_1": alpha_total["1"] / whole["bandwidth"],
            "eff_25_above_half": eff["25"] > 0.5, "eff_1_below_tenth": eff["1"] < 0.1}


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def rank_caps(rank, store, outdir):
    init_rank(rank, store)
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: PLC0415
    from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    gen = torch.Generator().manual_seed(100 + rank)
    out = {}
    for name, kwargs in (("default", {}), ("explicit_25", {"bucket_cap_mb": 25})):
        model = _mlp()
        ddp = DDP(model, **kwargs)
        calls = []

        def hook(state, bucket, calls=calls, model=model):
            calls.append(sum(p.grad is None for p in model.parameters()))  # gradients not computed yet
            return default_hooks.allreduce_hook(None, bucket)

        ddp.register_comm_hook(None, hook)
        for _ in range(3):  # the buckets are rebuilt after the first iteration
            calls.clear()
            ddp.zero_grad(set_to_none=True)
            ddp(torch.randn(8, 256, generator=gen)).sum().backward()
        out[name] = {"buckets": len(calls), "pending_at_first": calls[0],
                     "first_cap": ddp._bucket_config.first_bucket_bytes_cap, "cap": ddp.bucket_bytes_cap}
    finish_rank(rank, outdir, out)


@claim("ddp.first-bucket-cap", question=Q, timeout=150,
       statement="第一个桶的小上限只在不传 `bucket_cap_mb` 时才有（截至 torch 2.13，`_BucketCapacityConfig.create`："
                 "用默认值时第一个桶取 `dist._DEFAULT_FIRST_BUCKET_BYTES`，否则取 `bucket_cap_mb`）。同一个 MLP 在两个 gloo 进程上："
                 "不传时重建后有 {default.buckets} 个桶，第一个桶的钩子被调用时还有 {default.pending_at_first} 个梯度没算出来；"
                 "显式传 bucket_cap_mb = {=25}（数值和默认一样）时，第一个桶的上限变成 {explicit.first_cap:bytes}，"
                 "整个模型只剩 {explicit.buckets} 个桶，它被调用时未算出的梯度是 {explicit.pending_at_first} 个：与反向的重叠没有了。",
       expect={"default": {"buckets": 2, "pending_at_first": 4, "first_cap": 1048576, "cap": 26214400},
               "explicit": {"buckets": 1, "pending_at_first": 0, "first_cap": 26214400, "cap": 26214400}})
def _(ctx):
    r0 = run_ranks(rank_caps, ctx)[0]
    return {"default": r0["default"], "explicit": r0["explicit_25"], "first_default": dist._DEFAULT_FIRST_BUCKET_BYTES}
