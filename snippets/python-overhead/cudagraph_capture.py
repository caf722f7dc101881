"""A CUDA Graph records the work launched on a stream; anything that makes the CPU wait for the
GPU cannot be recorded. In its own file: a failed capture leaves its worker process alone."""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "python-overhead"


@claim(
    "cudagraph.no-sync-in-capture",
    question=Q,
    statement="捕获期间不能同步：在 `capture_begin()` 和 `capture_end()` 之间调用 `.item()` 直接报错（{item_error_type}），"
              "CUDA 不允许在正在捕获的 stream 上等 GPU 算完，这次捕获也随之作废（之后的 `capture_end()` {end_raised:?同样报错|没有报错}）。"
              "所以要录成图的那段代码里不能有 `.item()`、`print(tensor)`、依赖张量值的 `if`。",
    needs=["cuda"],
    # Exact: cudaStreamSynchronize (and a copy to pageable host memory) are not allowed on a
    # capturing stream (cudaErrorStreamCaptureUnsupported), and the capture is invalidated. The
    # error's class is a RuntimeError (recent torch raises CUDA errors as its subclass
    # torch.AcceleratorError; the sentence shows the name observed).
    expect={"item_raised": True, "item_error_is_runtime_error": True, "item_error": {"contains": "capturing"},
            "end_raised": True},
)
def _(ctx):
    """CUDA Graph 捕获期间对 8 元素张量调用 .item() 时抛出的错误，以及之后的 capture_end() 是否也报错。"""
    x = torch.ones(8, device="cuda")
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    item_raised, item_error_type, item_error, end_raised, end_error = False, None, "", False, ""
    item_error_is_runtime_error = False
    with torch.cuda.stream(side):
        graph.capture_begin()  # by hand: torch.cuda.graph's __exit__ would replace the first error
        try:
            (x * 2).sum().item()
        except Exception as exc:  # noqa: BLE001  (the class is what the claim reports)
            item_raised, item_error_type, item_error = True, type(exc).__name__, str(exc).splitlines()[0][:300]
            item_error_is_runtime_error = isinstance(exc, RuntimeError)
        try:
            graph.capture_end()
        except Exception as exc:  # noqa: BLE001
            end_raised, end_error = True, str(exc).splitlines()[0][:300]
    return {"item_raised": item_raised, "item_error_type": item_error_type, "item_error": item_error,
            "item_error_is_runtime_error": item_error_is_runtime_error,
            "end_raised": end_raised, "end_error": end_error}
