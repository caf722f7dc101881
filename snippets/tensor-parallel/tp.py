"""Megatron-style tensor parallelism on two gloo processes on the CPU: a column- then row-parallel MLP,
attention split by heads, a whole pre-LN block with and without sequence parallelism.

Every rank holds the same full weights (the same seed) and computes the unsplit block locally as the
reference; the tensor-parallel version uses only its shard of each weight and the collectives of the
conjugate operators f and g (Megatron-LM's ``copy_to_tensor_model_parallel_region`` and
``reduce_from_tensor_model_parallel_region``) or, with sequence parallelism, all-gather and
reduce-scatter along the sequence. A TorchDispatchMode (CommLog) records each c10d collective with the
element counts of its tensors; saved-tensor hooks count the activation bytes autograd keeps."""

import copy

import torch
import torch.distributed as dist
import torch.nn.functional as F
from snippets._workloads.modes import Mode

from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "tensor-parallel"

# Layout (sequence, batch, hidden) as in Megatron-LM, fp32.
S, B, H, HEADS, FFN = 8, 2, 16, 4, 64
DH = H // HEADS
ELEM = 4  # bytes per fp32 element


# --- the conjugate operators, as autograd functions --------------------------------------------------

class _Copy(torch.autograd.Function):
    """f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g)
        return g


class _Reduce(torch.autograd.Function):
    """g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def _gather_seq(x):
    out = x.new_empty((x.shape[0] * WORLD, *x.shape[1:]))
    dist.all_gather_into_tensor(out, x.contiguous())
    return out


def _scatter_seq(x):
    out = x.new_empty((x.shape[0] // WORLD, *x.shape[1:]))
    dist.reduce_scatter_tensor(out, x.contiguous())
    return out


class _GatherSeq(torch.autograd.Function):
    """Sequence parallel: all-gather along the sequence forward, reduce-scatter backward."""

    @staticmethod
    def forward(ctx, x):
        return _gather_seq(x)

    @staticmethod
    def backward(ctx, g):
        return _scatter_seq(g)


class _ScatterSeq(torch.autograd.Function):
    """Sequence parallel: reduce-scatter along the sequence forward, all-gather backward."""

    @staticmethod
    def forward(ctx, x):
        return _scatter_seq(x)

    @staticmethod
    def backward(ctx, g):
        return _gather_seq(g)


class _GatherLinear(torch.autograd.Function):
    """Megatron-LM's column-parallel linear under sequence parallelism: all-gather the sequence shard,
    multiply; keep only the shard for backward and all-gather it again there for the weight gradient."""

    @staticmethod
    def forward(ctx, x_shard, w):
        ctx.save_for_backward(x_shard, w)
        return _gather_seq(x_shard) @ w.t()

    @staticmethod
    def backward(ctx, g):
        x_shard, w = ctx.saved_tensors
        total = _gather_seq(x_shard)  # the second all-gather
        grad_x = _scatter_seq(g @ w)
        grad_w = g.reshape(-1, g.shape[-1]).t() @ total.reshape(-1, total.shape[-1])
        return grad_x, grad_w


# --- weights: the full ones, and this rank's shards ----------------------------------------------------

def _weights():
    g = torch.Generator().manual_seed(0)

    def rnd(*shape, scale=0.3):
        return (torch.randn(*shape, generator=g) * scale).requires_grad_()

    return {"ln1_w": (1 + 0.1 * torch.randn(H, generator=g)).requires_grad_(),
            "ln1_b": rnd(H, scale=0.1), "ln2_w": (1 + 0.1 * torch.randn(H, generator=g)).requires_grad_(),
            "ln2_b": rnd(H, scale=0.1),
            "wqkv": rnd(3 * H, H), "wo": rnd(H, H),  # fused [Wq; Wk; Wv], each H rows, head after head
            "w1": rnd(FFN, H), "w2": rnd(H, FFN), "b2": rnd(H, scale=0.5)}


def _heads(rank):
    """The rows of Wq, Wk or Wv (the columns of their outputs) this rank holds: whole heads."""
    per = HEADS // WORLD
    return slice(rank * per * DH, (rank + 1) * per * DH)


def _qkv_rows(rank):
    """This rank's rows of the fused [Wq; Wk; Wv]: its heads' rows of each of the three."""
    hs = _heads(rank)
    return torch.cat([torch.arange(hs.start, hs.stop) + i * H for i in range(3)])


def _shards(w, rank):
    """Column-parallel weights split along their output rows, row-parallel ones along their input columns.
    Copies that are leaves of their own, so that each rank's gradients are its own."""
    hs, fs = _heads(rank), slice(rank * FFN // WORLD, (rank + 1) * FFN // WORLD)
    cut = {"wqkv": w["wqkv"][_qkv_rows(rank)], "wo": w["wo"][:, hs], "w1": w["w1"][fs], "w2": w["w2"][:, fs]}
    out = {k: v.detach().clone().requires_grad_() for k, v in cut.items()}
    for k in ("ln1_w", "ln1_b", "ln2_w", "ln2_b", "b2"):  # replicated on every rank
        out[k] = w[k].detach().clone().requires_grad_()
    return out


def _core(qkv, heads):
    """Causal attention of ``heads`` heads from their fused q, k, v: (S, B, heads*DH), no communication."""
    s, b, _ = qkv.shape

    def split(t):
        return t.reshape(s, b, heads, DH).permute(1, 2, 0, 3)  # (B, heads, S, DH)

    q, k, v = qkv.chunk(3, dim=-1)
    o = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    return o.permute(2, 0, 1, 3).reshape(s, b, heads * DH)


def _attend(x, wqkv, heads):
    return _core(x @ wqkv.t(), heads)


def _mlp(x, w1, w2):
    return F.gelu(x @ w1.t()) @ w2.t()


def _block_full(x, w):
    """The unsplit pre-LN block: x + Attn(LN1(x)), then + MLP(LN2(.)) (the MLP's output bias b2)."""
    h1 = x + _attend(F.layer_norm(x, (H,), w["ln1_w"], w["ln1_b"]), w["wqkv"], HEADS) @ w["wo"].t()
    return h1 + _mlp(F.layer_norm(h1, (H,), w["ln2_w"], w["ln2_b"]), w["w1"], w["w2"]) + w["b2"]


def _block_tp(x, w):
    """Tensor parallel: f before each column-parallel projection, g after each row-parallel one."""
    a = _attend(_Copy.apply(F.layer_norm(x, (H,), w["ln1_w"], w["ln1_b"])), w["wqkv"], HEADS // WORLD)
    h1 = x + _Reduce.apply(a @ w["wo"].t())
    m = _mlp(_Copy.apply(F.layer_norm(h1, (H,), w["ln2_w"], w["ln2_b"])), w["w1"], w["w2"])
    return h1 + _Reduce.apply(m) + w["b2"]


def _block_sp(x_shard, w, megatron):
    """Sequence parallel: LayerNorm, residual and bias on this rank's S/WORLD positions; all-gather before
    each column-parallel projection, reduce-scatter after each row-parallel one. ``megatron``: the
    column-parallel projections keep only the shard (and all-gather it again in backward)."""
    def column(t, weight):
        return _GatherLinear.apply(t, weight) if megatron else _GatherSeq.apply(t) @ weight.t()

    a = _core(column(F.layer_norm(x_shard, (H,), w["ln1_w"], w["ln1_b"]), w["wqkv"]), HEADS // WORLD)
    h1 = x_shard + _ScatterSeq.apply(a @ w["wo"].t())
    z = column(F.layer_norm(h1, (H,), w["ln2_w"], w["ln2_b"]), w["w1"])
    return h1 + _ScatterSeq.apply(F.gelu(z) @ w["w2"].t()) + w["b2"]


# --- helpers --------------------------------------------------------------------------------------------

def _summary(ops):
    """Calls and elements per collective; all-gather and reduce-scatter counted at the full (gathered) size."""
    out = {}
    for name, sizes in ops:
        entry = out.setdefault(name, {"calls": 0, "elements": 0})
        entry["calls"] += 1
        entry["elements"] += max(sizes)
    return out


def _diff(a, b):
    return (a - b).abs().max().item()


class _Saved:
    """Bytes of the activations autograd saves for backward (parameters left out), each storage once."""

    def __init__(self, params):
        self.params = {p.data_ptr() for p in params}
        self.seen = {}

    def pack(self, t):
        if t.data_ptr() not in self.params:
            self.seen[(t.data_ptr(), t.numel())] = t.numel() * t.element_size()
        return t

    def __enter__(self):
        self.ctx = torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)
        self.ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self.ctx.__exit__(*exc)

    @property
    def bytes(self):
        return sum(self.seen.values())


def _inputs(rank):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(S, B, H, generator=g)
    grad_out = torch.randn(S, B, H, generator=g)  # the loss is (out * grad_out).sum()
    return x, grad_out


_NOT_COMM = ("wait_tensor", "_wrap_tensor_autograd")  # bookkeeping of functional collectives, not traffic


class _FunctionalLog(Mode):
    """The collectives DTensor issues: c10d ops and functional collectives (``_c10d_functional``)."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace in ("c10d", "_c10d_functional") and func.overloadpacket.__name__ not in _NOT_COMM:
            self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _dtensor_mlp(rank):
    """LayerNorm + MLP through torch.distributed.tensor.parallel, without and with SequenceParallel
    (torch's layout is (batch, sequence, hidden): the sequence is dimension 1)."""
    from torch.distributed.device_mesh import init_device_mesh  # noqa: PLC0415
    from torch.distributed.tensor import Shard  # noqa: PLC0415
    from torch.distributed.tensor.parallel import (  # noqa: PLC0415
        ColwiseParallel, RowwiseParallel, SequenceParallel, parallelize_module)

    mesh = init_device_mesh("cpu", (WORLD,))
    x = torch.randn(B, S, H, generator=torch.Generator().manual_seed(3))
    seq = slice(rank * S // WORLD, (rank + 1) * S // WORLD)
    out = {}
    for name, plan in (("tp", {"1": ColwiseParallel(), "3": RowwiseParallel()}),
                       ("sp", {"0": SequenceParallel(), "1": ColwiseParallel(input_layouts=Shard(1)),
                               "3": RowwiseParallel(output_layouts=Shard(1))})):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.LayerNorm(H), torch.nn.Linear(H, FFN), torch.nn.GELU(),
                                    torch.nn.Linear(FFN, H))
        ref = copy.deepcopy(model)
        parallelize_module(model, mesh, plan)
        f_log, b_log = _FunctionalLog(), _FunctionalLog()
        with f_log:
            y = model(x[:, seq] if name == "sp" else x)
        with b_log:
            y.sum().backward()
        y_ref = ref(x)
        y_ref.sum().backward()
        ln = model[0].weight.grad
        entry = {"fwd": f_log.ops, "bwd": b_log.ops, "out_diff": _diff(y, y_ref[:, seq] if name == "sp" else y_ref),
                 "w1": str(model[1].weight.placements), "w2": str(model[3].weight.placements),
                 "w1_local": list(model[1].weight.to_local().shape), "w2_local": list(model[3].weight.to_local().shape)}
        if name == "sp":
            entry.update(ln_grad=str(ln.placements), ln_local_diff=_diff(ln.to_local(), ref[0].weight.grad),
                         ln_full_diff=_diff(ln.full_tensor(), ref[0].weight.grad))
        out[name] = entry
    return out


# --- the scenario ----------------------------------------------------------------------------------------

def rank_tp(rank, store, outdir):
    init_rank(rank, store)
    out = {}
    w = _weights()
    mine = _shards(w, rank)
    x0, go = _inputs(rank)
    fs = slice(rank * FFN // WORLD, (rank + 1) * FFN // WORLD)

    # 1. The MLP: W1 split by its output columns (rows of the nn.Linear weight), W2 by its input rows.
    x_ref = x0.clone().requires_grad_()
    y_ref = _mlp(x_ref, w["w1"], w["w2"]) + w["b2"]
    (y_ref * go).sum().backward()
    x = x0.clone().requires_grad_()
    fwd, bwd = CommLog(), CommLog()
    with fwd:
        y = _Reduce.apply(_mlp(_Copy.apply(x), mine["w1"], mine["w2"])) + mine["b2"]
    with bwd:
        (y * go).sum().backward()
    out["mlp"] = {"out_diff": _diff(y, y_ref), "xgrad_diff": _diff(x.grad, x_ref.grad),
                  "w1grad_diff": _diff(mine["w1"].grad, w["w1"].grad[fs]),
                  "w2grad_diff": _diff(mine["w2"].grad, w["w2"].grad[:, fs]),
                  "w1_shape": list(mine["w1"].shape), "w2_shape": list(mine["w2"].shape),
                  "fwd": _summary(fwd.ops), "bwd": _summary(bwd.ops), "fwd_ops": fwd.ops, "bwd_ops": bwd.ops}

    # 1b. Without f: the input gradient stays this rank's partial sum.
    x = x0.clone().requires_grad_()
    y = _Reduce.apply(_mlp(x, mine["w1"].detach(), mine["w2"].detach()))
    (y * go).sum().backward()
    summed = x.grad.clone()
    dist.all_reduce(summed)
    out["no_f"] = {"xgrad_diff": _diff(x.grad, x_ref.grad), "summed_diff": _diff(summed, x_ref.grad)}

    # 1c. The other order: W1 split by its input rows (row-parallel first). GeLU of a partial sum.
    with torch.no_grad():
        hs_in = slice(rank * H // WORLD, (rank + 1) * H // WORLD)
        partial = x0[..., hs_in] @ w["w1"][:, hs_in].t()
        total = partial.clone()
        dist.all_reduce(total)
        gelu_of_parts = F.gelu(partial)
        dist.all_reduce(gelu_of_parts)
        out["row_first"] = {"sum_diff": _diff(total, x0 @ w["w1"].t()),
                            "gelu_diff": _diff(gelu_of_parts, F.gelu(x0 @ w["w1"].t()))}

        # 1d. What all-gather does to the two halves: the column-parallel outputs concatenate to X W1ᵀ;
        # the row-parallel partial outputs gathered are two partial sums, not Y.
        z = x0 @ mine["w1"].t()
        zs = [torch.empty_like(z) for _ in range(WORLD)]
        dist.all_gather(zs, z)
        p2 = F.gelu(z) @ mine["w2"].t()
        ps = [torch.empty_like(p2) for _ in range(WORLD)]
        dist.all_gather(ps, p2)
        y_nb = _mlp(x0, w["w1"], w["w2"])
        out["gather"] = {"column_cat_diff": _diff(torch.cat(zs, dim=-1), x0 @ w["w1"].t()),
                         "column_cat_shape": list(torch.cat(zs, dim=-1).shape),
                         "row_gathered_shape": list(torch.stack(ps).shape),
                         "row_part_diff": min(_diff(p, y_nb) for p in ps),
                         "row_sum_diff": _diff(sum(ps), y_nb)}
        # The row-parallel bias: once after the all-reduce, or (wrongly) on every rank before it.
        before = p2 + w["b2"]
        dist.all_reduce(before)
        after = p2.clone()
        dist.all_reduce(after)
        after += w["b2"]
        y_b = y_nb + w["b2"]
        out["bias"] = {"after_diff": _diff(after, y_b), "before_diff": _diff(before, y_b),
                       "extra": _diff(before - y_b, w["b2"].expand_as(y_b) * (WORLD - 1)),
                       "b2_absmax": w["b2"].abs().max().item()}

        # 2. Attention split by heads: local attention, then the row-parallel output projection.
        ln = F.layer_norm(x0, (H,), w["ln1_w"], w["ln1_b"])
        core = CommLog()
        with core:
            a = _attend(ln, mine["wqkv"], HEADS // WORLD)
        proj = CommLog()
        with proj:
            o = _Reduce.apply(a @ mine["wo"].t())
        full_o = _attend(ln, w["wqkv"], HEADS) @ w["wo"].t()
        # A contiguous half of the fused [Wq; Wk; Wv] rows, as a naive split would cut it: whose rows are in it?
        half = torch.arange(rank * 3 * H // WORLD, (rank + 1) * 3 * H // WORLD)
        whole = {name: sum(bool(torch.isin(torch.arange(i * H + h * DH, i * H + (h + 1) * DH), half).all())
                           for h in range(HEADS)) for i, name in enumerate("qkv")}
        out["attn"] = {"core_ops": len(core.ops), "proj": _summary(proj.ops), "out_diff": _diff(o, full_o),
                       "local_heads": HEADS // WORLD, "wqkv_shape": list(mine["wqkv"].shape),
                       "wo_shape": list(mine["wo"].shape), "a_shape": list(a.shape), "naive_heads": whole}

    # 3. The whole block, tensor parallel, against the unsplit block.
    def run_block(fn, x_in, weights, grad):
        x = x_in.clone().requires_grad_()
        f_log, b_log = CommLog(), CommLog()
        with _Saved(weights.values()) as saved, f_log:
            y = fn(x, weights)
        with b_log:
            (y * grad).sum().backward()
        return x, y, f_log, b_log, saved.bytes

    w_ref = _weights()
    xr, yr, _, _, saved_full = run_block(_block_full, x0, w_ref, go)
    mine = _shards(_weights(), rank)
    xt, yt, f_log, b_log, saved_tp = run_block(_block_tp, x0, mine, go)
    ln_grads = torch.cat([mine[k].grad for k in ("ln1_w", "ln1_b", "ln2_w", "ln2_b")])
    ln_ref = torch.cat([w_ref[k].grad for k in ("ln1_w", "ln1_b", "ln2_w", "ln2_b")])
    out["block_tp"] = {"out_diff": _diff(yt, yr), "xgrad_diff": _diff(xt.grad, xr.grad),
                       "ln_grad_diff": _diff(ln_grads, ln_ref), "fwd": _summary(f_log.ops),
                       "bwd": _summary(b_log.ops), "saved": saved_tp, "saved_full": saved_full,
                       "wo_grad_diff": _diff(mine["wo"].grad, w_ref["wo"].grad[:, _heads(rank)])}

    # 4. The same block with sequence parallelism: this rank holds S/WORLD positions outside the
    # tensor-parallel regions. Megatron-LM's column linear (keep the shard), and the plain one.
    seq = slice(rank * S // WORLD, (rank + 1) * S // WORLD)
    for name, megatron in (("sp", True), ("sp_plain", False)):
        mine = _shards(_weights(), rank)
        xs, ys, f_log, b_log, saved_sp = run_block(lambda t, ww, m=megatron: _block_sp(t, ww, m), x0[seq], mine,
                                                   go[seq])
        ln_local = torch.cat([mine[k].grad for k in ("ln1_w", "ln1_b", "ln2_w", "ln2_b")])
        ln_sum = ln_local.clone()
        dist.all_reduce(ln_sum)
        out[name] = {"out_diff": _diff(ys, yr[seq]), "xgrad_diff": _diff(xs.grad, xr.grad[seq]),
                     "x_shape": list(xs.shape), "fwd": _summary(f_log.ops), "bwd": _summary(b_log.ops),
                     "saved": saved_sp, "ln_local_diff": _diff(ln_local, ln_ref), "ln_sum_diff": _diff(ln_sum, ln_ref),
                     "fwd_ops": f_log.ops}

    # 5. PyTorch's own tensor parallelism (DTensor): the same MLP through parallelize_module.
    out["dtensor"] = _dtensor_mlp(rank)

    # 6. An all-reduce is a reduce-scatter followed by an all-gather.
    t = torch.randn(S, B, H, generator=torch.Generator().manual_seed(7 + rank))
    ar = t.clone()
    dist.all_reduce(ar)
    out["rs_ag_diff"] = _diff(_gather_seq(_scatter_seq(t)), ar)
    finish_rank(rank, outdir, out)


# --- claims ---------------------------------------------------------------------------------------------

def _both(ctx):
    return run_ranks(rank_tp, ctx)


def _calls(summary, op):
    return summary.get(op, {}).get("calls", 0)


def _elements(summary, op):
    return summary.get(op, {}).get("elements", 0)


AR, AG, RS = "allreduce_", "_allgather_base_", "_reduce_scatter_base_"
EPS = 1e-5


@claim("tp.mlp-equals-unsplit", kind="measured", question=Q, timeout=150,
       statement="MLP 的 W1（{=64}×{=16}）按输出维切成两份，每个 rank 存 {w1_shape}；W2 按输入维切，每个 rank 存 "
                 "{w2_shape}。GeLU 是逐元素的，各 rank 在自己那一半上直接算，两层之间不通信；row-parallel 的输出求和之后"
                 "与不切的 MLP 一致（最大差 {out_diff:.1e}），输入的梯度也一致（{xgrad_diff:.1e}），各 rank 的 W1、W2 梯度"
                 "正好是完整梯度的那一片（最大差 {w1grad_diff} 和 {w2grad_diff}）。",
       expect={"w1_shape": [32, 16], "w2_shape": [16, 32], "out_diff": {"<": EPS}, "xgrad_diff": {"<": EPS},
               "w1grad_diff": {"<": EPS}, "w2grad_diff": {"<": EPS}})
def _(ctx):
    r0, r1 = _both(ctx)
    m0, m1 = r0["mlp"], r1["mlp"]
    return {"w1_shape": m0["w1_shape"], "w2_shape": m0["w2_shape"],
            **{k: max(m0[k], m1[k]) for k in ("out_diff", "xgrad_diff", "w1grad_diff", "w2grad_diff")}}


@claim("tp.mlp-collectives", question=Q, timeout=150,
       statement="数一下这一个 MLP 的集合通信：前向 {fwd_calls} 次 all-reduce（g，在 row-parallel 之后），{fwd_elements} 个 "
                 "fp32 元素，正好是激活 (s, b, h) = ({=8}, {=2}, {=16}) 的大小，{fwd_bytes:bytes}；反向 {bwd_calls} 次 "
                 "all-reduce（f 的反向，把输入的梯度求和），同样 {bwd_bytes:bytes}。除此之外{others:?还有别的|没有别的}集合通信。",
       expect={"fwd_calls": 1, "fwd_elements": 256, "bwd_calls": 1, "bwd_elements": 256, "fwd_bytes": 1024,
               "bwd_bytes": 1024, "others": False})
def _(ctx):
    m = _both(ctx)[0]["mlp"]
    return {"fwd_calls": _calls(m["fwd"], AR), "fwd_elements": _elements(m["fwd"], AR),
            "bwd_calls": _calls(m["bwd"], AR), "bwd_elements": _elements(m["bwd"], AR),
            "fwd_bytes": _elements(m["fwd"], AR) * ELEM, "bwd_bytes": _elements(m["bwd"], AR) * ELEM,
            "others": set(m["fwd"]) | set(m["bwd"]) != {AR}}


@claim("tp.f-backward-allreduce", kind="measured", question=Q, timeout=150,
       statement="f 在前向什么都不做，但不能省：去掉它，每个 rank 得到的输入梯度只是自己那一半 W1 贡献的部分和，和真梯度差 "
                 "{partial_diff:.2f}；两个 rank 的部分和加起来才对（最大差 {summed_diff:.1e}）。f 的反向就是这次加法。",
       expect={"partial_diff": {">": 0.1}, "summed_diff": {"<": EPS}})
def _(ctx):
    r0, r1 = _both(ctx)
    return {"partial_diff": min(r0["no_f"]["xgrad_diff"], r1["no_f"]["xgrad_diff"]),
            "summed_diff": max(r0["no_f"]["summed_diff"], r1["no_f"]["summed_diff"])}


@claim("tp.column-first", kind="measured", question=Q, timeout=150,
       statement="为什么先列后行：若 W1 按输入维切（行并行在前），每个 rank 得到的是 X·W1ᵀ 的部分和，部分和相加是对的"
                 "（最大差 {sum_diff:.1e}），但 GeLU(部分和) 再相加与 GeLU(和) 差 {gelu_diff:.2f}：GeLU 之前就得先 all-reduce "
                 "一次，一个 MLP 要通信两次。",
       expect={"sum_diff": {"<": EPS}, "gelu_diff": {">": 0.1}})
def _(ctx):
    rf = _both(ctx)[0]["row_first"]
    return {"sum_diff": rf["sum_diff"], "gelu_diff": rf["gelu_diff"]}


@claim("tp.where-all-gather-belongs", kind="measured", question=Q, timeout=150,
       statement="all-gather 属于列并行、而且只在需要完整输出时用（Megatron-LM 的 `gather_output=True`）：两个 rank 的 "
                 "X·W1ᵢᵀ 沿最后一维拼起来就是 X·W1ᵀ（形状 {column_shape}，最大差 {column_diff}）。行并行的两份输出是部分和，"
                 "all-gather 只会把它们摞成 {row_shape}，哪一份都不是 Y（最大差至少 {row_part_diff:.2f}），相加才是"
                 "（{row_sum_diff:.1e}）：行并行要的是 all-reduce。",
       expect={"column_shape": [8, 2, 64], "column_diff": {"<": EPS}, "row_shape": [2, 8, 2, 16],
               "row_part_diff": {">": 0.1}, "row_sum_diff": {"<": EPS}})
def _(ctx):
    g = _both(ctx)[0]["gather"]
    return {"column_shape": g["column_cat_shape"], "column_diff": g["column_cat_diff"],
            "row_shape": g["row_gathered_shape"], "row_part_diff": g["row_part_diff"],
            "row_sum_diff": g["row_sum_diff"]}


@claim("tp.row-bias-once", kind="measured", question=Q, timeout=150,
       statement="行并行的 bias 在 all-reduce 之后加一次（最大差 {after_diff:.1e}）；若每个 rank 在求和前各加一次，结果多出 "
                 "(t−1) 份 bias：与正确结果差 {before_diff:.2f}，正好等于这个 bias 的最大绝对值（{b2_absmax:.2f}）乘 "
                 "t−1 = {tp_minus_1}。",
       expect={"after_diff": {"<": EPS}, "extra_is_bias": True, "tp_minus_1": 1})
def _(ctx):
    b = _both(ctx)[0]["bias"]
    return {"after_diff": b["after_diff"], "before_diff": b["before_diff"], "b2_absmax": b["b2_absmax"],
            "extra_is_bias": b["extra"] < EPS, "tp_minus_1": WORLD - 1}


@claim("tp.qkv-by-heads", question=Q, timeout=150,
       statement="QKV 按头切：{=4} 个头、TP={=2}，每个 rank 拿 {local_heads} 个完整的头，融合的 QKV 权重每个 rank 存 "
                 "{wqkv_shape}（这些头的 q、k、v，每个头每样 {=4} 行）。融合权重若按 [Q; K; V] 排布再直接对半切，"
                 "rank 0 拿到的是 {naive.q} 个头的 Q、{naive.k} 个头的 K、{naive.v} 个头的 V，算不了注意力；所以 Megatron-LM "
                 "把融合权重按头（GQA 时按查询组）交错存放，连续地切就是整头。",
       expect={"local_heads": 2, "wqkv_shape": [24, 16], "naive": {"q": 4, "k": 2, "v": 0}})
def _(ctx):
    a = _both(ctx)[0]["attn"]
    return {"local_heads": a["local_heads"], "wqkv_shape": a["wqkv_shape"], "naive": a["naive_heads"]}


@claim("tp.attention-local", kind="measured", question=Q, timeout=150,
       statement="每个 rank 用自己的头做完整的因果注意力（输出 {a_shape}），这一段{core_comm:?有|没有}任何集合通信"
                 "（{core_ops} 次）；输出投影 W_o 按输入维切（行并行，每个 rank 存 {wo_shape}），之后 {proj_calls} 次 "
                 "all-reduce（{proj_elements} 个元素），结果与不切的多头注意力一致（最大差 {out_diff:.1e}）。",
       expect={"a_shape": [8, 2, 8], "core_ops": 0, "core_comm": False, "wo_shape": [16, 8], "proj_calls": 1,
               "proj_elements": 256, "out_diff": {"<": EPS}})
def _(ctx):
    a = _both(ctx)[0]["attn"]
    return {"a_shape": a["a_shape"], "core_ops": a["core_ops"], "core_comm": a["core_ops"] > 0,
            "wo_shape": a["wo_shape"], "proj_calls": _calls(a["proj"], AR), "proj_elements": _elements(a["proj"], AR),
            "out_diff": a["out_diff"]}


@claim("tp.block-collectives", kind="measured", question=Q, timeout=150,
       statement="一个完整的 pre-LN Transformer 块（注意力 + MLP）：前向 {fwd_calls} 次 all-reduce（注意力和 MLP 各一次 g），"
                 "反向 {bwd_calls} 次（两个 f），每次都是整块激活（共 {fwd_elements} 和 {bwd_elements} 个元素）。输出、输入梯度"
                 "与不切的块一致（最大差 {out_diff:.1e}、{xgrad_diff:.1e}）；LayerNorm 的参数每个 rank 都存一份完整的，"
                 "它的梯度在每个 rank 上已经等于完整梯度（最大差 {ln_grad_diff:.1e}），不需要再通信。",
       expect={"fwd_calls": 2, "bwd_calls": 2, "fwd_elements": 512, "bwd_elements": 512, "out_diff": {"<": EPS},
               "xgrad_diff": {"<": EPS}, "ln_grad_diff": {"<": 1e-4}, "only_allreduce": True})
def _(ctx):
    r0, r1 = _both(ctx)
    b0, b1 = r0["block_tp"], r1["block_tp"]
    return {"fwd_calls": _calls(b0["fwd"], AR), "bwd_calls": _calls(b0["bwd"], AR),
            "fwd_elements": _elements(b0["fwd"], AR), "bwd_elements": _elements(b0["bwd"], AR),
            "out_diff": max(b0["out_diff"], b1["out_diff"]), "xgrad_diff": max(b0["xgrad_diff"], b1["xgrad_diff"]),
            "ln_grad_diff": max(b0["ln_grad_diff"], b1["ln_grad_diff"]),
            "only_allreduce": set(b0["fwd"]) | set(b0["bwd"]) == {AR}}


def _ring_bytes(summary, t=WORLD):
    """Bytes one rank sends in a ring: all-reduce 2(t-1)/t of the tensor, all-gather and reduce-scatter (t-1)/t."""
    factor = {AR: 2 * (t - 1) / t, AG: (t - 1) / t, RS: (t - 1) / t}
    return sum(factor[op] * e["elements"] * ELEM for op, e in summary.items())


@claim("tp.sp-collectives", question=Q, timeout=150,
       statement="加上序列并行，每个 g 变成沿序列的 reduce-scatter，每个 f 变成 all-gather：前向 {fwd_ag} 次 all-gather、"
                 "{fwd_rs} 次 reduce-scatter，每次的完整张量仍是 {elements} 个元素；一次 all-reduce 正好等于 reduce-scatter 再 "
                 "all-gather（最大差 {rs_ag_diff}）。按环形算法每个 rank 发送的字节，前向 TP 是 {tp_fwd:bytes}，SP 是 "
                 "{sp_fwd:bytes}。反向照直做（保存 all-gather 之后的完整输入）是 {plain_bwd_ag} 次 all-gather 加 "
                 "{plain_bwd_rs} 次 reduce-scatter，字节也一样（{plain_bwd:bytes}）；Megatron-LM 的列并行层只保存序列切片、"
                 "在反向再 all-gather 一次来算权重梯度，于是反向是 {bwd_ag} 次 all-gather 加 {bwd_rs} 次 reduce-scatter"
                 "（{sp_bwd:bytes}，TP 是 {tp_bwd:bytes}），多出的两次与输入梯度的矩阵乘重叠。",
       expect={"fwd_ag": 2, "fwd_rs": 2, "elements": 256, "rs_ag_diff": 0.0, "bwd_ag": 4, "bwd_rs": 2,
               "plain_bwd_ag": 2, "plain_bwd_rs": 2, "fwd_equal": True, "plain_bwd_equal": True,
               "outputs_match": True})
def _(ctx):
    r0, r1 = _both(ctx)
    sp, plain, tp = r0["sp"], r0["sp_plain"], r0["block_tp"]
    return {"fwd_ag": _calls(sp["fwd"], AG), "fwd_rs": _calls(sp["fwd"], RS),
            "elements": max(max(sizes) for _, sizes in sp["fwd_ops"]),
            "rs_ag_diff": max(r0["rs_ag_diff"], r1["rs_ag_diff"]),
            "tp_fwd": _ring_bytes(tp["fwd"]), "sp_fwd": _ring_bytes(sp["fwd"]),
            "tp_bwd": _ring_bytes(tp["bwd"]), "sp_bwd": _ring_bytes(sp["bwd"]), "plain_bwd": _ring_bytes(plain["bwd"]),
            "plain_bwd_ag": _calls(plain["bwd"], AG), "plain_bwd_rs": _calls(plain["bwd"], RS),
            "bwd_ag": _calls(sp["bwd"], AG), "bwd_rs": _calls(sp["bwd"], RS),
            "fwd_equal": _ring_bytes(tp["fwd"]) == _ring_bytes(sp["fwd"]),
            "plain_bwd_equal": _ring_bytes(tp["bwd"]) == _ring_bytes(plain["bwd"]),
            "outputs_match": all(r[k]["out_diff"] < EPS and r[k]["xgrad_diff"] < EPS
                                 for r in (r0, r1) for k in ("sp", "sp_plain"))}


@claim("tp.sp-activations", question=Q, timeout=150,
       statement="序列并行省的是激活：LayerNorm、残差和 bias 只在本 rank 的 {=4} 个位置上做（输入形状 {x_shape}）。"
                 "用 saved-tensor hooks 数这个块为反向保存的激活（参数不算）：不切时 {full:bytes}，纯 TP 每个 rank "
                 "{tp:bytes}（LayerNorm 的输入输出、残差在每个 rank 上都是完整的一份），照直做的 SP {plain:bytes}，"
                 "Megatron-LM 式的 SP {sp:bytes}，正好是不切时的 {sp_share:pct}。",
       expect={"x_shape": [4, 2, 16], "full": 16896, "tp": 10624, "plain": 9472, "sp": 8448, "sp_share": 0.5})
def _(ctx):
    r0 = _both(ctx)[0]
    full = r0["block_tp"]["saved_full"]
    return {"x_shape": r0["sp"]["x_shape"], "full": full, "tp": r0["block_tp"]["saved"],
            "plain": r0["sp_plain"]["saved"], "sp": r0["sp"]["saved"], "sp_share": r0["sp"]["saved"] / full}


@claim("tp.sp-layernorm-grads", kind="measured", question=Q, timeout=150,
       statement="代价是 LayerNorm 参数的梯度：每个 rank 只见过一半的位置，它的梯度只是部分和，和完整梯度差 "
                 "{local_diff:.1f}；两个 rank 的加起来才对（最大差 {sum_diff:.1e}）。所以序列并行时这些复制的参数要在 TP 组内"
                 "再 all-reduce 一次（Megatron-LM 的 `_allreduce_non_tensor_model_parallel_grads`），纯 TP 不需要。"
                 "PyTorch 把这件事记在类型里：`SequenceParallel` 下 LayerNorm 权重的梯度是 placement 为 {torch_placement} 的 "
                 "DTensor，本地值同样是部分和，`full_tensor()` 求和之后才等于完整梯度（最大差 {torch_full_diff:.1e}）。",
       expect={"local_diff": {">": 0.1}, "sum_diff": {"<": 1e-4}, "torch_placement": "(Partial(sum),)",
               "torch_local_diff": {">": 0.1}, "torch_full_diff": {"<": 1e-4}})
def _(ctx):
    r0, r1 = _both(ctx)
    d = r0["dtensor"]["sp"]
    return {"local_diff": min(r0["sp"]["ln_local_diff"], r1["sp"]["ln_local_diff"]),
            "sum_diff": max(r0["sp"]["ln_sum_diff"], r1["sp"]["ln_sum_diff"]),
            "torch_placement": d["ln_grad"], "torch_local_diff": d["ln_local_diff"], "torch_full_diff": d["ln_full_diff"]}


@claim("tp.torch-parallelize-module", kind="measured", question=Q, timeout=150,
       statement="PyTorch 自己的张量并行（`parallelize_module`，LayerNorm 后接 MLP）也是同一套：`ColwiseParallel` 把 "
                 "nn.Linear 的权重切成 {w1}（按行，即输出维，本地 {w1_local}），`RowwiseParallel` 切成 {w2}（本地 {w2_local}）；"
                 "一步里前向是 {tp_fwd}，反向是 {tp_bwd}。加上 `SequenceParallel` 后前向是 {sp_fwd}，反向是 {sp_bwd}："
                 "PyTorch 保存收齐之后的输入，反向不再 all-gather 一次。两种情况输出都与不切的模型一致（最大差 "
                 "{out_diff:.1e}）。",
       expect={"w1": "(Shard(dim=0),)", "w2": "(Shard(dim=1),)", "tp_fwd": ["all_reduce"], "tp_bwd": ["all_reduce"],
               "sp_fwd": ["all_gather_into_tensor", "reduce_scatter_tensor"],
               "sp_bwd": ["all_gather_into_tensor", "reduce_scatter_tensor"], "out_diff": {"<": EPS}})
def _(ctx):
    r0, r1 = _both(ctx)
    d = r0["dtensor"]
    return {"w1": d["tp"]["w1"], "w2": d["tp"]["w2"], "w1_local": d["tp"]["w1_local"], "w2_local": d["tp"]["w2_local"],
            "tp_fwd": d["tp"]["fwd"], "tp_bwd": d["tp"]["bwd"], "sp_fwd": d["sp"]["fwd"], "sp_bwd": d["sp"]["bwd"],
            "out_diff": max(r[ "dtensor"][k]["out_diff"] for r in (r0, r1) for k in ("tp", "sp"))}
