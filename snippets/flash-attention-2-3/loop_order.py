"""FlashAttention-1 and FlashAttention-2 forward loops, written with torch ops over a counted "HBM".

Both follow their paper's Algorithm 1 (Dao et al. 2022; Dao 2023): FA1 walks K/V blocks in the outer loop
and, for each, every Q block, reading Q_i, O_i, l_i, m_i from HBM and writing O_i, l_i, m_i back; FA2 walks Q
blocks outside, keeps O_i, l_i, m_i on chip across the K/V loop and writes O_i and the logsumexp once. The
``Hbm`` object counts every element moved between it and the "chip". Arithmetic is counted twice, by torch's
``FlopCounterMode`` and by a dispatch mode of our own that reads each matmul's shapes, and the non-matmul
arithmetic by the same dispatch mode. Nothing here is a GPU: it counts what each loop order moves and computes.
"""

from __future__ import annotations

import collections

import torch
from snippets._workloads.modes import Mode
from torch.utils.flop_counter import FlopCounterMode

from verify.claim import claim

Q = "flash-attention-2-3"
HEADS, N, D, BLOCK = 2, 512, 32, 64
MATMULS = {"mm", "bmm", "addmm", "matmul"}
ARITH = {"exp", "mul", "div", "add", "sub", "maximum", "amax", "sum", "log", "reciprocal"}


class Hbm:
    """Tensors "in HBM": every read and write counts its elements, per tensor name."""

    def __init__(self, **tensors):
        self.t = tensors
        self.reads = collections.Counter()
        self.writes = collections.Counter()

    def read(self, name, rows):
        x = self.t[name][rows]
        self.reads[name] += x.numel()
        return x.clone()

    def write(self, name, rows, value):
        self.t[name][rows] = value
        self.writes[name] += value.numel()


def blocks(n, size):
    return [slice(s, min(s + size, n)) for s in range(0, n, size)]


def fa1(hbm, n, d, br, bc):
    """FlashAttention (2022) Algorithm 1: K/V blocks outside; O, l, m go back to HBM after every block."""
    scale = d ** -0.5
    hbm.write("O", slice(None), torch.zeros(n, d, dtype=torch.float64))
    hbm.write("l", slice(None), torch.zeros(n, dtype=torch.float64))
    hbm.write("m", slice(None), torch.full((n,), float("-inf"), dtype=torch.float64))
    for kv in blocks(n, bc):
        kj, vj = hbm.read("K", kv), hbm.read("V", kv)
        for qb in blocks(n, br):
            qi, oi, li, mi = (hbm.read(x, qb) for x in ("Q", "O", "l", "m"))
            s = qi @ kj.T * scale                      # (br, bc)
            mt = s.amax(-1)
            p = torch.exp(s - mt[:, None])
            lt = p.sum(-1)
            m_new = torch.maximum(mi, mt)
            old, new = torch.exp(mi - m_new), torch.exp(mt - m_new)
            l_new = old * li + new * lt
            oi = ((li * old)[:, None] * oi + new[:, None] * (p @ vj)) / l_new[:, None]  # normalised every step
            hbm.write("O", qb, oi)
            hbm.write("l", qb, l_new)
            hbm.write("m", qb, m_new)


def fa2(hbm, n, d, br, bc):
    """FlashAttention-2 Algorithm 1: Q blocks outside; O, l, m stay on chip; O and the logsumexp are written once."""
    scale = d ** -0.5
    for qb in blocks(n, br):
        qi = hbm.read("Q", qb)
        o = torch.zeros(qi.shape[0], d, dtype=torch.float64)
        l_run = torch.zeros(qi.shape[0], dtype=torch.float64)
        m = torch.full((qi.shape[0],), float("-inf"), dtype=torch.float64)
        for kv in blocks(n, bc):
            kj, vj = hbm.read("K", kv), hbm.read("V", kv)
            s = qi @ kj.T * scale
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new[:, None])
            alpha = torch.exp(m - m_new)
            l_run = alpha * l_run + p.sum(-1)
            o = alpha[:, None] * o + p @ vj               # unnormalised until the end
            m = m_new
        hbm.write("O", qb, o / l_run[:, None])
        hbm.write("L", qb, m + torch.log(l_run))


def inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(N, D, generator=g, dtype=torch.float64) for _ in range(3)) for _ in range(HEADS)]


def run(algo, q, k, v):
    hbm = Hbm(Q=q, K=k, V=v, O=torch.empty(N, D, dtype=torch.float64), l=torch.empty(N, dtype=torch.float64),
              m=torch.empty(N, dtype=torch.float64), L=torch.empty(N, dtype=torch.float64))
    algo(hbm, N, D, BLOCK, BLOCK)
    return hbm


class Counting(Mode):
    """Counts matmul FLOPs from each matmul's shapes (2·m·n·k), and the elements each other arithmetic op handles."""

    def __init__(self):
        super().__init__()
        self.matmul_flops = 0
        self.elementwise = collections.Counter()
        self.on_output = 0  # element operations (mul, div, add) whose result is an output block (BLOCK x D)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if name in MATMULS:
            a, b = tensors[-2], tensors[-1]
            self.matmul_flops += 2 * a.shape[-2] * a.shape[-1] * b.shape[-1] * (a.numel() // (a.shape[-2] * a.shape[-1]))
        elif name.rstrip("_") in ARITH:
            self.elementwise[name.rstrip("_")] += max([t.numel() for t in tensors] + [out.numel()])
            if name.rstrip("_") in {"mul", "div", "add"} and tuple(out.shape) == (BLOCK, D):
                self.on_output += out.numel()
        return out


@claim(
    "fa23.loop-order-traffic", kind="measured",
    question=Q,
    statement="把两版的前向循环照各自论文的 Algorithm 1 写出来，让每次 HBM 读写都计数（{heads} 个头，N={n}，d={d}，"
              "B_r = B_c = {block}，即 {t} 个 Q 块、{t} 个 K/V 块）：第一版外层扫 K/V，每扫一个 K/V 块就把全部 Q、O、l、m 读进来、"
              "O、l、m 写回去，O 被读 {fa1.reads.O:,} 个元素、写 {fa1.writes.O:,} 个；第二版外层扫 Q，O 只写 {fa2.writes.O:,} 个、"
              "一次也不读，代价是 K、V 各被读 {fa2.reads.K:,} 个（第一版 {fa1.reads.K:,} 个）；反过来，第一版的 Q 按 K/V 块数重复读，"
              "被读 {fa1.reads.Q:,} 个（第二版 {fa2.reads.Q:,} 个）。只算读，第一版 {fa1.read_total:,} 个、第二版 {fa2.read_total:,} 个；"
              "合计第一版搬 {fa1.total:,} 个元素，"
              "第二版 {fa2.total:,} 个，是它的 {ratio:.2f} 倍；两版输出与直接算的 float64 attention 最大差 {max_err:.1e}。",
    expect={"fa1_read_O": 262144, "fa1_read_K": 32768, "fa1_read_Q": 262144, "fa1_write_O": 294912, "fa1_total": 919552,
            "fa2_read_O": 0, "fa2_read_K": 262144, "fa2_read_Q": 32768, "fa2_write_O": 32768, "fa2_total": 590848,
            "fa1_read_total": 606208, "fa2_read_total": 557056,
            "ratio": {"approx": [1.5563, 1e-3]}, "max_err": {"<": 1e-12}},
)
def _(ctx):
    """Elements moved per loop order, summed over the heads (float64, on the CPU).

    范围：计数模型 N=512、d=32，不计 L2 命中
    """
    out, err = {}, 0.0
    for name, algo in (("fa1", fa1), ("fa2", fa2)):
        reads, writes = collections.Counter(), collections.Counter()
        for q, k, v in inputs():
            hbm = run(algo, q, k, v)
            reads.update(hbm.reads)
            writes.update(hbm.writes)
            ref = torch.softmax(q @ k.T * D ** -0.5, -1) @ v
            err = max(err, (hbm.t["O"] - ref).abs().max().item())
        out[name] = {"reads": {x: reads[x] for x in ("Q", "K", "V", "O", "l", "m")},
                     "writes": {x: writes[x] for x in ("O", "l", "m", "L")},
                     "read_total": sum(reads.values()), "total": sum(reads.values()) + sum(writes.values())}
    flat = {f"{a}_{kind}_{x}": out[a][kind + "s"][x] for a in out for kind in ("read", "write") for x in out[a][kind + "s"]}
    flat |= {f"{a}_{k}": out[a][k] for a in out for k in ("total", "read_total")}  # expectations name top-level keys
    return {**out, **flat, "heads": HEADS, "n": N, "d": D, "block": BLOCK, "t": N // BLOCK,
            "ratio": out["fa1"]["total"] / out["fa2"]["total"], "max_err": err}


@claim(
    "fa23.same-matmul-flops",
    question=Q,
    statement="两种循环顺序的矩阵乘 FLOP 一样多：torch 的 `FlopCounterMode` 数出第一版 {fa1_torch:,}、第二版 {fa2_torch:,}；"
              "自己写的拦截器（拦下同一批矩阵乘，按形状算 2·m·n·k）是 {fa1_shapes:,} 和 {fa2_shapes:,}，"
              "都等于闭式 4·H·N²·d = {formula:,}。两个计数器数的是同一份实现，防的是计数器的错；与实现无关的是闭式。",
    expect={"fa1_torch": 67108864, "fa2_torch": 67108864, "fa1_shapes": 67108864, "fa2_shapes": 67108864,
            "formula": 67108864},
)
def _(ctx):
    """Matmul FLOPs of the two loop orders, counted two ways.

    范围：N=512、d=32、块 64×64，2 个头
    """
    out = {}
    for name, algo in (("fa1", fa1), ("fa2", fa2)):
        with FlopCounterMode(display=False) as fc:
            for q, k, v in inputs():
                run(algo, q, k, v)
        with Counting() as c:
            for q, k, v in inputs():
                run(algo, q, k, v)
        out[f"{name}_torch"] = fc.get_total_flops()
        out[f"{name}_shapes"] = c.matmul_flops
    return {**out, "formula": 4 * HEADS * N * N * D}


@claim(
    "fa23.nonmatmul-ops",
    question=Q,
    statement="第二版少的是矩阵乘以外的运算。拦下每个非矩阵乘算子、按它处理的最大张量数元素：第一版每个块都把输出先乘旧的 l、再除以新的 l，"
              "对 O 形状张量的乘、除、加共 {fa1_o_ops:,} 次，第二版只乘修正因子、相加，最后除一次，共 {fa2_o_ops:,} 次；"
              "全部非矩阵乘运算第一版 {fa1_total:,}、第二版 {fa2_total:,}，分别是矩阵乘 FLOP 的 {fa1_share:pct} 和 {fa2_share:pct}。",
    expect={"fa1_o_ops": 1048576, "fa2_o_ops": 557056, "fa2_fewer": True,
            "fa1_share": {"approx": [0.05579, 1e-3]}, "fa2_share": {"approx": [0.04800, 1e-3]}},
)
def _(ctx):
    """Non-matmul element operations of the two loop orders, from a dispatch mode.

    范围：N=512、d=32、块 64×64，2 个头
    """
    res = {}
    for name, algo in (("fa1", fa1), ("fa2", fa2)):
        with Counting() as c:
            for q, k, v in inputs():
                run(algo, q, k, v)
        total = sum(c.elementwise.values())
        res |= {f"{name}_ops": dict(c.elementwise), f"{name}_total": total, f"{name}_share": total / c.matmul_flops,
                f"{name}_o_ops": c.on_output}
    return {**res, "fa2_fewer": res["fa2_total"] < res["fa1_total"]}
