"""What DDP keeps in step across ranks and what it leaves local: parameters at construction, gradients
(averaged, and by whom), BatchNorm buffers, and where the bucket memory goes. Two gloo processes on the CPU."""

import copy

import torch
import torch.distributed as dist
from torch import nn

from snippets._workloads.dist import WORLD, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "ddp-bucketing"

# --- one scenario, run on WORLD gloo processes by run_ranks (snippets/_workloads/dist.py) ----------

def _net():
    return nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))


def _flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def _max_diff(a, b):
    return (a - b).abs().max().item()


def _plain_sum_hook(state, bucket):
    """A hook that only sums: no division by the world size."""
    fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def _storage_hook(seen):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: PLC0415

    def hook(state, bucket):
        buf = bucket.buffer()
        seen.append({"ptr": buf.untyped_storage().data_ptr(), "bytes": buf.numel() * buf.element_size()})
        return default_hooks.allreduce_hook(None, bucket)

    return hook


def rank_sync(rank, store, outdir):
    init_rank(rank, store)
    from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    out = {}
    torch.manual_seed(rank)  # a different initialisation on each rank
    model = _net()
    out["params_before"] = _flat(model.parameters()).tolist()[:6]
    before_full = _flat(model.parameters())
    ddp = DDP(model)
    after_full = _flat(model.parameters())
    out["params_after"] = after_full.tolist()[:6]
    out["changed"] = not torch.equal(before_full, after_full)

    # Training steps on each rank's own data; `ref` is an unwrapped copy fed the same batches.
    ref = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(10 + rank)
    batches = [torch.randn(32, 8, generator=gen) * (1 + rank) + rank for _ in range(2)]
    bn = model[1]
    means = []
    for i, x in enumerate(batches):
        ddp.zero_grad(set_to_none=True)
        ref.zero_grad(set_to_none=True)
        if i == 1:  # what this rank's BatchNorm held, and what rank 0's held, just before the second forward
            own_prev = bn.running_mean.clone()
            rank0_prev = bn.running_mean.clone()
            dist.broadcast(rank0_prev, src=0)
            batch_mean = model[0](x).detach().mean(0)
        y = ddp(x)
        y_ref = ref(x)
        y.sum().backward()
        y_ref.sum().backward()
        means.append(bn.running_mean.tolist())
        if i == 0:
            out["out_diff"] = _max_diff(y, y_ref)
            local = _flat(p.grad for p in ref.parameters())
            mean = local.clone()
            dist.all_reduce(mean)  # a plain collective, outside DDP
            mean /= WORLD
            ddp_grad = _flat(p.grad for p in model.parameters())
            gathered = [torch.empty_like(ddp_grad) for _ in range(WORLD)]
            dist.all_gather(gathered, ddp_grad)
            out["grad_vs_mean"] = _max_diff(ddp_grad, mean)
            out["grad_vs_local"] = _max_diff(ddp_grad, local)
            out["ranks_identical"] = all(torch.equal(gathered[0], g) for g in gathered)
        # The unwrapped copy must start the next step where DDP's module is (buffers included).
        ref.load_state_dict(model.state_dict())
    m = bn.momentum
    out["bn_after_first"] = means[0][:4]
    out["bn_vs_from_rank0"] = _max_diff(torch.tensor(means[1]), (1 - m) * rank0_prev + m * batch_mean)
    out["bn_vs_from_own"] = _max_diff(torch.tensor(means[1]), (1 - m) * own_prev + m * batch_mean)

    # The same first step, twice from the same weights: DDP's default against a hook that only sums.
    grads = {}
    for name in ("plain", "summed"):
        torch.manual_seed(0)
        net = DDP(_net())
        if name == "summed":
            net.register_comm_hook(None, _plain_sum_hook)
        net(batches[0]).sum().backward()
        grads[name] = _flat(p.grad for p in net.parameters())
    ratio = grads["summed"] / grads["plain"]
    ratio = ratio[torch.isfinite(ratio)]  # drop the elements whose gradient is exactly zero
    out["sum_hook_ratio_min"] = ratio.min().item()
    out["sum_hook_ratio_max"] = ratio.max().item()

    # Where the gradients live: separate tensors plus the bucket, or views into the bucket.
    for view in (False, True):
        torch.manual_seed(0)
        net = DDP(_net(), gradient_as_bucket_view=view)
        seen = []
        net.register_comm_hook(None, _storage_hook(seen))
        for x in batches:
            seen.clear()
            net.zero_grad()
            net(x).sum().backward()
        grads = [p.grad for p in net.parameters()]
        buckets = {s["ptr"] for s in seen}
        out[f"view_{view}"] = {
            "grad_storages": len({g.untyped_storage().data_ptr() for g in grads}),
            "grads_in_bucket": sum(g.untyped_storage().data_ptr() in buckets for g in grads),
            "n_grads": len(grads),
            "grad_bytes": sum(g.numel() * g.element_size() for g in grads),
            "bucket_bytes": sum(s["bytes"] for s in seen),
        }
    finish_rank(rank, outdir, out)


# --- claims ---------------------------------------------------------------------------------------

@claim("ddp.init-broadcast", question=Q, timeout=150,
       statement="两个 rank 用不同的随机种子初始化同一个网络，包装前参数{equal_before:?竟然相同|各不相同}；"
                 "构造 `DistributedDataParallel` 时 rank 0 的参数被广播出去，包装后 rank 1 的参数与 rank 0 "
                 "{equal_after:?完全相同|仍不相同}，rank 0 自己的参数{rank0_changed:?被改动了|不变}。",
       expect={"equal_before": False, "equal_after": True, "rank0_changed": False, "rank1_changed": True})
def _(ctx):
    r0, r1 = run_ranks(rank_sync, ctx)
    return {"equal_before": r0["params_before"] == r1["params_before"],
            "equal_after": r0["params_after"] == r1["params_after"],
            "rank0_changed": r0["changed"], "rank1_changed": r1["changed"]}


@claim("ddp.forward-is-local", question=Q, timeout=150,
       statement="前向完全在本地：每个 rank 上 DDP 的输出和同一批数据喂给未包装副本的输出一致（最大差 {out_diff}），"
                 "其中的 `BatchNorm1d` 用的是本 rank 这一批数据的均值和方差；DDP 不会把它变成 `SyncBatchNorm`。",
       expect={"out_diff": 0.0})
def _(ctx):
    r0, r1 = run_ranks(rank_sync, ctx)
    return {"out_diff": max(r0["out_diff"], r1["out_diff"])}


@claim("ddp.grads-averaged", kind="measured", question=Q, timeout=150,
       statement="反向之后两个 rank 的梯度{ranks_identical:?逐位相同|不同}，等于两个 rank 各自本地梯度的平均"
                 "（最大差 {grad_vs_mean}），和本 rank 自己的梯度则不同（最大差 {grad_vs_local:.2f}）。",
       expect={"ranks_identical": True, "grad_vs_mean": 0.0, "grad_vs_local": {">": 0.01}})
def _(ctx):
    r0, r1 = run_ranks(rank_sync, ctx)
    return {"ranks_identical": r0["ranks_identical"] and r1["ranks_identical"],
            "grad_vs_mean": max(r0["grad_vs_mean"], r1["grad_vs_mean"]),
            "grad_vs_local": min(r0["grad_vs_local"], r1["grad_vs_local"])}


@claim("ddp.hook-owns-division", question=Q, timeout=150,
       statement="谁来除以 world_size：没有通信钩子时，DDP 在把梯度拷进桶时乘上 1/world_size，再做求和的 all-reduce；"
                 "一旦注册了钩子，它就不再除。一个只做求和的钩子得到的梯度，每个元素都是默认做法的 {ratio_min:x}"
                 "（最小值和最大值相同），正好是 world_size（{world}）；内置的 `allreduce_hook` 自己先除再求和。",
       expect={"ratio_min": 2.0, "ratio_max": 2.0, "world": 2})
def _(ctx):
    r0, _ = run_ranks(rank_sync, ctx)
    return {"ratio_min": r0["sum_hook_ratio_min"], "ratio_max": r0["sum_hook_ratio_max"], "world": WORLD}


@claim("ddp.buffers-from-rank0", kind="measured", question=Q, timeout=150,
       statement="缓冲区不求平均，而是每次前向开始时从 rank 0 广播：第一步之后两个 rank 的 `running_mean` "
                 "{same_after_first:?相同|各不相同}；第二步之后，rank 1 的 `running_mean` 等于从 rank 0 上一步的值出发、"
                 "再用 rank 1 这一批更新一次的结果（最大差 {from_rank0:.1e}），而不是从它自己上一步的值出发"
                 "（最大差 {from_own:.2f}）：rank 1 自己更新的那部分被覆盖了。",
       expect={"same_after_first": False, "from_rank0": {"<": 1e-6}, "from_own": {">": 0.01}})
def _(ctx):
    r0, r1 = run_ranks(rank_sync, ctx)
    return {"same_after_first": r0["bn_after_first"] == r1["bn_after_first"],
            "from_rank0": r1["bn_vs_from_rank0"], "from_own": r1["bn_vs_from_own"],
            "rank0_from_rank0": r0["bn_vs_from_rank0"]}


@claim("ddp.gradient-as-bucket-view", question=Q, timeout=150,
       statement="桶是梯度之外的另一份内存：默认设置下 {off.n_grads} 个梯度各占 {off.grad_storages} 块存储，"
                 "没有一个落在桶里（{off.grads_in_bucket} 个），桶另占 {off.bucket_bytes:bytes}，和梯度的 "
                 "{off.grad_bytes:bytes} 一样大；`gradient_as_bucket_view=True` 时全部梯度（{on.grads_in_bucket} 个）"
                 "都是桶的 view，共 {on.grad_storages} 块存储，这一份就省掉了。",
       expect={"off": {"n_grads": 6, "grad_storages": 6, "grads_in_bucket": 0, "grad_bytes": 976, "bucket_bytes": 976},
               "on": {"n_grads": 6, "grad_storages": 1, "grads_in_bucket": 6, "grad_bytes": 976, "bucket_bytes": 976}})
def _(ctx):
    r0, _ = run_ranks(rank_sync, ctx)
    return {"off": r0["view_False"], "on": r0["view_True"]}
