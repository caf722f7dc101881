"""Which gloo collectives get a strided (non-contiguous, non-overlapping) tensor wrong."""

import json
import os
import subprocess
import sys

import torch

from verify.claim import claim

Q = "repeat-vs-expand"
COLLECTIVES = ("all_reduce", "broadcast", "reduce", "scatter", "all_gather", "gather")

# Rank r of a two-process gloo group, as a child process. For each collective it passes column 0 of
# a contiguous (3, 2) tensor (3 elements at stride 2, no overlap) as every input and output tensor
# and, separately, contiguous tensors with the same values, and prints both results. Only the ranks
# that receive a result are compared: the root of reduce and gather, every rank of the others.
_RANK = r"""
import json, sys
import torch
import torch.distributed as dist

store, rank = sys.argv[1], int(sys.argv[2])
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=2)


def column(v):
    return (torch.arange(6.0).view(3, 2) + 10 * v)[:, 0]   # (3,), stride (2,)


def run(name, dense):
    fix = (lambda t: t.contiguous()) if dense else (lambda t: t)
    x = fix(column(rank + 1))
    if name == "all_reduce":
        dist.all_reduce(x)
        return x.tolist()
    if name == "broadcast":
        dist.broadcast(x, src=0)
        return x.tolist()
    if name == "reduce":
        dist.reduce(x, dst=0)
        return x.tolist() if rank == 0 else None
    if name == "scatter":
        out = fix(torch.zeros(6).view(3, 2)[:, 0])
        dist.scatter(out, [fix(column(10 + i)) for i in range(2)] if rank == 0 else None, src=0)
        if not dense:   # the whole storage behind the strided output, all 6 elements
            storage[name] = out.as_strided((6,), (1,), 0).tolist()
        return out.tolist()
    if name == "all_gather":
        outs = [fix(torch.zeros(6).view(3, 2)[:, 0]) for _ in range(2)]
        dist.all_gather(outs, x)
        return [o.tolist() for o in outs]
    if name == "gather":
        outs = [fix(torch.zeros(6).view(3, 2)[:, 0]) for _ in range(2)] if rank == 0 else None
        dist.gather(x, outs, dst=0)
        return [o.tolist() for o in outs] if rank == 0 else None
    raise ValueError(name)


storage = {}
out = {"rank": rank, "strided": {}, "dense": {}, "storage": storage}
for name in sys.argv[3].split(","):
    out["strided"][name] = run(name, False)
    out["dense"][name] = run(name, True)
print(json.dumps(out))
dist.destroy_process_group()
"""


@claim("expand.gloo-collectives-strided", question=Q, timeout=120,
       statement="出错的不只 `all_reduce`，也不只 stride 0。同样两个进程的 gloo 组里（CPU，torch {torch}），把一列 "
                 "`m[:, 0]`（`m` 是 (3, 2) 的连续张量，这一列 stride 为 2、互不重叠）当作各个集合通信的输入和输出，"
                 "和全用连续张量的结果逐个比：{wrong} 的结果错了，{right} 是对的。比如 `scatter` 之后 rank 1 的那一列是 "
                 "{scatter_got}，应为 {scatter_want}；它背后整块存储是 {scatter_storage}：root 按存储开头连续读了 3 个数，"
                 "rank 1 又把它们连续写进自己存储的开头。",
       expect={"wrong": ["all_reduce", "broadcast", "reduce", "scatter"], "right": ["all_gather", "gather"],
               "scatter_got": [110.0, 112.0, 0.0], "scatter_want": [110.0, 112.0, 114.0],
               "scatter_storage": [110.0, 111.0, 112.0, 0.0, 0.0, 0.0]})
def _(ctx):
    store = ctx.path("gloo-store")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", _RANK, str(store), str(rank), ",".join(COLLECTIVES)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ctx.workdir)
             for rank in (0, 1)]
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
    by_rank = {r["rank"]: r for r in results}
    wrong = [name for name in COLLECTIVES
             if any(r["strided"][name] != r["dense"][name] for r in results if r["dense"][name] is not None)]
    return {"torch": torch.__version__.split("+")[0], "wrong": wrong,
            "right": [name for name in COLLECTIVES if name not in wrong],
            "scatter_got": by_rank[1]["strided"]["scatter"], "scatter_want": by_rank[1]["dense"]["scatter"],
            "scatter_storage": by_rank[1]["storage"]["scatter"],
            "results": {r: by_rank[r]["strided"] for r in (0, 1)}, "dense": {r: by_rank[r]["dense"] for r in (0, 1)}}
