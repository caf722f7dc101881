"""Expert parallelism on two gloo processes: each rank holds half the experts, tokens go to the rank
of their expert with ``all_to_all_single`` (real, uneven split sizes), come back the same way, and the
result equals the same MoE layer run whole on one process. Plus the bytes of that exchange for a
Mixtral-8x7B-shaped layer against NVLink (spec arithmetic)."""

from __future__ import annotations

import torch
import torch.distributed as dist

from snippets._gpu import specs
from snippets._workloads.dist import WORLD, CommLog, finish_rank, init_rank, run_ranks
from verify.claim import claim

Q = "moe-expert-parallel"

E_EP, K_EP, D_EP, T_EP = 8, 2, 16, 64  # experts (half on each rank), top-k, hidden width, tokens per rank
FP32 = 4

# Mixtral-8x7B's published shapes (given): hidden, expert MLP width, experts, top-k; tokens per GPU per step.
MIX_D, MIX_FFN, MIX_E, MIX_K = 4096, 14336, 8, 2
MIX_TOKENS, EP_SIZE, BF16 = 4096, 8, 2
GPU = "H100 SXM"


def _moe_module():
    """This folder's moe.py is loaded by path (a snippet file is not an importable package module)."""
    import importlib.util  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("_moe_ep_layer", Path(__file__).with_name("moe.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rank_ep(rank, store, outdir):
    init_rank(rank, store)
    moe_py = _moe_module()
    torch.manual_seed(0)
    moe = moe_py.MoE()  # D, E, K of moe.py: 16, 8, 2 (the same on both ranks)
    assert (moe_py.D, moe_py.E, moe_py.K) == (D_EP, E_EP, K_EP)
    local = E_EP // WORLD  # experts per rank: rank r owns [r*local, (r+1)*local)
    x = torch.randn(T_EP, D_EP, generator=torch.Generator().manual_seed(10 + rank))
    out = {}
    with torch.no_grad():
        ref, _, _ = moe(x)  # the whole layer on this process
        _, w, idx = moe.route(x)
        # one row per (token, expert) assignment, sorted by the rank that owns the expert
        tok = torch.arange(T_EP).repeat_interleave(K_EP)
        exp = idx.flatten()
        wt = w.flatten()
        order = (exp // local).argsort(stable=True)
        tok, exp, wt = tok[order], exp[order], wt[order]
        send = torch.bincount(exp // local, minlength=WORLD)
        recv = torch.empty_like(send)
        dist.all_to_all_single(recv, send)  # every rank learns how many rows it will receive from each
        send_l, recv_l = send.tolist(), recv.tolist()
        got_exp = torch.empty(sum(recv_l), dtype=exp.dtype)
        dist.all_to_all_single(got_exp, exp, recv_l, send_l)
        got = torch.empty(sum(recv_l), D_EP)
        with CommLog() as log:
            dist.all_to_all_single(got, x[tok], recv_l, send_l)  # dispatch
            y = torch.empty_like(got)
            for e in range(rank * local, (rank + 1) * local):  # only this rank's experts run here
                rows = torch.where(got_exp == e)[0]
                if rows.numel():
                    y[rows] = moe.experts[e](got[rows])
            back = torch.empty(len(tok), D_EP)
            dist.all_to_all_single(back, y, send_l, recv_l)  # combine: the reverse splits
        result = torch.zeros_like(x).index_add_(0, tok, back * wt[:, None])
        # the list form exists on gloo too: one tensor per peer
        parts = [torch.empty(2) for _ in range(WORLD)]
        dist.all_to_all(parts, [torch.full((2,), float(10 * rank + r)) for r in range(WORLD)])
        list_ok = [p[0].item() for p in parts] == [float(10 * r + rank) for r in range(WORLD)]
    other = 1 - rank
    both_remote = ((idx // local) == other).all(1).sum().item()
    out.update(max_diff=(result - ref).abs().max().item(), send=send_l, recv=recv_l, ops=log.ops,
               off_rank_rows=send_l[other], both_remote=both_remote,
               expert_rows_here=sum(recv_l), list_ok=list_ok)
    finish_rank(rank, outdir, out)


@claim("moe.ep-all-to-all", kind="measured", question=Q, timeout=150,
       statement="专家并行：{=2} 个 gloo 进程各放 {=8} 个专家中的 {=4} 个，各有 {=64} 个 token、top-{=2}，"
                 "也就是各 {=128} 次分配。先用一次 `all_to_all_single` 交换每个 rank 要发给对方多少行，rank 0 发给 "
                 "rank 0、1 的是 {send0}，rank 1 的是 {send1}，两边不相等；再按这些不等长的 split 发 token（dispatch），"
                 "本地专家算完按相反的 split 发回（combine），加权求和后与单进程跑整个 MoE 层的结果最大差 {max_diff:.2g}。"
                 "两个 rank 各自记下的集合通信都是 {ops}；torch {=2.13} 的 gloo 上，按张量列表交换的 `all_to_all` "
                 "也{list_ok:?能用|不能用}。",
       expect={"max_diff": {"<": 1e-5}, "ops": ["alltoall_base_", "alltoall_base_"], "list_ok": True})
def _(ctx):
    r0, r1 = run_ranks(rank_ep, ctx)
    ops0, ops1 = [o[0] for o in r0["ops"]], [o[0] for o in r1["ops"]]
    assert ops0 == ops1
    return {"send0": r0["send"], "send1": r1["send"], "max_diff": max(r0["max_diff"], r1["max_diff"]), "ops": ops0,
            "list_ok": r0["list_ok"] and r1["list_ok"]}


@claim("moe.ep-bytes", question=Q, timeout=150,
       statement="发出去的字节 = 路由到别的 rank 的分配个数乘以 hidden、再乘以每元素字节：rank 0 有 {off0} 次分配的专家在 rank 1，"
                 "dispatch 发出 {bytes0:,d} 字节（fp32、hidden {=16}），CommLog 记到的张量大小与此{logged_ok:?一致|不一致}；"
                 "combine 再发回同样多。这个实现按（token, 专家）对发送，一个 token 的两个专家都在对面时要发两份，"
                 "rank 0 有 {both0} 个这样的 token。",
       expect={"logged_ok": True})
def _(ctx):
    r0, r1 = run_ranks(rank_ep, ctx)
    off0 = r0["off_rank_rows"]
    # the dispatch's input holds every row this rank routes, its own included; the off-rank part is send[1]
    logged_in = r0["ops"][0][1][1]  # alltoall_base_(output, input): input numel
    ok = logged_in == sum(r0["send"]) * D_EP and r1["ops"][0][1][0] == sum(r1["recv"]) * D_EP \
        and r1["recv"][0] == off0
    return {"off0": off0, "bytes0": off0 * D_EP * FP32, "logged_ok": ok, "both0": r0["both_remote"]}


@claim("moe.ep-nvlink-budget", question=Q,
       statement="按 Mixtral-8x7B 的形状（hidden {=4096}、专家 MLP {=14336}、{=8} 个专家、top-{=2}），专家并行 {=8} 路、"
                 "每卡每步 {=4096} 个 token、bf16，路由均匀时每层 dispatch 每卡发出 {dispatch_mb:.1f} MB（"
                 "{=7/8} 的分配在别的卡上），combine 再发回同样多；按 H100 SXM 的 NVLink 单向 {nvlink_gb_s:.0f} GB/s，"
                 "两次合计至少 {comm_ms:.2f} ms，而这一层的专家 GEMM 按 bf16 稠密峰值要 {compute_ms:.2f} ms。"
                 "按（token, 专家）对发送时，字节数只与 token 个数、k 和 hidden 的乘积有关，与专家总数无关。",
       expect={"dispatch_bytes": 4096 * 2 * 4096 * 2 * 7 // 8, "comm_over_compute": {"<": 0.5}})
def _(ctx):
    nvlink = specs.get(ctx, GPU, "nvlink_bytes_per_s") / 2  # the datasheet's figure counts both directions
    peak = specs.get(ctx, GPU, "bf16_dense_flops")
    dispatch = MIX_TOKENS * MIX_K * MIX_D * BF16 * (EP_SIZE - 1) // EP_SIZE
    flops = MIX_TOKENS * MIX_K * 3 * 2 * MIX_D * MIX_FFN  # three matmuls of a SwiGLU expert per assignment
    comm_s, compute_s = 2 * dispatch / nvlink, flops / peak
    return {"dispatch_bytes": dispatch, "dispatch_mb": dispatch / 1e6, "nvlink_gb_s": nvlink / 1e9,
            "comm_ms": comm_s * 1e3, "compute_ms": compute_s * 1e3, "comm_over_compute": comm_s / compute_s}
