"""Who accepts a stride-0 tensor, who copies it silently, who rejects it, and who gets it wrong."""

import json
import os
import subprocess
import sys

import torch

from verify.claim import claim

Q = "repeat-vs-expand"


def _expanded(device="cpu"):
    return torch.tensor([[1, 2, 3]], device=device).expand(4, 3)  # (4, 3), stride (0, 1)


@claim("expand.flatten-view-or-copy", question=Q,
       statement="把 expand 结果摊平成一维：stride {stride} 的两维合并不成一维，`y.view(12)` "
                 "{view_raises:?抛出|不抛出} RuntimeError；`y.reshape(12)` 不报错，是因为它悄悄拷贝了一份：数据指针{reshape_copies:?变了|没变}，存储从 "
                 "{before_bytes:bytes}变成 {after_bytes:bytes}。",
       expect={"stride": [0, 1], "view_raises": True, "reshape_copies": True, "before_bytes": 24, "after_bytes": 96})
def _(ctx):
    y = _expanded(ctx.device)
    try:
        y.view(12)
        view_raises = False
    except RuntimeError as exc:
        ctx.observe(view_message=str(exc)[:160])
        view_raises = True
    r = y.reshape(12)
    return {"stride": y.stride(), "view_raises": view_raises, "reshape_copies": r.data_ptr() != y.data_ptr(),
            "before_bytes": y.untyped_storage().nbytes(), "after_bytes": r.untyped_storage().nbytes()}


@claim("expand.numpy-shares-stride0", question=Q,
       statement="`y.numpy()` 既不报错也不拷贝：NumPy 也用 stride 描述数组，得到的数组 strides 是 {np_strides}（以字节计），"
                 "{c_contiguous:?标着|没有标} C 连续，和 `y` {shares:?共用内存|不共用内存}；它却{writeable:?是可写的|是只读的}，"
                 "`a[0, 0] = 9` 一写，`x` 那一行就变成 {x_after}，四行一起变。",
       expect={"np_strides": [0, 8], "c_contiguous": False, "shares": True, "writeable": True, "x_after": [9, 2, 3],
               "rows_after": [[9, 2, 3]] * 4})
def _(ctx):
    x = torch.tensor([[1, 2, 3]])  # numpy() needs a CPU tensor
    y = x.expand(4, 3)
    a = y.numpy()
    out = {"np_strides": list(a.strides), "c_contiguous": bool(a.flags["C_CONTIGUOUS"]),
           "shares": a.ctypes.data == y.data_ptr(), "writeable": bool(a.flags["WRITEABLE"])}
    a[0, 0] = 9
    out.update(x_after=x[0].tolist(), rows_after=a.tolist())
    return out


@claim("expand.mm-clones-expanded", question=Q,
       statement="矩阵乘法在内部替你拷贝：BLAS 的 gemm 要求矩阵有一维 stride 为 1，另一维的 stride（leading dimension）至少是一行的长度，"
                 "stride 为 0 的 expand 结果两条都不满足，CPU 上的 `torch.mm(a, b)`（`a` 是 `expand` 出的 {a_shape}）"
                 "于是先调用 {clones_expanded} 次 `aten::clone`，分配 {clone_bytes:bytes}，正好是把 `a` 物化的大小；"
                 "传入连续的 `a` 时 clone 次数为 {clones_contiguous}。",
       expect={"a_shape": [64, 128], "clones_expanded": 1, "clone_bytes": 64 * 128 * 4, "clones_contiguous": 0,
               "same_result": True})
def _(ctx):
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    # CPU on purpose: this is addmm_impl_cpu_ choosing BLAS operands (aten/src/ATen/native/LinearAlgebra.cpp).
    a = torch.randn(1, 128).expand(64, 128)
    a_dense = a.contiguous()
    b = torch.randn(128, 32)

    def clones(m):
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            out = torch.mm(m, b)
        found = [e for e in prof.events() if e.name == "aten::clone"]
        return len(found), sum(e.cpu_memory_usage for e in found), out

    n_exp, clone_bytes, out_exp = clones(a)
    n_dense, _, out_dense = clones(a_dense)
    return {"a_shape": list(a.shape), "a_stride": a.stride(), "clones_expanded": n_exp, "clone_bytes": clone_bytes,
            "clones_contiguous": n_dense, "same_result": torch.allclose(out_exp, out_dense)}


# Rank r of a two-process gloo group, as a child process: it all-reduces an expanded view of the
# first 3 of 16 floats, and then the same with a contiguous copy, and prints what its storage became.
_GLOO_RANK = r"""
import json, sys
import torch
import torch.distributed as dist

store, rank = sys.argv[1], int(sys.argv[2])
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=2)
big = torch.arange(16.0) + 100 * rank          # one storage of 16 floats
y = big[:3].view(1, 3).expand(4, 3)             # 12 logical elements over the first 3 of them
before = big.tolist()
dist.all_reduce(y)
after = big.tolist()
big2 = torch.arange(16.0) + 100 * rank
c = big2[:3].view(1, 3).expand(4, 3).contiguous()
dist.all_reduce(c)
big2[:3].copy_(c[0])                            # write back into the 3 elements the view really has
print(json.dumps({"rank": rank, "numel": y.numel(), "before": before, "after": after, "fixed": big2.tolist()}))
dist.destroy_process_group()
"""


@claim("expand.gloo-allreduce-overwrites", question=Q, timeout=120,
       statement="集合通信不一定替你检查。两个进程的 gloo 组里（CPU），对 `y = big[:3].view(1, 3).expand(4, 3)` 做 "
                 "`dist.all_reduce(y)`，不报错，`y` 每行也是正确的和 {y_row}；但 gloo 按 `data_ptr()` 和 `numel()` 把它当成 "
                 "{numel} 个连续元素来归约，`big` 里 `y` 之外的 {clobbered} 个元素也被改写了：rank 0 上 `big[3:12]` 从 "
                 "{before_tail} 变成 {after_tail}。先 `contiguous()` 再归约、写回那一行，被改写的元素数为 {fixed_clobbered}。",
       expect={"y_row": [100.0, 102.0, 104.0], "numel": 12, "clobbered": 9,
               "before_tail": [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
               "after_tail": [106.0, 108.0, 110.0, 112.0, 114.0, 116.0, 118.0, 120.0, 122.0],
               "fixed_clobbered": 0, "fixed_row": [100.0, 102.0, 104.0], "ranks_agree": True})
def _(ctx):
    store = ctx.path("gloo-store")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", _GLOO_RANK, str(store), str(rank)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=ctx.workdir) for rank in (0, 1)]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=90)
            if p.returncode != 0:
                raise RuntimeError(f"gloo rank exited with {p.returncode}: {err[-500:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    r0 = next(r for r in results if r["rank"] == 0)
    changed = [i for i in range(3, 16) if r0["after"][i] != r0["before"][i]]
    fixed_changed = [i for i in range(3, 16) if r0["fixed"][i] != r0["before"][i]]
    return {"y_row": r0["after"][:3], "numel": r0["numel"], "clobbered": len(changed),
            "before_tail": r0["before"][3:12], "after_tail": r0["after"][3:12],
            "fixed_clobbered": len(fixed_changed), "fixed_row": r0["fixed"][:3],
            "ranks_agree": results[0]["after"][:12] == results[1]["after"][:12]}


@claim("expand.nccl-rejects-expanded", question=Q, needs=["cuda"], timeout=120,
       statement="NCCL 则在入口拒绝：单卡、`world_size=1` 的 nccl 组里，对 GPU 上的 expand 结果做 `all_reduce` "
                 "{raised:?抛出|不抛出}异常（{error_type}: “Tensors must be contiguous”），`contiguous()` 之后同一个调用"
                 "{contiguous_ok:?成功、结果正确|仍然失败}。",
       expect={"raised": True, "message": {"contains": "Tensors must be contiguous"}, "contiguous_ok": True})
def _(ctx):
    """单卡 world_size=1 的 nccl 组里，对 GPU 上的 expand 结果做 all_reduce 是否被拒绝，contiguous() 之后是否成功。"""
    import datetime  # noqa: PLC0415

    import torch.distributed as dist  # noqa: PLC0415

    # One process, one GPU, no network. NCCL's bootstrap still opens a socket to itself: bind it to
    # loopback, which every machine has, and skip the InfiniBand probe (no fabric here). The check
    # that rejects the expanded tensor runs before NCCL is touched (ProcessGroupNCCL::allreduce calls
    # check_gpu_single_tensor first); only the contiguous call creates the communicator. The group's
    # timeout (watchdog, store waits) is 60 s rather than 10 minutes, inside this claim's own 120 s.
    saved = {k: os.environ.get(k) for k in ("NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE")}
    os.environ.update(NCCL_SOCKET_IFNAME="lo", NCCL_IB_DISABLE="1")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"file://{ctx.path('nccl-store')}", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=60))
    try:
        y = torch.ones(1, 3, device="cuda").expand(4, 3)
        try:
            dist.all_reduce(y)
            raised, error_type, message = False, "", ""
        except (ValueError, RuntimeError) as exc:
            raised, error_type, message = True, type(exc).__name__, str(exc)[:200]
        c = y.contiguous()
        dist.all_reduce(c)
        torch.cuda.synchronize()
        ok = c.tolist() == [[1.0, 1.0, 1.0]] * 4
    finally:
        dist.destroy_process_group()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"raised": raised, "error_type": error_type, "message": message, "contiguous_ok": ok}
