"""ZeRO-2 and ZeRO-3 in PyTorch: FSDP2's ``fully_shard`` on two gloo processes on the CPU, against DDP.

The same model as zero1.py. A TorchDispatchMode records every ``c10d`` collective of a training step
with its tensor sizes; forward pre-hooks record which layers hold their full parameters."""

import torch
import torch.distributed as dist
from torch import nn

from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "zero-stages"

# Run on WORLD gloo processes as in zero1.py (run_ranks and CommLog: snippets/_workloads/dist.py).


def _summary(ops):
    """Calls and elements per kind of collective (all-gather, reduce-scatter: the full, gathered size)."""
    out = {}
    for name, sizes in ops:
        entry = out.setdefault(name, {"calls": 0, "elements": 0})
        entry["calls"] += 1
        entry["elements"] += max(sizes)
    return out


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(1000, 32), nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 5))


LAYERS = (0, 1, 3, 5)  # the modules that hold parameters


def _run_fsdp(rank, mesh, variant, gen):
    from torch.distributed.fsdp import fully_shard  # noqa: PLC0415
    from torch.distributed.tensor import DTensor  # noqa: PLC0415

    model = _model()
    kwargs = {"zero3": {"reshard_after_forward": True}, "zero2": {"reshard_after_forward": False},
              "root_default": {}}[variant]
    wrapped = LAYERS if variant != "root_default" else LAYERS[:-1]  # root_default: the last layer stays in the root
    for i in wrapped:
        fully_shard(model[i], mesh=mesh, **kwargs)
    fully_shard(model, mesh=mesh, **kwargs)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def holding_full():
        return [not isinstance(model[i].weight, DTensor) for i in LAYERS]

    during = []
    for i in LAYERS:
        model[i].register_forward_pre_hook(lambda mod, args, i=i: during.append(holding_full()))
    out = {}
    for _ in range(2):
        during.clear()
        x = torch.randint(0, 1000, (16,), generator=gen)
        fwd, bwd = CommLog(), CommLog()
        with fwd:
            y = model(x)
        after_forward = holding_full()
        with bwd:
            y.sum().backward()
        out = {"forward": _summary(fwd.ops), "backward": _summary(bwd.ops), "forward_ops": fwd.ops,
               "after_forward": after_forward,
               "during_forward": list(during),
               "grads": {n: [type(p.grad).__name__, list(p.grad.to_local().shape)] for n, p in model.named_parameters()}}
        out["after_backward"] = holding_full()
        opt.step()
        opt.zero_grad()
    out["sharded_after_step"] = all(isinstance(p, DTensor) for p in model.parameters())
    out["params"] = {n: {"placements": str(p.placements), "global": list(p.shape), "local": list(p.to_local().shape)}
                     for n, p in model.named_parameters()}
    out["local_bytes"] = {
        "params": sum(p.to_local().numel() * p.element_size() for p in model.parameters()),
        "state": sum(v.to_local().numel() * v.element_size() for s in opt.state.values()
                     for k, v in s.items() if k != "step"),
    }
    out["local_bytes"]["grads"] = out["local_bytes"]["params"]  # one local gradient shard per local parameter shard
    out["state_is_dtensor"] = all(isinstance(s["exp_avg"], DTensor) for s in opt.state.values())
    return out


def rank_fsdp(rank, store, outdir):
    init_rank(rank, store)
    from torch.distributed.device_mesh import init_device_mesh  # noqa: PLC0415
    from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    mesh = init_device_mesh("cpu", (WORLD,))
    gen = torch.Generator().manual_seed(rank)
    result = {v: _run_fsdp(rank, mesh, v, gen) for v in ("zero3", "zero2", "root_default")}

    # DDP on the same model: one step's collectives and what each rank keeps.
    model = _model()
    ddp = DDP(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    log = CommLog()
    with log:
        ddp(torch.randint(0, 1000, (16,), generator=gen)).sum().backward()
    opt.step()
    nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
    result["ddp"] = {"backward": _summary(log.ops), "numel": sum(p.numel() for p in model.parameters()),
                     "local_bytes": {"params": nbytes, "grads": nbytes, "state": 2 * nbytes}}

    # An all-reduce is a reduce-scatter followed by an all-gather.
    x = torch.randn(1024, generator=torch.Generator().manual_seed(50 + rank))
    summed = x.clone()
    dist.all_reduce(summed)
    shard = torch.empty(1024 // WORLD)
    dist.reduce_scatter_tensor(shard, x)
    rebuilt = torch.empty(1024)
    dist.all_gather_into_tensor(rebuilt, shard)
    result["rs_ag"] = {"equal": torch.equal(summed, rebuilt), "shard_numel": shard.numel()}
    finish_rank(rank, outdir, result)


def _elements(summary, name):
    return summary.get(name, {}).get("elements", 0)


def _calls(summary, name):
    return summary.get(name, {}).get("calls", 0)


AG, RS, AR = "_allgather_base_", "_reduce_scatter_base_", "allreduce_"


def _comm(r0, variant):
    """One step's collectives of an FSDP variant (calls, elements), DDP's all-reduce, and the ratio of the
    variant's total to what that all-reduce costs in a ring (a reduce-scatter plus an all-gather)."""
    z, ddp = r0[variant], r0["ddp"]["backward"]
    ddp_ar = _elements(ddp, AR)
    total = _elements(z["forward"], AG) + _elements(z["backward"], AG) + _elements(z["backward"], RS)
    return {"fwd_ag_calls": _calls(z["forward"], AG), "fwd_ag": _elements(z["forward"], AG),
            "bwd_ag_calls": _calls(z["backward"], AG), "bwd_ag": _elements(z["backward"], AG),
            "bwd_rs_calls": _calls(z["backward"], RS), "bwd_rs": _elements(z["backward"], RS),
            "ddp_ar": ddp_ar, "ddp_ar_calls": _calls(ddp, AR), "ratio": total / (2 * ddp_ar)}


# --- claims ---------------------------------------------------------------------------------------

@claim("fsdp.dtensor-shards", question=Q, timeout=150,
       statement="`fully_shard` 把每个参数换成沿第 0 维切开的 DTensor（{placement}）：`0.weight` 的全局形状是 "
                 "{emb_global}，每个 rank 只存 {emb_local}；行数不能整除时前面的 rank 多拿一行，`5.weight`（{head_global}）"
                 "在 rank 0 上是 {head_local.0}，在 rank 1 上是 {head_local.1}。",
       expect={"placement": "(Shard(dim=0),)", "emb_global": [1000, 32], "emb_local": [500, 32], "head_global": [5, 64],
               "head_local": {"0": [3, 64], "1": [2, 64]}, "all_sharded": True})
def _(ctx):
    r = run_ranks(rank_fsdp, ctx)
    p0, p1 = r[0]["zero3"]["params"], r[1]["zero3"]["params"]
    return {"placement": p0["0.weight"]["placements"], "emb_global": p0["0.weight"]["global"],
            "emb_local": p0["0.weight"]["local"], "head_global": p0["5.weight"]["global"],
            "head_local": {"0": p0["5.weight"]["local"], "1": p1["5.weight"]["local"]},
            "all_sharded": all(v["placements"] == "(Shard(dim=0),)" for v in p0.values())}


@claim("fsdp.grads-and-state-sharded", question=Q, timeout=150,
       statement="梯度和优化器状态跟着参数切：反向之后 `0.weight.grad` 也是 DTensor，本地形状 {emb_grad_local}；"
                 "Adam 的 `exp_avg` {state_is_dtensor:?也是 DTensor|不是 DTensor}。每个 rank 常驻的参数、梯度、Adam 状态合计 "
                 "{fsdp_total.0:bytes} 和 {fsdp_total.1:bytes}，DDP 的每个 rank 是 {ddp_total:bytes}，两者之比 "
                 "{share0:pct}：按行切的分片几乎均匀。",
       expect={"emb_grad_local": [500, 32], "grad_type": "DTensor", "state_is_dtensor": True, "ddp_total": 617552,
               "sum_is_ddp": True})
def _(ctx):
    r = run_ranks(rank_fsdp, ctx)
    totals = {str(i): sum(x["zero3"]["local_bytes"].values()) for i, x in enumerate(r)}
    ddp_total = sum(r[0]["ddp"]["local_bytes"].values())
    grad = r[0]["zero3"]["grads"]["0.weight"]
    return {"emb_grad_local": grad[1], "grad_type": grad[0], "state_is_dtensor": r[0]["zero3"]["state_is_dtensor"],
            "fsdp_total": totals, "ddp_total": ddp_total, "share0": totals["0"] / ddp_total,
            "sum_is_ddp": totals["0"] + totals["1"] == ddp_total}


@claim("fsdp.zero3-comm", question=Q, timeout=150,
       statement="ZeRO-3（`reshard_after_forward=True`）每步的通信：前向 all-gather 每一层的参数（{fwd_ag_calls} 次，"
                 "共 {fwd_ag} 个元素），前向后立刻释放，反向再 all-gather 一遍（{bwd_ag_calls} 次，{bwd_ag} 个元素），"
                 "梯度用 reduce-scatter（{bwd_rs_calls} 次，{bwd_rs} 个元素）；DDP 是一次 all-reduce（{ddp_ar} 个元素）。"
                 "按环形算法，all-reduce 的代价是 reduce-scatter 加 all-gather，所以 ZeRO-3 的通信量是 DDP 的 {ratio:.3f} 倍"
                 "（比 {theory} 多出的零头来自下面说的补齐）。",
       expect={"fwd_ag_calls": 4, "bwd_ag_calls": 4, "bwd_rs_calls": 4, "fwd_ag": 38662, "bwd_ag": 38662,
               "bwd_rs": 38662, "ddp_ar": 38597, "ddp_ar_calls": 1, "ratio": {"between": [1.49, 1.51]}})
def _(ctx):
    return {**_comm(run_ranks(rank_fsdp, ctx)[0], "zero3"), "theory": 3 / 2}


@claim("fsdp.zero2-comm", question=Q, timeout=150,
       statement="ZeRO-2 的做法（`reshard_after_forward=False`）省掉反向那一遍 all-gather：前向 {fwd_ag_calls} 次 "
                 "all-gather（{fwd_ag} 个元素），反向 all-gather {bwd_ag_calls} 次，reduce-scatter {bwd_rs_calls} 次"
                 "（{bwd_rs} 个元素），总量是 DDP 的 {ratio:.3f} 倍。",
       expect={"fwd_ag_calls": 4, "fwd_ag": 38662, "bwd_ag_calls": 0, "bwd_rs_calls": 4, "bwd_rs": 38662,
               "ratio": {"between": [0.99, 1.01]}})
def _(ctx):
    comm = _comm(run_ranks(rank_fsdp, ctx)[0], "zero2")
    return {k: comm[k] for k in ("fwd_ag_calls", "fwd_ag", "bwd_ag_calls", "bwd_rs_calls", "bwd_rs", "ratio")}


@claim("fsdp.padding", question=Q, timeout=150,
       statement="集合通信搬的是补齐后的分片：`5.weight` 和 `5.bias` 共 {head_numel} 个元素，rank 1 只有 {head_rows_1} 行，"
                 "all-gather 却按每个 rank {head_shard_padded} 个元素搬，一共 {head_gathered} 个；整个模型 {numel} 个参数，"
                 "每遍 all-gather 搬 {gathered} 个。",
       expect={"head_numel": 325, "head_rows_1": 2, "head_shard_padded": 195, "head_gathered": 390, "numel": 38597,
               "gathered": 38662})
def _(ctx):
    r = run_ranks(rank_fsdp, ctx)
    z = r[0]["zero3"]
    head = 5 * 64 + 5
    head_out, head_in = next(sizes for name, sizes in reversed(z["forward_ops"]) if name == AG)  # the last layer's
    return {"head_numel": head, "head_rows_1": r[1]["zero3"]["params"]["5.weight"]["local"][0],
            "head_shard_padded": head_in, "head_gathered": head_out,
            "numel": r[0]["ddp"]["numel"], "gathered": _elements(z["forward"], AG)}


@claim("fsdp.full-params-in-memory", question=Q, timeout=150,
       statement="两者的差别在显存：ZeRO-3 前向时每一层进入前只有它自己持有完整参数（各层进入时持有完整参数的层数依次是 "
                 "{zero3_during}），前向结束时一层也没有（{zero3_after}）；ZeRO-2 的完整参数一层层累积，前向结束时 "
                 "{zero2_after} 层全都在，一直留到反向用完；反向结束后两者都切回分片（持有完整参数的层数 "
                 "{zero2_after_backward}，参数{sharded_after_step:?全是|并非全是} DTensor）。",
       expect={"zero3_during": [1, 1, 1, 1], "zero3_after": 0, "zero2_during": [1, 2, 3, 4], "zero2_after": 4,
               "zero2_after_backward": 0, "zero3_after_backward": 0, "sharded_after_step": True})
def _(ctx):
    r0 = run_ranks(rank_fsdp, ctx)[0]
    return {"zero3_during": [sum(h) for h in r0["zero3"]["during_forward"]],
            "zero3_after": sum(r0["zero3"]["after_forward"]),
            "zero2_during": [sum(h) for h in r0["zero2"]["during_forward"]],
            "zero2_after": sum(r0["zero2"]["after_forward"]),
            "zero2_after_backward": sum(r0["zero2"]["after_backward"]),
            "zero3_after_backward": sum(r0["zero3"]["after_backward"]),
            "sharded_after_step": r0["zero2"]["sharded_after_step"] and r0["zero3"]["sharded_after_step"]}


@claim("fsdp.root-kept", question=Q, timeout=150,
       statement="根模块是个例外：不传 `reshard_after_forward` 时，非根模块默认前向后释放，根模块（这里它直接持有 `5.*`）"
                 "前向后不释放，因为反向一开始就要用它；于是反向只 all-gather {bwd_ag_calls} 次（不是 {layers} 次），"
                 "前向结束时仍持有完整参数的只有根模块这一层（{after_forward} 层）。",
       expect={"bwd_ag_calls": 3, "layers": 4, "after_forward": 1, "head_full_after_forward": True})
def _(ctx):
    z = run_ranks(rank_fsdp, ctx)[0]["root_default"]
    return {"bwd_ag_calls": _calls(z["backward"], AG), "layers": len(LAYERS), "after_forward": sum(z["after_forward"]),
            "head_full_after_forward": z["after_forward"][-1]}


@claim("collective.allreduce-is-rs-ag", question=Q, timeout=150,
       statement="all-reduce 可以拆成两步：每个 rank 先 reduce-scatter 得到 {shard_numel} 个元素的分片（归约好的 1/N），"
                 "再 all-gather 拼回完整张量，结果和直接 all-reduce {equal:?逐位相同|不同}。ZeRO 省显存的办法就是在两步之间"
                 "只保留自己那一片。",
       expect={"equal": True, "shard_numel": 512})
def _(ctx):
    r = run_ranks(rank_fsdp, ctx)
    return {"equal": r[0]["rs_ag"]["equal"] and r[1]["rs_ag"]["equal"], "shard_numel": r[0]["rs_ag"]["shard_numel"]}
