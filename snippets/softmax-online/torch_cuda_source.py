"""PyTorch's own warp-per-row CUDA softmax, read from the header every torch wheel installs (no GPU needed)."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from verify.claim import claim

Q = "softmax-online"
HEADER = Path(torch.__file__).parent / "include" / "ATen" / "native" / "cuda" / "PersistentSoftmax.cuh"


def function_body(text: str, name: str) -> str:
    """The text of the first definition of ``name``, from its signature to its matching closing brace."""
    start = text.index(name + "(")
    brace = text.index("{", start)
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i + 1]
    raise ValueError(f"{name}: no closing brace")


@claim(
    "softmax.torch-warp-kernel",
    question=Q,
    statement="随 torch 安装的 `ATen/native/cuda/PersistentSoftmax.cuh` 里，`softmax_warp_forward` 一个 warp 处理一行："
              "把这一行读进每个 lane 的寄存器数组，调用 {reduce_calls} 次 `warp_reduce`（最大值、求和各一次），"
              "`warp_reduce` {uses_shfl_xor:?用的是|用的不是} `WARP_SHFL_XOR`；整个文件里 `__syncthreads` 出现 {syncthreads} 次、"
              "`__shared__` {shared} 次。文件里的注释{comment:?写明了原因|没有这句话}：处理一行的线程都在同一个 warp 里，所以归约只要 `__shfl_` 指令。"
              "前向的 `dispatch_softmax_forward` 只接受不超过 {max_elements} 个元素的行，每个 block {threads_per_block} 个线程、"
              "每个 warp 各管各的行。",
    expect={"reduce_calls": 2, "uses_shfl_xor": True, "syncthreads": 0, "shared": 0, "max_elements": 2048,
            "threads_per_block": 128, "comment": True},
)
def _(ctx):
    text = HEADER.read_text()
    forward = function_body(text, "softmax_warp_forward")
    reduce = function_body(text, "warp_reduce")
    dispatch = function_body(text, "dispatch_softmax_forward")
    limit = re.search(r"softmax_elements\s*<=\s*(\d+)", dispatch)
    threads = re.search(r"threads_per_block\s*=\s*(\d+)", dispatch)
    return {"header": str(HEADER.relative_to(Path(torch.__file__).parent)),
            "reduce_calls": len(re.findall(r"\bwarp_reduce<", forward)),
            "uses_shfl_xor": "WARP_SHFL_XOR" in reduce,
            "syncthreads": text.count("__syncthreads"), "shared": text.count("__shared__"),
            "comment": "only __shfl_ instructions are required for reductions" in text,
            "max_elements": int(limit.group(1)) if limit else None,
            "threads_per_block": int(threads.group(1)) if threads else None}
