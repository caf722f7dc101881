"""ZeRO-1 as PyTorch ships it: ``ZeroRedundancyOptimizer`` under DDP, two gloo processes on the CPU.

What each rank keeps, how the parameters are split between ranks, and which collectives one
training step issues (a TorchDispatchMode records every ``c10d`` operator with its tensor sizes)."""

import copy

import torch
import torch.distributed as dist
from torch import nn

from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "zero-stages"

# The scenario below runs on WORLD gloo processes, each writing what it saw (run_ranks in
# snippets/_workloads/dist.py); CommLog records the c10d collectives of a step with their sizes.


def _totals(ops):
    """Elements per kind of collective: all-gather and reduce-scatter counted at their full (gathered) size."""
    out = {}
    for name, sizes in ops:
        out[name] = out.get(name, 0) + max(sizes)
    return out


# --- the model: one large embedding and three small layers ----------------------------------------

def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(1000, 32), nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 5))


def _state_bytes(optimizer):
    return sum(v.numel() * v.element_size() for s in optimizer.state.values() for k, v in s.items() if k != "step")


def rank_zero1(rank, store, outdir):
    init_rank(rank, store)
    from torch.distributed.optim import ZeroRedundancyOptimizer  # noqa: PLC0415
    from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    model = _model()
    ref = copy.deepcopy(model)  # the same training with a plain Adam on every rank: DDP without ZeRO
    ddp, ref_ddp = DDP(model), DDP(ref)
    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=1e-2)
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    names = {p.data_ptr(): n for n, p in model.named_parameters()}
    gen = torch.Generator().manual_seed(rank)
    logs = {}
    for it in range(3):
        x = torch.randint(0, 1000, (16,), generator=gen)
        fb, st = CommLog(), CommLog()
        with fb:
            ddp(x).sum().backward()
        grads_full = all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
        with st:
            opt.step()
        opt.zero_grad()
        ref_ddp(x).sum().backward()
        ref_opt.step()
        ref_opt.zero_grad()
        logs[it] = {"backward": fb.ops, "step": st.ops}
    owned = [names[p.data_ptr()] for g in opt.optim.param_groups for p in g["params"]]
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    ref_flat = torch.cat([p.detach().reshape(-1) for p in ref.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(WORLD)]
    dist.all_gather(gathered, flat)
    finish_rank(rank, outdir, {
        "owned": owned,
        "owned_numel": sum(p.numel() for g in opt.optim.param_groups for p in g["params"]),
        "numel": sum(p.numel() for p in model.parameters()),
        "param_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
        "grads_full": grads_full,
        "state_bytes": _state_bytes(opt.optim),
        "full_state_bytes": _state_bytes(ref_opt),
        "steady": logs[2],
        "vs_ddp_adam": (flat - ref_flat).abs().max().item(),
        "ranks_equal": all(torch.equal(gathered[0], g) for g in gathered),
    })


# --- claims ---------------------------------------------------------------------------------------

@claim("zero1.state-sharded", question=Q, timeout=150,
       statement="ZeRO-1 只切优化器状态：`ZeroRedundancyOptimizer` 包着 Adam、模型包在 DDP 里，两个 rank 的 Adam 状态各是 "
                 "{state.0:bytes} 和 {state.1:bytes}，加起来正好是普通 Adam 在每个 rank 上都要存的 {full:bytes}；"
                 "参数（每个 rank {param_bytes:bytes}）和梯度仍是每个 rank 一整份（梯度{grads_full:?都是参数的完整形状|并非都是完整形状}）。",
       expect={"sum_equals_full": True, "full": 308776, "param_bytes": 154388, "grads_full": True})
def _(ctx):
    r = run_ranks(rank_zero1, ctx)
    return {"state": {str(i): x["state_bytes"] for i, x in enumerate(r)}, "full": r[0]["full_state_bytes"],
            "sum_equals_full": sum(x["state_bytes"] for x in r) == r[0]["full_state_bytes"],
            "param_bytes": r[0]["param_bytes"], "grads_full": r[0]["grads_full"] and r[1]["grads_full"],
            "resident": {str(i): 2 * x["param_bytes"] + x["state_bytes"] for i, x in enumerate(r)}}


@claim("zero1.whole-params-greedy", question=Q, timeout=150,
       statement="它按整个参数分，不切开参数：把参数按元素数从大到小排，依次交给目前最少的 rank。这个模型里 rank 0 只拿到 "
                 "{owned_names.0}，却占了全部参数的 {share0:pct}；rank 1 拿到其余 {n_owned1} 个参数张量。于是 rank 0 的 Adam "
                 "状态是 rank 1 的 {ratio:x}，每个 rank 的显存由最大的那一份决定。",
       expect={"owned": {"0": ["0.weight"], "1": ["3.weight", "1.weight", "5.weight", "1.bias", "3.bias", "5.bias"]},
               "owned_numel": [32000, 6597], "state_bytes": [256000, 52776], "n_owned1": 6})
def _(ctx):
    r = run_ranks(rank_zero1, ctx)
    return {"owned": {str(i): x["owned"] for i, x in enumerate(r)}, "owned_numel": [x["owned_numel"] for x in r],
            "owned_names": {str(i): "、".join(x["owned"]) for i, x in enumerate(r)},
            "state_bytes": [x["state_bytes"] for x in r],
            "share0": r[0]["owned_numel"] / r[0]["numel"], "n_owned1": len(r[1]["owned"]),
            "ratio": r[0]["state_bytes"] / r[1]["state_bytes"]}


@claim("zero1.same-update", question=Q, timeout=150,
       statement="切分不改变结果：三步之后，两个 rank 的参数{ranks_equal:?逐位相同|并不相同}，和每个 rank 都存全部 Adam 状态的 DDP "
                 "训练结果相比，最大差 {vs_ddp_adam}。",
       expect={"ranks_equal": True, "vs_ddp_adam": 0.0})
def _(ctx):
    r = run_ranks(rank_zero1, ctx)
    return {"ranks_equal": r[0]["ranks_equal"] and r[1]["ranks_equal"],
            "vs_ddp_adam": max(x["vs_ddp_adam"] for x in r)}


@claim("zero1.comm-per-step", question=Q, timeout=150,
       statement="通信多了一份：一步里反向照常 all-reduce 全部梯度（{backward.allreduce_} 个元素，{n_allreduce} 次调用），"
                 "`step()` 之后每个 rank 再把自己更新的参数广播给其他 rank（{n_broadcast} 次 broadcast，共 "
                 "{step.broadcast_} 个元素，也是全部参数）。ZeRO 论文里的 ZeRO-1 用 reduce-scatter 加 all-gather，"
                 "总量与 DDP 相同；这里是完整的 all-reduce 再加一轮广播。",
       expect={"backward": {"allreduce_": 38597}, "step": {"broadcast_": 38597}, "n_allreduce": 1, "n_broadcast": 7,
               "numel": 38597})
def _(ctx):
    r0 = run_ranks(rank_zero1, ctx)[0]
    steady = r0["steady"]
    return {"backward": _totals(steady["backward"]), "step": _totals(steady["step"]),
            "n_allreduce": sum(op == "allreduce_" for op, _ in steady["backward"]),
            "n_broadcast": sum(op == "broadcast_" for op, _ in steady["step"]), "numel": r0["numel"]}
