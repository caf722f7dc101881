"""ZeRO-1 as DeepSpeed and Megatron do it, written out by hand on two gloo processes: the parameters
flattened into one buffer padded to a multiple of the world size, each rank the owner of one
contiguous slice; gradients reduce-scattered into that slice, Adam stepping on the slice alone, the
updated slices all-gathered back. Against it, DDP with a full Adam on every rank on the same model and
data. CommLog (snippets/_workloads/dist.py) records the collectives of a step with their sizes.

Gloo itself implements reduce-scatter as a copy of the input all-reduced (ProcessGroupGloo.cpp,
``reduce_scatter_tensor_coalesced``), so the bytes gloo moves are not the point here: the sizes each
collective is called with are, and the volume a ring moves for them (what NCCL does) follows from those.
"""

import torch
import torch.distributed as dist
from torch import nn

from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "zero-stages"
STEPS = 3


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(1000, 32), nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 5))


def rank_flat_zero1(rank, store, outdir):
    init_rank(rank, store)
    from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    model, ref = _model(), _model()
    ref_ddp = DDP(ref)
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    params = list(model.parameters())
    numel = sum(p.numel() for p in params)
    padded = -(-numel // WORLD) * WORLD
    shard_len = padded // WORLD
    flat = torch.zeros(padded)
    torch.cat([p.detach().reshape(-1) for p in params], out=flat[:numel])
    mine = nn.Parameter(flat[rank * shard_len:(rank + 1) * shard_len].clone())  # this rank's fp32 slice
    opt = torch.optim.Adam([mine], lr=1e-2)
    gen = torch.Generator().manual_seed(rank)
    logs = {}
    for it in range(STEPS):
        x = torch.randint(0, 1000, (16,), generator=gen)
        model(x).sum().backward()
        grads = torch.zeros(padded)
        torch.cat([p.grad.reshape(-1) for p in params], out=grads[:numel])
        log = CommLog()
        with log:
            mine.grad = torch.empty(shard_len)
            dist.reduce_scatter_tensor(mine.grad, grads)  # the sum of this slice's gradients over the ranks
            mine.grad /= WORLD
            opt.step()
            dist.all_gather_into_tensor(flat, mine.detach())  # every rank gets every updated slice
        with torch.no_grad():
            offset = 0
            for p in params:
                p.copy_(flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()
        for p in params:
            p.grad = None
        ddp_log = CommLog()
        with ddp_log:
            ref_ddp(x).sum().backward()
        ref_opt.step()
        ref_opt.zero_grad()
        logs[it] = {"zero1": log.ops, "ddp": ddp_log.ops}
    state = sum(v.numel() * v.element_size() for s in opt.state.values() for k, v in s.items() if k != "step")
    full_state = sum(v.numel() * v.element_size() for s in ref_opt.state.values() for k, v in s.items() if k != "step")
    diff = max((p - q).abs().max().item() for p, q in zip(model.parameters(), ref.parameters()))
    finish_rank(rank, outdir, {"steady": logs[STEPS - 1], "numel": numel, "padded": padded, "state_bytes": state,
                               "full_state_bytes": full_state, "vs_ddp": diff})


def _elements(ops, name):
    return sum(max(sizes) for op, sizes in ops if op == name)


@claim("zero1.flat-rs-ag", question=Q, timeout=150,
       statement="DeepSpeed、Megatron 式的 ZeRO-1：把参数拉平、补齐到能被 rank 数整除、每个 rank 拥有连续的一段，"
                 "一步里梯度 reduce-scatter 到各自那一段（{rs} 个元素的输入），Adam 只更新这一段，再把更新后的各段 "
                 "all-gather 回来（{ag} 个元素的输出），两次调用，没有 all-reduce（{ar_calls} 次）。两个 gloo 进程手写这套流程："
                 "每个 rank 的 Adam 状态正好是 {state.0:bytes} 和 {state.1:bytes}（均分），{steps} 步之后参数与 DDP 加完整 "
                 "Adam 的训练结果最大差 {vs_ddp:.1g}。按环形算法，reduce-scatter 和 all-gather 各让每个 rank 收发 (N-1)/N "
                 "份，合计与 DDP 一次 all-reduce 的 2(N-1)/N 份相同：两者的元素数之比 {ratio:.4f}，多出的只是补齐的 {pad} 个元素。",
       expect={"rs": 38598, "ag": 38598, "ar_calls": 0, "ddp_ar": 38597, "state": {"0": 154392, "1": 154392},
               "ratio": {"between": [1.0, 1.001]}, "vs_ddp": {"<": 1e-6}, "pad": 1})
def _(ctx):
    r = run_ranks(rank_flat_zero1, ctx)
    ops = r[0]["steady"]
    rs, ag = _elements(ops["zero1"], "_reduce_scatter_base_"), _elements(ops["zero1"], "_allgather_base_")
    ddp_ar = _elements(ops["ddp"], "allreduce_")
    return {"rs": rs, "ag": ag, "ar_calls": sum(op == "allreduce_" for op, _ in ops["zero1"]), "ddp_ar": ddp_ar,
            "ops": [op for op, _ in ops["zero1"]], "state": {str(i): x["state_bytes"] for i, x in enumerate(r)},
            "full_state": r[0]["full_state_bytes"], "steps": STEPS, "vs_ddp": max(x["vs_ddp"] for x in r),
            "ratio": (rs + ag) / (2 * ddp_ar), "pad": r[0]["padded"] - r[0]["numel"]}


@claim("zero1.ring-volume", question=Q,
       statement="按环形算法数每个 rank 的收发量（以 Ψ 个参数为 1）：N = {=2}、{=4}、{=8} 时，DDP 的 all-reduce 是 "
                 "{ddp.2:.3f}、{ddp.4:.3f}、{ddp.8:.3f}；DeepSpeed/Megatron 式 ZeRO-1 的 reduce-scatter 加 all-gather 完全相同"
                 "（{zero1.2:.3f}、{zero1.4:.3f}、{zero1.8:.3f}）；PyTorch 的 `ZeroRedundancyOptimizer` 在完整 all-reduce 之外"
                 "再广播参数，每个 rank 至少还要收下别人那 (N-1)/N 份，合计 {zro.2:.3f}、{zro.4:.3f}、{zro.8:.3f}，"
                 "是 DDP 的 {zro_ratio:x}，与 N 无关。",
       expect={"zro_ratio": 1.5, "same": True})
def _(ctx):
    ns = (2, 4, 8)
    ddp = {str(n): 2 * (n - 1) / n for n in ns}
    zero1 = {str(n): (n - 1) / n + (n - 1) / n for n in ns}
    zro = {str(n): 2 * (n - 1) / n + (n - 1) / n for n in ns}
    return {"ddp": ddp, "zero1": zero1, "zro": zro, "same": ddp == zero1,
            "zro_ratio": zro["8"] / ddp["8"]}
