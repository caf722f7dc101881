"""On a GPU: the time of a coalesced read against a strided one of the same useful bytes (torch only)."""

from __future__ import annotations

import torch

from verify.claim import claim
from verify.timing import compare, ratio

Q = "gpu-memory-hierarchy"
ROWS = 1 << 25  # 32 Mi floats: 128 MiB, well past any L2
WIDTH = 8  # floats per row of x: a row is one 32-byte sector
SECTOR = 32


@claim(
    "gmem.cuda-strided-gather",
    question=Q,
    kind="perf",
    needs=["cuda"],
    timeout=180,
    statement="在 GPU 上（为 H200 的记录而写），`torch.neg` 读 {=2^25} 个 fp32、写出同样多：源是连续数组时 {times.contiguous:time}；"
              "源是 (N, 8) 张量的一列 `x[:, 0]` 时，相邻线程相隔 {stride_bytes} 字节，每个 sector 只用一个 float，"
              "要读的 sector 是连续时的 {sector_ratio} 倍，耗时 {times.strided:time}，是连续时的 {ratio:x}。"
              "预期这个比值在 H200 上明显大于 2：读多了 {sector_ratio} 倍，写一样多，两者都受 HBM 带宽限制。",
    expect={"ratio": {">": 2.0}, "sector_ratio": 8, "correct": True},
)
def _(ctx):
    """`torch.neg` 读写 2^25 个 fp32：源为连续数组与源为每行 8 个 float 的张量的一列（每个 32 字节 sector 只用一个 float）时的耗时之比。"""
    x = torch.randn(ROWS, WIDTH, device="cuda")
    flat = torch.randn(ROWS, device="cuda")
    out = torch.empty(ROWS, device="cuda")
    col = x[:, 0]
    stride_bytes = col.stride(0) * col.element_size()
    times = compare({"contiguous": lambda: torch.neg(flat, out=out), "strided": lambda: torch.neg(col, out=out)},
                    rounds=15, warmup=3, inner=5, device="cuda")
    torch.neg(col, out=out)
    correct = bool(torch.equal(out, -col))
    useful = 2 * ROWS * col.element_size()  # bytes read + written that the result needs
    return {"times": times, "ratio": ratio(times, "strided", "contiguous"), "stride_bytes": stride_bytes,
            "sector_ratio": min(stride_bytes, SECTOR) // col.element_size(), "correct": correct,
            "useful_gb_s": {k: useful / float(v["median_s"]) / 1e9 for k, v in times.items()}}
