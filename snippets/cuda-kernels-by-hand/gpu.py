"""What needs a GPU or a GPU's published numbers: the bytes a row kernel must move, and a timing for later.

The spec claim is arithmetic on the H200 SXM's published HBM bandwidth (a floor, not a timing).
The timing claim needs CUDA: on a CPU build it shows as not run; it is recorded on an H200.
"""

from __future__ import annotations

import torch

from snippets._gpu import specs
from verify import timing
from verify.claim import claim

Q = "cuda-kernels-by-hand"
ROWS, COLS = 8192, 8192


@claim(
    "kernels.softmax-bytes-h200",
    question=Q,
    statement="{=8192×8192} 的 fp32 softmax（{nbytes:bytes}），若每一遍都从 HBM 读：融合版读一遍写一遍要搬 "
              "{fused_bytes:bytes}，三遍版读三遍写一遍要搬 {three_bytes:bytes}；按 H200 SXM 公布的 HBM 带宽 {bw_tb:.1f} TB/s 算，"
              "下限分别是 {fused_s:time} 和 {three_s:time}。两者之比 {ratio} 是按这个假设数出来的（4 次对 2 次），不是测量。",
    expect={"ratio": 2.0},
)
def _(ctx):
    bw = specs.get(ctx, "H200 SXM", "hbm_bytes_per_s")
    nbytes = ROWS * COLS * 4
    fused, three = (1 + 1) * nbytes, (3 + 1) * nbytes   # reads + the one write of the output
    return {"bw": bw, "bw_tb": bw / 1e12, "nbytes": nbytes, "fused_bytes": fused, "three_bytes": three,
            "fused_s": fused / bw, "three_s": three / bw, "ratio": three / fused}


def eager_layer_norm(x, w, b, eps=1e-5):
    """LayerNorm as separate tensor ops: each one reads (and most write) the whole tensor."""
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(-1, keepdim=True)
    return xc * torch.rsqrt(var + eps) * w + b


@claim(
    "kernels.layernorm-fused-gpu",
    question=Q,
    kind="perf",
    statement="GPU 上（为 H200 录制）：对 {=8192×4096} 的 fp32，逐个张量运算的 LayerNorm 要 {timings.eager}，一个 kernel 的 "
              "`F.layer_norm` 要 {timings.fused}，快 {speedup:x}（预期这个比值在 H200 上大于 2：前者每个运算各读写一遍整块数据，后者读一遍写一遍），"
              "两者最多差 {max_diff:.1e}。",
    expect={"speedup": {">": 2.0}, "max_diff": {"<": 1e-4}},
    needs=["cuda"],
)
def _(ctx):
    """8192×4096 的 fp32 LayerNorm：逐个张量运算与单个 kernel 的 `F.layer_norm` 的耗时之比和最大差。"""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, 4096, generator=g).to(ctx.device)
    w, b = torch.randn(4096, generator=g).to(ctx.device), torch.randn(4096, generator=g).to(ctx.device)
    fused = lambda: torch.nn.functional.layer_norm(x, (4096,), w, b, 1e-5)  # noqa: E731
    eager = lambda: eager_layer_norm(x, w, b)  # noqa: E731
    t = timing.compare({"eager": eager, "fused": fused}, rounds=15, warmup=3, inner=5, device=ctx.device)
    return {"shape": list(x.shape), "timings": t, "speedup": timing.ratio(t, "eager", "fused"),
            "max_diff": (eager() - fused()).abs().max().item()}
