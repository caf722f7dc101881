"""Several back ends behind one front end: ONNX Runtime's execution providers and torch.compile's backends.

Lists and a session's providers are read from the installed packages; nothing is timed.
"""

from __future__ import annotations

import warnings

from verify.claim import claim

Q = "onnx-and-inference-runtimes"


def _relu_model() -> bytes:
    """A one-node ONNX model (Relu on a float vector), written with onnx.helper: no export needed."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]).SerializeToString()


@claim(
    "ep.available",
    question=Q,
    statement="PyPI 上 Linux x86-64 的 `onnxruntime` {version} 这个包：`get_all_providers()` 列出 ORT 认识的 {all_count} 个执行提供者"
              "（含 `CUDAExecutionProvider`、`TensorrtExecutionProvider`、`OpenVINOExecutionProvider`），"
              "`get_available_providers()` 里这个构建真正编进去的只有 {available_text}。",
    expect={"available": ["AzureExecutionProvider", "CPUExecutionProvider"], "cuda_known": True, "tensorrt_known": True,
            "all_count": {">=": 10}},
    needs=["onnx"],
)
def _(ctx):
    """The providers this wheel knows by name and those it was built with.

    范围：onnxruntime 1.32 Linux x86-64 CPU 包
    """
    import onnxruntime as ort

    every = ort.get_all_providers()
    return {"version": ort.__version__, "all_count": len(every), "all": every,
            "available": ort.get_available_providers(),
            "available_text": "、".join(ort.get_available_providers()), "cuda_known": "CUDAExecutionProvider" in every,
            "tensorrt_known": "TensorrtExecutionProvider" in every}


@claim(
    "ep.fallback",
    question=Q,
    statement="在这个 CPU 版的包里建 session 时只要 `providers=[\"CUDAExecutionProvider\"]`：没有报错"
              "（建成了：{created:?是|否}），只发 {warning_count} 条 Python 警告，说这个 EP 不在可用列表里；"
              "`session.get_providers()` 是 {providers_text}，"
              "整个图在 CPU 上跑。",
    expect={"created": True, "warning_count": 1, "warned": True, "providers": ["CPUExecutionProvider"]},
    needs=["onnx"],
)
def _(ctx):
    """A session asked for CUDA only, in a build without it: what it runs on.

    范围：onnxruntime 1.32 Linux x86-64 CPU 包
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    providers: list[str] = []
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            providers = ort.InferenceSession(_relu_model(), opts, providers=["CUDAExecutionProvider"]).get_providers()
        except Exception as exc:  # noqa: BLE001 - the claim reports a failed creation instead of raising
            error = f"{type(exc).__name__}: {exc}"[:200]
    messages = [str(w.message)[:200] for w in caught]
    return {"created": error is None, "error": error, "providers": providers, "providers_text": "、".join(providers),
            "warnings": messages, "warning_count": len(messages),
            "warned": any("CUDAExecutionProvider" in m and "not in available" in m for m in messages)}


@claim(
    "backends.torch-compile",
    question=Q,
    statement="`torch._dynamo.list_backends()` 默认列出 {listed_text}；连调试用的一起（`exclude_tags=()`）共 {all_count} 个，"
              "`eager` 和 `aot_eager` 只在后一个列表里。",
    expect={"has_inductor": True, "eager_hidden": True, "aot_eager_hidden": True, "all_count": {">": 4}},
)
def _(ctx):
    """torch.compile's registered backends, with and without the debug ones.

    范围：torch 2.13
    """
    from torch import _dynamo

    listed = _dynamo.list_backends()
    every = _dynamo.list_backends(exclude_tags=())
    return {"listed": listed, "listed_text": "、".join(listed), "all_count": len(every), "all": every, "has_inductor": "inductor" in listed,
            "eager_hidden": "eager" not in listed and "eager" in every,
            "aot_eager_hidden": "aot_eager" not in listed and "aot_eager" in every}
