"""DataParallel, for contrast: one process that copies the model onto the GPUs at every forward.

Its four GPU steps need CUDA devices; on the CPU the real ``DataParallel.forward`` runs with CPU
stand-ins for them, which records what it calls and when."""

import copy
import inspect

import torch
from torch import nn

from verify.claim import claim

Q = "ddp-bucketing"


@claim("dp.forward-per-call", question=Q,
       statement="`DataParallel.forward` 每调用一次，就依次执行 {order}：把两台设备的 `device_ids` 和四个 GPU 步骤换成 "
                 "CPU 上的替身，运行真的 `forward` 两次，`replicate` 被调用 {n_replicate} 次、每次复制出 "
                 "{replicas_per_call} 个模型副本，输出在 `gather` 里拼回一处（形状 {out_shape}）。已安装的 torch 里，"
                 "`parallel_apply` 为每个副本{uses_threads:?起一个|不起} `threading.Thread`，`replicate` 所用的 "
                 "`Broadcast` 在反向里{reduces_back:?调用|不调用} `ReduceAddCoalesced`，把各副本的梯度加回 `device_ids[0]` 上的原模型。",
       expect={"order": ["scatter", "replicate", "parallel_apply", "gather"], "n_replicate": 2,
               "replicas_per_call": 2, "out_shape": [8, 4], "uses_threads": True, "reduces_back": True,
               "same_as_module": True})
def _(ctx):
    from torch.nn.parallel import _functions, parallel_apply  # noqa: PLC0415  (parallel_apply: the function)

    model = nn.Linear(16, 4)
    dp = nn.DataParallel(model)
    model.to("cpu")  # on a GPU machine the constructor moved it to cuda:0
    dp.device_ids, dp.output_device, dp.src_device_obj, dp.dim = [0, 1], 0, torch.device("cpu"), 0
    calls = []

    def scatter(inputs, kwargs, device_ids):
        calls.append("scatter")
        chunks = inputs[0].chunk(len(device_ids))
        return tuple((c,) for c in chunks), tuple({} for _ in chunks)

    def replicate(module, device_ids):
        calls.append("replicate")
        return [copy.deepcopy(module) for _ in device_ids]

    def apply(replicas, inputs, kwargs):
        calls.append("parallel_apply")
        return [m(*i, **k) for m, i, k in zip(replicas, inputs, kwargs)]

    def gather(outputs, output_device):
        calls.append("gather")
        return torch.cat(outputs)

    n_replicas = []
    dp.scatter, dp.parallel_apply, dp.gather = scatter, apply, gather
    dp.replicate = lambda module, ids: (n_replicas.append(len(ids)), replicate(module, ids))[1]
    x = torch.randn(8, 16)
    out = dp(x)
    dp(x)
    return {"order": calls[:4], "n_replicate": calls.count("replicate"), "replicas_per_call": n_replicas[0],
            "out_shape": list(out.shape), "same_as_module": torch.allclose(out, model(x)),
            "uses_threads": "threading.Thread" in inspect.getsource(parallel_apply),
            "reduces_back": "ReduceAddCoalesced.apply" in inspect.getsource(_functions.Broadcast.backward)}


@claim("dp.single-gpu-no-copies", question=Q, needs=["cuda"],
       statement="只有一张卡时 `DataParallel(model, device_ids=[0])` 不复制模型：forward 里 `replicate` 被调用 "
                 "{n_replicate} 次，输出和直接调用 `model` {same:?相同|不同}，它只是把模型搬到了 {device}。",
       expect={"n_replicate": 0, "same": True, "device": "cuda:0"})
def _(ctx):
    """一张 GPU 上 DataParallel(device_ids=[0]) 包一个 Linear(16, 4)：forward 里 replicate 被调用的次数，输出是否与直接调用相同。"""
    model = nn.Linear(16, 4)
    dp = nn.DataParallel(model, device_ids=[0])
    count = []
    real = dp.replicate
    dp.replicate = lambda module, ids: (count.append(1), real(module, ids))[1]
    x = torch.randn(8, 16, device="cuda")
    out = dp(x)
    return {"n_replicate": len(count), "same": torch.allclose(out, model(x)),
            "device": str(next(model.parameters()).device)}
