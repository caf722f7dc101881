"""A second, independent check of Little's law for memory: a discrete-event simulation of one SM.

The page's spec claims compute the cap as a formula (bytes in flight / latency, at most the SM's share
of HBM bandwidth). Here nothing computes it: one SM holds W warps of 32 threads, each thread keeps one
request of ``size`` bytes outstanding and issues the next the moment the previous one returns. The
memory is a FIFO server that takes in one request every ``size / B`` seconds (``B`` the SM's share of
the published HBM bandwidth) and returns it ``LATENCY_S`` after taking it in. The throughput is read
off the simulated clock: bytes returned inside a window, over the window. Time here is simulated, not
measured; the inputs are the spec table's bandwidth and SM count and the same assumed latency.
"""

from __future__ import annotations

import heapq

from snippets._gpu import specs
from verify.claim import claim

Q = "bandwidth-diagnosis"
LATENCY_S = 600e-9  # the assumed DRAM latency of the page's spec claims
A100, H100 = "A100 SXM 80GB", "H100 SXM"
START, STOP = 5, 25  # the window, in latencies: after the first requests have returned, twenty latencies long


def _simulate(bw_per_sm: float, warps: int, size: int, warp: int) -> dict[str, float]:
    """Run the SM for ``STOP`` latencies; return its read throughput as a share of ``bw_per_sm`` and the mean queueing."""
    n = warps * warp
    take = size / bw_per_sm  # the server's time to take in one request
    # the threads issue their first request spread over one latency, as warps reach their load one after another
    arrivals = [(i * LATENCY_S / n, i) for i in range(n)]
    heapq.heapify(arrivals)
    free = 0.0  # when the server can take the next request
    t0, t1 = START * LATENCY_S, STOP * LATENCY_S
    returned = waited = 0
    wait_sum = 0.0
    while arrivals[0][0] < t1:
        t, i = heapq.heappop(arrivals)  # earliest request first; ties by thread: deterministic
        if t >= t0:  # this arrival is the return of the thread's previous request
            returned += 1
        start = max(t, free)
        free = start + take
        if t >= t0:
            wait_sum += start - t
            waited += 1
        heapq.heappush(arrivals, (start + LATENCY_S, i))
    rate = returned * size / (t1 - t0)
    return {"share": rate / bw_per_sm, "wait_ns": wait_sum / waited * 1e9, "in_flight": n * size}


@claim(
    "bw.event-sim-cap",
    question=Q,
    statement="不用公式，用离散事件模拟再算一遍：一个 SM 驻留 W 个 warp，每个线程始终有一个请求在路上，返回就发下一个；显存是一个"
              "先进先出的服务台，按 SM 分到的 HBM 带宽接收请求，接收后 {=600 ns} 返回；带宽从模拟时钟上数：窗口里返回的字节 ÷ 窗口长。"
              "{=4 字节} 的请求在 H100 SXM 上，W={=16}、{=32}、{=64} 时得到带宽的 {h100_w4_16:pct}、{h100_w4_32:pct}、{h100_w4_64:pct}，"
              "A100 SXM（{=80GB}）上 W={=32} 时 {a100_w4_32:pct}，请求不排队（平均等 {h100_w4_64_wait_ns:.0f} ns）；"
              "{=16 字节} 的请求在 H100 SXM 上，W={=16} 时 {h100_w16_16:pct}，W={=32}、{=64} 时停在 {h100_w16_32:pct}、"
              "{h100_w16_64:pct}：多出来的请求只在服务台前排队（W={=64} 时平均等 {h100_w16_64_wait_ns:.0f} ns）。",
    expect={"h100_w4_16": {"approx": [0.1345, 1e-3]}, "h100_w4_32": {"approx": [0.2690, 1e-3]},
            "h100_w4_64": {"approx": [0.5380, 1e-3]}, "a100_w4_32": {"approx": [0.3616, 1e-3]},
            "h100_w4_64_wait_ns": 0.0, "h100_w16_16": {"approx": [0.5380, 1e-3]},
            "h100_w16_32": {"approx": [1.0, 1e-3]}, "h100_w16_64": {"approx": [1.0, 1e-3]},
            "h100_w16_64_wait_ns": {"approx": [691.1, 1e-2]}},
)
def _(ctx):
    """Read throughput of one SM in a queueing simulation, for several warp counts and request widths.

    范围：一个 SM 的排队模型，规格带宽，假设的延迟
    """
    warp = int(specs.get(ctx, "9.0", "warp_size"))
    out: dict[str, float] = {}
    for g, gpu, runs in (("h100", H100, ((4, 16), (4, 32), (4, 64), (16, 16), (16, 32), (16, 64))),
                         ("a100", A100, ((4, 32),))):
        bw_per_sm = specs.get(ctx, gpu, "hbm_bytes_per_s") / int(specs.get(ctx, gpu, "sms"))
        for size, warps in runs:
            r = _simulate(bw_per_sm, warps, size, warp)
            out |= {f"{g}_w{size}_{warps}": r["share"], f"{g}_w{size}_{warps}_wait_ns": r["wait_ns"],
                    f"{g}_w{size}_{warps}_bytes": r["in_flight"]}
    return out
