"""DDP's buckets seen from a communication hook: two gloo processes on the CPU train a small MLP, and a
hook that wraps the built-in ``allreduce_hook`` writes down every bucket it is handed, in order."""

import copy
import inspect

import torch
import torch.distributed as dist
from torch import nn

from snippets._workloads.dist import WORLD, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "ddp-bucketing"

# The scenario below runs on WORLD gloo processes, each writing what it saw (run_ranks in
# snippets/_workloads/dist.py); the claims of this file read those results from one run.


# --- the models -----------------------------------------------------------------------------------

def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


class _RegisteredBackwards(nn.Module):
    """The same kind of layers, registered in the reverse of the order forward uses them."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.head = nn.Linear(512, 10)   # registered first, used last
        self.mid = nn.Linear(512, 512)
        self.stem = nn.Linear(256, 512)  # registered last, used first

    def forward(self, x):
        return self.head(torch.relu(self.mid(torch.relu(self.stem(x)))))


def _recording_hook(model, calls):
    """The built-in allreduce_hook, after writing down the bucket and which gradients do not exist yet."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: PLC0415

    names = {p.data_ptr(): n for n, p in model.named_parameters()}

    def hook(state, bucket):
        buf = bucket.buffer()
        calls.append({"index": bucket.index(), "bytes": buf.numel() * buf.element_size(),
                      "params": [names[p.data_ptr()] for p in bucket.parameters()],
                      "pending": [n for n, p in model.named_parameters() if p.grad is None]})
        return default_hooks.allreduce_hook(None, bucket)

    return hook


def _flat_grads(model):
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def _iterations(ddp, calls, n, gen):
    """``n`` training iterations on fresh batches from ``gen``; the hook calls (in ``calls``) of each."""
    iterations = []
    for _ in range(n):
        ddp.zero_grad(set_to_none=True)
        start = len(calls)
        ddp(torch.randn(8, 256, generator=gen)).sum().backward()
        iterations.append(calls[start:])
    return iterations


def rank_hooked(rank, store, outdir):
    init_rank(rank, store)
    from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: PLC0415

    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    model = _mlp()
    ddp = DDP(model)
    calls = []
    ddp.register_comm_hook(None, _recording_hook(model, calls))
    iterations = _iterations(ddp, calls, 3, gen)

    # Gradient accumulation: two micro-batches under no_sync, then one synchronised backward.
    ddp.zero_grad(set_to_none=True)
    ref = copy.deepcopy(model)  # the same weights, not wrapped: what this rank computes on its own
    micro = [torch.randn(8, 256, generator=gen) for _ in range(3)]
    start = len(calls)
    with ddp.no_sync():
        for x in micro[:2]:
            ddp(x).sum().backward()
    inside = len(calls) - start
    head_grad_inside = model[6].weight.grad[0, :8].tolist()  # (the bias grad of a sum is the batch size everywhere)
    ddp(micro[2]).sum().backward()
    after = len(calls) - start - inside
    for x in micro:
        ref(x).sum().backward()
    expected = _flat_grads(ref)
    dist.all_reduce(expected)  # a plain collective, outside DDP: the mean of what the ranks computed
    expected /= WORLD
    nosync = {"calls_inside": inside, "calls_after": after, "head_grad_inside": head_grad_inside,
              "max_diff": (_flat_grads(model) - expected).abs().max().item()}

    # A model whose registration order is the reverse of its use.
    rev = _RegisteredBackwards()
    rev_ddp = DDP(rev)
    rev_calls = []
    rev_ddp.register_comm_hook(None, _recording_hook(rev, rev_calls))
    rev_iterations = _iterations(rev_ddp, rev_calls, 2, gen)

    # find_unused_parameters=True: the one setting in which the constructor already cuts buckets.
    unused = _mlp()
    unused_ddp = DDP(unused, find_unused_parameters=True)
    unused_calls = []
    unused_ddp.register_comm_hook(None, _recording_hook(unused, unused_calls))
    unused_ddp(torch.randn(8, 256, generator=gen)).sum().backward()

    # The reversed model with find_unused_parameters=True: its constructor's guess at the order is wrong.
    late = _RegisteredBackwards()
    late_ddp = DDP(late, find_unused_parameters=True)
    late_calls = []
    late_ddp.register_comm_hook(None, _recording_hook(late, late_calls))
    ready = []  # the order in which gradients are accumulated
    for n, p in late.named_parameters():
        p.register_post_accumulate_grad_hook(lambda _p, n=n: ready.append(n))
    late_ddp(torch.randn(8, 256, generator=gen)).sum().backward()

    finish_rank(rank, outdir, {
        "wrong_guess": late_calls, "wrong_guess_ready": ready,
        "iterations": iterations, "nosync": nosync, "find_unused_first": unused_calls,
        "param_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
        "n_params": len(list(model.parameters())),
        "bucket_bytes_cap": ddp.bucket_bytes_cap,  # bucket_cap_mb's default, in bytes
        "reversed": {"registration": [n for n, _ in rev.named_parameters()], "iterations": rev_iterations},
    })


# --- claims ---------------------------------------------------------------------------------------

@claim("ddp.first-iteration-one-bucket", question=Q, timeout=150,
       statement="第一次迭代只有 {n_buckets} 个桶：两个 gloo 进程训练同一个 MLP，通信钩子在第一次反向里只被调用一次，"
                 "拿到的桶装着全部 {n_params} 个参数张量、共 {bucket_bytes:bytes}；它被调用时已没有尚未算出的梯度"
                 "（{pending} 个），也就是整个反向算完才发起唯一的一次 all-reduce，这一步没有重叠。",
       expect={"n_buckets": 1, "n_params": 8, "bucket_bytes": 2648104, "pending": 0, "all_params_in_it": True})
def _(ctx):
    r0 = run_ranks(rank_hooked, ctx)[0]
    first = r0["iterations"][0]
    return {"n_buckets": len(first), "n_params": r0["n_params"], "bucket_bytes": first[0]["bytes"],
            "pending": len(first[0]["pending"]), "all_params_in_it": len(first[0]["params"]) == r0["n_params"]}


@claim("ddp.find-unused-buckets-early", question=Q, timeout=150,
       statement="构造时就分桶的只有 `find_unused_parameters=True`：同一个 MLP 这样包装，第一次反向就有 {n_buckets} 个桶。"
                 "它们是按参数注册的顺序切的，第一个桶的小上限给了最先注册的 {b1_params}（{b1_bytes:bytes}），"
                 "再把桶的次序倒过来，于是先归约的桶 0 是 {b0_params}（{b0_bytes:bytes}），小桶排在最后。"
                 "默认的 `False`（以及 `static_graph=True`）在构造时把上限设成 `sys.maxsize`，全部参数进一个桶。",
       expect={"n_buckets": 2, "b0_params": ["2.bias", "4.weight", "4.bias", "6.weight", "6.bias"], "b0_bytes": 1073192,
               "b1_params": ["0.weight", "0.bias", "2.weight"], "b1_bytes": 1574912, "first_cap": 1048576,
               "maxsize_in_source": True})
def _(ctx):
    from torch.nn.parallel import distributed as ddp_module  # noqa: PLC0415

    first = run_ranks(rank_hooked, ctx)[0]["find_unused_first"]
    ctx.observe(maxsize_in_source="bucket_size_limits = [sys.maxsize]" in inspect.getsource(ddp_module))
    return {"n_buckets": len(first), "b0_params": first[0]["params"], "b0_bytes": first[0]["bytes"],
            "b1_params": first[-1]["params"], "b1_bytes": first[-1]["bytes"], "first_cap": dist._DEFAULT_FIRST_BUCKET_BYTES}


@claim("ddp.buckets-in-order", question=Q, timeout=150,
       statement="桶只能按编号依次发起。把上面那个注册顺序反过来的模型用 `find_unused_parameters=True` 包装，构造时猜的顺序是错的："
                 "梯度按 {ready} 的顺序算出，桶 1（{b1_params}）在第 {b1_complete} 个梯度时就凑齐了，却要等桶 0"
                 "（{b0_params}）在第 {b0_complete} 个梯度时凑齐；两个桶的钩子按 {order} 的次序、"
                 "都在反向的最后被调用（调用时尚未算出的梯度分别有 {pending} 个），这一步没有任何重叠。",
       expect={"order": [0, 1], "pending": [0, 0], "b0_params": ["mid.bias", "stem.weight", "stem.bias"],
               "b1_params": ["head.weight", "head.bias", "mid.weight"], "b1_complete": 4, "b0_complete": 6})
def _(ctx):
    r0 = run_ranks(rank_hooked, ctx)[0]
    calls, ready = r0["wrong_guess"], r0["wrong_guess_ready"]

    def complete(params):  # how many gradients existed when the last of these arrived
        return 1 + max(ready.index(n) for n in params)

    return {"order": [c["index"] for c in calls], "pending": [len(c["pending"]) for c in calls],
            "b0_params": calls[0]["params"], "b1_params": calls[1]["params"], "ready": ready,
            "b1_complete": complete(calls[1]["params"]), "b0_complete": complete(calls[0]["params"])}


@claim("ddp.rebuilt-buckets", question=Q, timeout=150,
       statement="第二次前向开始时，DDP 按第一次反向里梯度实际就绪的顺序重建了桶：之后每次迭代 {n_buckets} 个桶，"
                 "桶 0 是 {b0_params}（{b0_bytes:bytes}），桶 1 是 {b1_params}（{b1_bytes:bytes}）。"
                 "桶 0 的上限是 `dist._DEFAULT_FIRST_BUCKET_BYTES`（{first_cap:bytes}），其余的上限是 `bucket_cap_mb` "
                 "的默认值（{cap:bytes}）。",
       expect={"n_buckets": 2, "b0_params": ["6.bias", "6.weight", "4.bias", "4.weight"], "b0_bytes": 1071144,
               "b1_params": ["2.bias", "2.weight", "0.bias", "0.weight"], "b1_bytes": 1576960,
               "first_cap": 1048576, "cap": 26214400, "third_same_as_second": True})
def _(ctx):
    r0 = run_ranks(rank_hooked, ctx)[0]
    second, third = r0["iterations"][1], r0["iterations"][2]
    return {"n_buckets": len(second), "b0_params": second[0]["params"], "b0_bytes": second[0]["bytes"],
            "b1_params": second[1]["params"], "b1_bytes": second[1]["bytes"],
            "first_cap": dist._DEFAULT_FIRST_BUCKET_BYTES, "cap": r0["bucket_bytes_cap"],
            "third_same_as_second": [(c["index"], c["params"]) for c in second] == [(c["index"], c["params"])
                                                                                     for c in third]}


@claim("ddp.first-bucket-over-cap", question=Q, timeout=150,
       statement="上限不是桶大小的上界：桶 0 的 {b0_bytes:bytes} 比 {first_cap:bytes} 的上限多出 {over:bytes}，"
                 "因为桶是在装进一个张量之后才检查是否已达到上限，越过上限的那个张量（`4.weight`）整个留在桶里。",
       expect={"over": 22568, "b0_last_param": "4.weight"})
def _(ctx):
    r0 = run_ranks(rank_hooked, ctx)[0]
    b0 = r0["iterations"][1][0]
    return {"b0_bytes": b0["bytes"], "first_cap": dist._DEFAULT_FIRST_BUCKET_BYTES,
            "over": b0["bytes"] - dist._DEFAULT_FIRST_BUCKET_BYTES, "b0_last_param": b0["params"][-1]}


@claim("ddp.overlap", question=Q, timeout=150,
       statement="重建之后，通信和反向计算重叠：第二次迭代里桶 0 的钩子被调用、它的 all-reduce 发起时，"
                 "还有 {n_pending} 个参数（{pending}）的梯度没有算出来；桶 1 在反向的末尾发起（此时未算出的是 "
                 "{pending_last} 个）。",
       expect={"n_pending": 4, "pending": ["0.weight", "0.bias", "2.weight", "2.bias"], "pending_last": 0,
               "order": [0, 1]})
def _(ctx):
    second = run_ranks(rank_hooked, ctx)[0]["iterations"][1]
    return {"n_pending": len(second[0]["pending"]), "pending": second[0]["pending"],
            "pending_last": len(second[-1]["pending"]), "order": [c["index"] for c in second]}


@claim("ddp.bytes-per-step", question=Q, timeout=150,
       statement="分桶不改变通信量：三次迭代交给 all-reduce 的字节数分别是 {per_iteration.0:bytes}、"
                 "{per_iteration.1:bytes}、{per_iteration.2:bytes}，都等于全部参数的 {param_bytes:bytes}（fp32 梯度），"
                 "变的只是调用次数（{calls_per_iteration}）和发起的时机。",
       expect={"per_iteration": {"0": 2648104, "1": 2648104, "2": 2648104}, "param_bytes": 2648104,
               "calls_per_iteration": [1, 2, 2]})
def _(ctx):
    r0 = run_ranks(rank_hooked, ctx)[0]
    per = {str(i): sum(c["bytes"] for c in it) for i, it in enumerate(r0["iterations"])}
    return {"per_iteration": per, "param_bytes": r0["param_bytes"],
            "calls_per_iteration": [len(it) for it in r0["iterations"]]}


@claim("ddp.rebuild-follows-ready-order", question=Q, timeout=150,
       statement="重建看的是梯度就绪的顺序，不是参数注册的顺序：一个模型按 {registration} 的顺序注册参数，前向却先用 "
                 "`stem`、最后用 `head`；重建后桶 0 装的是 {b0_params}，即最先注册、最后被前向用到的那几个参数，"
                 "构造时按注册顺序的逆序来猜，猜的是反的。",
       expect={"registration": ["head.weight", "head.bias", "mid.weight", "mid.bias", "stem.weight", "stem.bias"],
               "b0_params": ["head.bias", "head.weight", "mid.bias", "mid.weight"], "first_iteration_buckets": 1})
def _(ctx):
    rev = run_ranks(rank_hooked, ctx)[0]["reversed"]
    return {"registration": rev["registration"], "b0_params": rev["iterations"][1][0]["params"],
            "first_iteration_buckets": len(rev["iterations"][0])}


@claim("ddp.no-sync", question=Q, timeout=150,
       statement="梯度累积用 `no_sync()`：在它里面连续做两次反向，通信钩子被调用 {calls_inside} 次，两个 rank 的梯度"
                 "{same_inside:?却相同|各是各的}；退出后再做一次反向，钩子被调用 {calls_after} 次（每个桶一次），"
                 "同步后的梯度与两个 rank 各自三个微批梯度之和的平均逐位相等（最大差 {max_diff}）。",
       expect={"calls_inside": 0, "same_inside": False, "calls_after": 2, "max_diff": 0.0})
def _(ctx):
    r0, r1 = run_ranks(rank_hooked, ctx)
    ns = r0["nosync"]
    return {"calls_inside": ns["calls_inside"], "calls_after": ns["calls_after"],
            "same_inside": ns["head_grad_inside"] == r1["nosync"]["head_grad_inside"],
            "max_diff": max(ns["max_diff"], r1["nosync"]["max_diff"])}
