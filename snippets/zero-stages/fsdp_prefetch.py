"""ZeRO-3's real peak: FSDP2's ``fully_shard`` on two gloo processes on the CPU, four equal layers, each
its own FSDP unit, counted in bytes of live tensor storage.

FSDP2 frees a unit's full parameters by resizing their storage to zero bytes and allocates them again
by resizing it back, so the counter here (``_Storages``) sums every storage it has seen at its current
size, after every ATen op; ``LiveBytes`` (snippets/_workloads/live_bytes.py) counts a storage once and
would miss both. Each storage is labelled with the op that made it (an ``empty`` with the op that then
filled it), which tells the buffers apart: an all-gather's output, a full gradient, a reduce-scatter's
input. The batch is two rows, so the activations are a small fraction of one layer's parameters.
"""

import gc
import weakref

import torch
from torch import nn
from snippets._workloads.modes import Mode
from torch.utils._pytree import tree_flatten

from snippets._workloads.dist import WORLD, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "zero-stages"
D, LAYERS, BATCH = 256, 4, 2
UNIT = D * D * 4  # one layer's full fp32 weight: the unit every count below is in
_QUIET = ("profiler.", "aten.view", "aten.t.", "aten.detach", "aten.as_strided", "aten._unsafe_view")


class _Storages(Mode):
    """Bytes of the storages seen so far that are still alive, at their current size; the peak and the
    labelled storages alive at it."""

    def __init__(self):
        super().__init__()
        self._refs = {}  # id(storage) -> (weak reference, label)
        self._unlabelled = []  # storages made by `empty`, waiting for the op that fills them
        self.peak, self.at_peak = 0, []

    def add(self, t, label):
        st = t.untyped_storage()
        ref = self._refs.get(id(st))
        if ref is not None and ref[0]() is st:
            return
        key = id(st)
        self._refs[key] = (weakref.ref(st, lambda _r, key=key: self._refs.pop(key, None)), label)
        if label == "empty":
            self._unlabelled.append(key)

    def now(self):
        return sum(st.nbytes() for r, _ in list(self._refs.values()) if (st := r()) is not None)

    def reset_peak(self):
        self.peak, self.at_peak = self.now(), []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = str(func)
        if self._unlabelled and not name.startswith(_QUIET):
            for key in self._unlabelled:
                if key in self._refs:
                    self._refs[key] = (self._refs[key][0], "empty→" + func.__name__.split(".")[0])
            self._unlabelled = []
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.add(t, func.__name__.split(".")[0])
        now = self.now()
        if now > self.peak:
            self.peak = now
            self.at_peak = [(st.nbytes(), label) for r, label in list(self._refs.values())
                            if (st := r()) is not None and st.nbytes() > 0]
        return out


# What made a storage alive at the backward peak -> what it is.
_KINDS = {"empty→all_gather_copy_in": "all_gather_output", "mm": "full_grad",
          "empty→chunk_cat": "reduce_scatter_input", "split": "gloo_reduce_scatter_copy",
          "empty→_reduce_scatter_base_": "grad_shard", "shard": "param_shard"}


def _one_run(mesh, forward_prefetch, backward_prefetch, gen):
    from torch.distributed.fsdp import fully_shard  # noqa: PLC0415

    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(D, D, bias=False) for _ in range(LAYERS)])
    for layer in model:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    if forward_prefetch:  # issue the next unit's all-gather as soon as this unit's has been copied out
        for i in range(LAYERS - 1):
            model[i].set_modules_to_forward_prefetch([model[i + 1]])
    if not backward_prefetch:  # each unit "prefetches" itself, already unsharded: no prefetch at all
        for i in range(LAYERS):
            model[i].set_modules_to_backward_prefetch([model[i]])
    x = torch.randn(BATCH, D, generator=gen)
    model(x).sum().backward()  # a first step: FSDP's lazy initialisation
    for p in model.parameters():
        p.grad = None
    groups = [layer._get_fsdp_state()._fsdp_param_group for layer in model]
    at_layer = []
    shards = [p.to_local() for p in model.parameters()]
    gc.collect()  # what earlier runs left in reference cycles goes now, not at a random point of this one
    gc.disable()
    with _Storages() as live:
        for t in shards:
            live.add(t, "shard")
        sharded = live.now()

        def look(_module, _args):  # runs after FSDP's own pre-forward hook: this unit is unsharded
            full = sum(st.nbytes() == UNIT for r, _ in list(live._refs.values()) if (st := r()) is not None)
            at_layer.append({"full_buffers": full, "unsharded_units": sum(g.is_unsharded for g in groups),
                             "pending_all_gathers": sum(g._all_gather_result is not None for g in groups),
                             "kept_all_gather_output": groups[0].comm_ctx.all_gather_state is not None})

        hooks = [layer.register_forward_pre_hook(look) for layer in model]
        live.reset_peak()
        y = model(x)
        fwd_peak = live.peak - sharded
        after_forward = live.now() - sharded
        live.reset_peak()
        y.sum().backward()
        for h in hooks:
            h.remove()
    gc.enable()
    kinds = dict.fromkeys(sorted(set(_KINDS.values()) - {"param_shard"}), 0)
    for nbytes, label in live.at_peak:
        if nbytes < UNIT // 4:  # activations and their gradients: a few rows
            continue
        kind = _KINDS.get(label, "other")
        kinds[kind] = kinds.get(kind, 0) + nbytes
    return {"at_layer": at_layer, "fwd_peak_units": fwd_peak / UNIT, "after_forward_units": after_forward / UNIT,
            "bwd_peak_units": (live.peak - sharded) / UNIT,
            "bwd_peak_parts": {k: v / UNIT for k, v in kinds.items() if k != "param_shard"},
            "sharded_units": sharded / UNIT}


def rank_prefetch(rank, store, outdir):
    init_rank(rank, store)
    from torch.distributed.device_mesh import init_device_mesh  # noqa: PLC0415

    mesh = init_device_mesh("cpu", (WORLD,))
    gen = torch.Generator().manual_seed(rank)
    finish_rank(rank, outdir, {
        "default": _one_run(mesh, False, True, gen),
        "forward_prefetch": _one_run(mesh, True, True, gen),
        "no_backward_prefetch": _one_run(mesh, False, False, gen),
    })


@claim("fsdp.prefetch-forward-peak", question=Q, timeout=150,
       statement="ZeRO-3 前向时不止一层的完整参数：FSDP2 在两个 gloo 进程上包 {=4} 个同样大小的层（每层一个 FSDP 单元，"
                 "以一层的完整 fp32 参数为 1 份），每层开始计算时，活着的整层大小的缓冲区默认最多 {default.full:.0f} 份："
                 "这一层的完整参数（处于 unsharded 状态的单元 {default.unsharded:.0f} 个），加上它的 all-gather 输出缓冲区"
                 "（FSDP2 留着它，等下一个单元的 copy-in 做完才释放：源码注释说，这是为了 GPU 上下一个单元的 copy-in 能与当前 all-gather 重叠，两者不能共用一块内存）；"
                 "逐层看是 {default_per_layer}，上一层的缓冲区何时释放随运行而变，所以在 2 到 3 份之间。"
                 "用 `set_modules_to_forward_prefetch` 显式预取下一层时最多 {prefetch.full:.0f} 份，多出的是下一层已发起的 "
                 "all-gather（预取中的单元 {prefetch.pending:.0f} 个）。前向结束时整层大小的缓冲区剩 {after_forward:.2f} 份："
                 "参数已切回分片，最多还留着最后一层的一块 all-gather 输出（它何时释放同样不定）。",
       # One run in four on a loaded 2-core machine saw 3 full buffers at a layer by default, and one
       # clean clone 1.03 after the forward: when an all-gather output is freed is not fixed. The
       # bounds say what always held, and the sentence says why.
       expect={"default_full": {"between": [2, 3]}, "default_unsharded": 1.0, "default_pending": 0.0,
               "prefetch_full": {"between": [3, 4]}, "prefetch_pending": 1.0, "after_forward": {"<": 1.1}})
def _(ctx):
    r0 = run_ranks(rank_prefetch, ctx)[0]

    def middle(run):  # the layers before the last, where a next unit exists
        rows = r0[run]["at_layer"][:-1]
        return {"full": float(max(x["full_buffers"] for x in rows)),
                "unsharded": float(max(x["unsharded_units"] for x in rows)),
                "pending": float(max(x["pending_all_gathers"] for x in rows))}

    default, prefetch = middle("default"), middle("forward_prefetch")
    return {"default": default, "prefetch": prefetch,
            "default_full": default["full"], "default_unsharded": default["unsharded"],
            "default_pending": default["pending"], "prefetch_full": prefetch["full"],
            "prefetch_pending": prefetch["pending"],
            "default_per_layer": [x["full_buffers"] for x in r0["default"]["at_layer"]],
            "prefetch_per_layer": [x["full_buffers"] for x in r0["forward_prefetch"]["at_layer"]],
            "kept_all_gather_output": [x["kept_all_gather_output"] for x in r0["default"]["at_layer"]],
            "after_forward": r0["default"]["after_forward_units"], "fwd_peak": r0["default"]["fwd_peak_units"],
            "sharded": r0["default"]["sharded_units"]}


@claim("fsdp.prefetch-backward-peak", question=Q, timeout=150,
       statement="反向的峰值更高：同样这 {=4} 层，默认设置下反向峰值在这台机器上是 {peak:.1f} 份（分片的参数不算在内；峰值里另有激活及其梯度等小块，多少随运行而变，下面这些部分是每次都在的），"
                 "按产生每块存储的算子拆开：反向里下一个要算的单元（前向的前一层）已被默认预取，它的 all-gather 输出 "
                 "{parts.all_gather_output:.0f} 份；正在归约的这一层的完整梯度 {parts.full_grad:.0f} 份；reduce-scatter "
                 "的扁平输入 {parts.reduce_scatter_input:.0f} 份；已归约完的梯度分片共 {parts.grad_shard:.1f} 份；另有 "
                 "{parts.gloo_reduce_scatter_copy:.0f} 份是 gloo 的 reduce-scatter 自己的副本（它先复制输入、做 all-reduce "
                 "再取自己那一片），NCCL 有原生的 reduce-scatter，没有这一份。",
       # With backward prefetch off, which buffers are alive at the peak depends on when gloo's
       # asynchronous reduce-scatter frees its copy: one clean clone saw an all-gather output there,
       # others did not. It is observed (off_parts, off_peak), not stated.
       expect={"parts": {"all_gather_output": 1.0, "full_grad": 1.0, "reduce_scatter_input": 1.0,
                         "gloo_reduce_scatter_copy": 1.0, "grad_shard": 1.5},
               })
def _(ctx):
    r0 = run_ranks(rank_prefetch, ctx)[0]

    def parts(run):
        return {k: round(v, 3) for k, v in r0[run]["bwd_peak_parts"].items()}

    off = parts("no_backward_prefetch")
    return {"peak": r0["default"]["bwd_peak_units"], "parts": parts("default"),
            "off_peak": r0["no_backward_prefetch"]["bwd_peak_units"], "off_parts": off,
            "off_ag": off["all_gather_output"], "forward_prefetch_peak": r0["forward_prefetch"]["bwd_peak_units"]}
