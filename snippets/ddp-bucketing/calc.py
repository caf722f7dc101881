"""计算题 of this question: a ring all-reduce's time by the α–β model.

T = 2(p−1)·α + 2(p−1)/p · n ÷ bandwidth: reduce-scatter and all-gather take p−1 steps each, and in
each step every rank sends one n/p chunk to its neighbour. The quiz draws p, n, α and the link's
bandwidth; the claims run a ring all-reduce step by step on tensors (real values to check the sum,
meta tensors at the items' sizes), time each step as α plus its largest message over the bandwidth,
and compare with the formula.
"""

from __future__ import annotations

from verify.claim import claim

Q = "ddp-bucketing"
MiB = 2**20


def ring_ms(ranks: int, mib: int, alpha_us: float, gb_s: float) -> float:
    """Milliseconds of a ring all-reduce of ``mib`` MiB on ``ranks`` ranks: 2(p−1) steps of α plus n/p bytes each."""
    return 1e3 * (2 * (ranks - 1) * alpha_us * 1e-6 + 2 * (ranks - 1) / ranks * mib * MiB / (gb_s * 1e9))


def _worked(ranks: int, mib: int, alpha_us: float, gb_s: float) -> str:
    return f"2×({ranks}−1)×{alpha_us} µs + 2×({ranks}−1)/{ranks} × {mib}×2²⁰ 字节 ÷ {gb_s}×10⁹ 字节/s"


CALCULATORS = [
    {"id": "ring-allreduce", "question": Q, "claim": "ddp.calc-ring",
     "prompt": "{ranks} 张卡用环形（ring）all-reduce 同步 {mib} MiB（1 MiB = 2²⁰ 字节）的梯度：reduce-scatter 和 all-gather "
               "各走 p−1 步，每步每张卡向下一张发 n/p 字节。每一步的固定延迟 α = {alpha_us} µs，每张卡发送方向的带宽 "
               "{gb_s} GB/s（1 GB = 10⁹ 字节），每步的时间 = α + 这一步的字节 ÷ 带宽。按 α–β 模型，这次 all-reduce 要多少毫秒？",
     "params": {"ranks": [2, 4, 8, 16, 64], "mib": [1, 25, 100, 1024], "alpha_us": [2, 5, 20], "gb_s": [25, 100, 450]},
     "answer": ring_ms, "unit": "ms", "tolerance": 0.02, "worked": _worked,
     "explain": "T = 2(p−1)·α + 2(p−1)/p · n ÷ 带宽：第一项是 2(p−1) 步的固定延迟，第二项是每张卡一共发出的 "
                "2(p−1)/p · n 字节。n 远小于 p·α·带宽时几乎全是延迟，远大于时几乎全是带宽。"},
]


def ring_allreduce(shards: list, alpha_s: float, bytes_per_s: float) -> tuple[list, int, float]:
    """Every rank's result of a ring all-reduce of ``shards`` (one tensor per rank), the steps it took,
    and its time: each step costs α plus the largest chunk any rank sends in it over the bandwidth."""
    p = len(shards)
    chunks = [[c.clone() for c in t.chunk(p)] for t in shards]
    steps, seconds = 0, 0.0
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(p - 1):
            # in step s, rank r sends chunk (r − s) mod p (reduce-scatter), or (r + 1 − s) mod p (all-gather)
            sends = [(r, (r - s) % p if phase == "reduce-scatter" else (r + 1 - s) % p) for r in range(p)]
            messages = [(r, c, chunks[r][c].clone()) for r, c in sends]
            for r, c, data in messages:
                dst = (r + 1) % p
                chunks[dst][c] = chunks[dst][c] + data if phase == "reduce-scatter" else data
            steps += 1
            seconds += alpha_s + max(d.numel() * d.element_size() for _r, _c, d in messages) / bytes_per_s
    import torch

    return [torch.cat(c) for c in chunks], steps, seconds


RINGS = [(4, 1 * MiB, 5.0, 100), (8, 2 * MiB, 2.0, 450), (3, 3 * MiB, 10.0, 25)]


@claim("ddp.calc-ring", question=Q,
       statement="环形 all-reduce 的 α–β 公式和一步一步走出来的一致：{n_rings} 组（卡数、大小、α、带宽），每张卡一份真实的 "
                 "FP32 梯度，按环走完 reduce-scatter 和 all-gather，每张卡的结果{sums:?都等于各卡之和|有不等于各卡之和的}，"
                 "共走了 2(p−1) 步；每步记 α 加这一步最大的消息 ÷ 带宽，总时间与 2(p−1)·α + 2(p−1)/p·n ÷ 带宽的最大相对差 "
                 "{worst:.1e}。模拟面试的计算题用的就是这个公式。",
       expect={"sums": True, "steps": True, "worst": {"<": 1e-9}, "n_rings": 3})
def _(ctx):
    import torch

    sums = steps_ok = True
    worst = 0.0
    for p, nbytes, alpha_us, gb_s in RINGS:
        g = torch.Generator().manual_seed(p)
        shards = [torch.randn(nbytes // 4, generator=g) for _ in range(p)]
        results, steps, seconds = ring_allreduce(shards, alpha_us * 1e-6, gb_s * 1e9)
        total = torch.stack(shards).sum(0)
        sums = sums and all(torch.allclose(r, total, atol=1e-5) for r in results)
        steps_ok = steps_ok and steps == 2 * (p - 1)
        worst = max(worst, abs(seconds * 1e3 - ring_ms(p, nbytes // MiB, alpha_us, gb_s)) / (seconds * 1e3))
    return {"sums": sums, "steps": steps_ok, "worst": worst, "n_rings": len(RINGS)}


@claim("ddp.calc-ring-items", question=Q,
       statement="模拟面试里环形 all-reduce 的 {n_items} 道计算题按 α–β 公式出答案；按每道题的卡数和大小在 meta 设备上建出每张卡的"
                 "梯度，按环一步一步走完，每步记 α 加这一步最大的消息 ÷ 带宽，总时间与答案的最大相对差 {worst:.1e}；"
                 "其中 {latency_bound} 道延迟那一项更大。",
       expect={"worst": {"<": 1e-9}, "n_items": 6})
def _(ctx):
    """The quiz's items of this question, each answer found again by walking the ring at the item's size."""
    import torch

    from snippets._calc import checked

    def again(_calc, p):
        shards = [torch.empty(p["mib"] * MiB // 4, device="meta") for _ in range(p["ranks"])]
        _results, _steps, seconds = ring_allreduce(shards, p["alpha_us"] * 1e-6, p["gb_s"] * 1e9)
        return seconds * 1e3

    quiz, pairs = checked(CALCULATORS, again)
    worst, latency_bound = 0.0, 0
    for item, found in pairs:
        worst = max(worst, abs(found - item["answer"]) / item["answer"])
        latency = 2 * (item["params"]["ranks"] - 1) * item["params"]["alpha_us"] * 1e-3
        latency_bound += latency > item["answer"] - latency
    return {"worst": worst, "n_items": len(pairs), "latency_bound": latency_bound, "calc_items": quiz}
