"""CUDA Graphs through torch.compile: mode="reduce-overhead" records the compiled graph's kernels
once and replays them, which removes the per-kernel launches and the Python wrapper between
them; the price is static memory: the outputs live in the graph's pool and the next replay
writes over them. Needs a GPU."""

from __future__ import annotations

import torch

from verify.claim import claim
from verify.timing import compare, ratio

Q = "python-overhead"


def _layers(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Ten small matmuls, each followed by a ReLU: about twenty kernels, each tiny on a GPU."""
    for _ in range(10):
        x = torch.relu(x @ w)
    return x


# Two functions with their own code objects: Dynamo keeps its compiled code per code object, so
# the two modes never share a cache entry.
def small_layers(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return _layers(x, w)


def small_layers_graphed(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return _layers(x, w)


@claim(
    "cudagraph.reduce-overhead",
    question=Q,
    statement="`torch.compile(mode=\"reduce-overhead\")` 在 Inductor 的输出外再包一层 CUDA Graph：10 层小矩阵乘加 ReLU，"
              "默认模式每次调用 {t.default:time}，reduce-overhead 每次 {t.reduce_overhead:time}，快 {speedup:x}；"
              "这张图确实被录成了 CUDA Graph（跳过的次数：{cudagraph_skips}）。",
    needs=["cuda"],
    kind="perf",
    timeout=300,
    # The kernels are the same in both modes; reduce-overhead replaces their launches and the
    # wrapper's Python between them with one replay, so it is faster on any GPU (by how much
    # depends on the CPU, the driver and the kernels' size). No skip: nothing in this graph
    # (CPU tensors, mutated inputs, dynamic shapes) keeps it off CUDA Graphs.
    expect={"speedup": {">": 1.0}, "cudagraph_skips": 0, "same_result": True},
)
def _(ctx):
    """10 层 64×64 矩阵乘加 ReLU 在 torch.compile 默认模式与 reduce-overhead 模式下每次调用的耗时和 cudagraph 跳过次数。"""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    x = torch.randn(64, 64, device="cuda")
    w = torch.randn(64, 64, device="cuda") / 8
    default = torch.compile(small_layers)
    graphed = torch.compile(small_layers_graphed, mode="reduce-overhead")
    for _ in range(3):  # compile; cudagraph trees warm up, then record
        default(x, w)
        graphed(x, w)
    torch.cuda.synchronize()
    same = bool(torch.allclose(default(x, w), graphed(x, w).clone(), atol=1e-4))
    t = compare({"default": lambda: default(x, w), "reduce_overhead": lambda: graphed(x, w)},
                rounds=15, warmup=2, inner=20, device="cuda")
    return {"t": t, "us": {k: v["median_s"] * 1e6 for k, v in t.items()},
            "speedup": ratio(t, "default", "reduce_overhead"),
            "cudagraph_skips": counters["inductor"]["cudagraph_skips"], "same_result": same}


@claim(
    "cudagraph.output-overwritten",
    question=Q,
    statement="代价是输出也在图的静态内存里：reduce-overhead 下先拿到 `y1 = f(x)`，再调用一次 `f(x)`，下一次回放就写在"
              "同一块内存上，之后再读 `y1` 会报错（{error_type}：“accessing tensor output of CUDAGraphs that has been"
              " overwritten by a subsequent run”），要留着的结果得先 `clone()`：先 clone 出来的那份{clone_ok:?不受影响，仍是正确结果|也被改写了}。",
    needs=["cuda"],
    timeout=300,
    # Exact: cudagraph trees start a new generation on each call when no backward is pending, and
    # mark the storages of the previous generation's outputs so that reading them raises with
    # this message (torch/_inductor/cudagraph_trees.py, format_dealloc_msg).
    expect={"raised": True, "is_runtime_error": True,
            "message": {"contains": "accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"}, "clone_ok": True},
)
def _(ctx):
    """reduce-overhead 下再调用一次之后读上一次输出时抛出的错误，以及先 clone 的那份结果是否仍然正确（64×64 的 relu(x @ x)）。"""
    torch._dynamo.reset()

    def f(x):
        return torch.relu(x @ x)

    graphed = torch.compile(f, mode="reduce-overhead")
    x = torch.randn(64, 64, device="cuda")
    for _ in range(3):
        graphed(x)
    y1 = graphed(x)
    kept = y1.clone()
    graphed(x)
    try:
        (y1 + 1).sum().item()
        raised, error_type, is_runtime_error, message = False, None, False, ""
    except Exception as exc:  # noqa: BLE001  (the class is what the claim reports)
        raised, error_type, message = True, type(exc).__name__, str(exc).splitlines()[0][:300]
        is_runtime_error = isinstance(exc, RuntimeError)
    return {"raised": raised, "error_type": error_type, "is_runtime_error": is_runtime_error, "message": message,
            "clone_ok": bool(torch.allclose(kept, f(x), atol=1e-4))}
