"""The CUDA autocast lists without a GPU: they are compiled into every torch build and registered with the dispatcher."""

import re

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

from verify.claim import claim

Q = "amp-bf16-fp16"
FP32_OPS = {"softmax": "aten::softmax.int", "layer_norm": "aten::layer_norm", "sum": "aten::sum", "exp": "aten::exp"}


def _registered_at(op, key):
    """The source file that registered ``op``'s kernel for dispatch key ``key`` (from the dispatcher's dump)."""
    for line in torch._C._dispatch_dump(op).splitlines():
        if line.startswith(key + ":"):
            m = re.search(r"(aten/src/ATen/[\w/]+\.cpp)", line)
            return m.group(1) if m else line
    return None


def _cuda_autocast_dtypes():
    """Output dtypes under CUDA FP16 autocast, on fake CUDA tensors.

    FakeTensorMode makes CUDA tensors that hold only shape and dtype: every op still goes through the
    dispatcher, so the AutocastCUDA wrappers run and cast, and the kernels behind them only infer the
    output. ``torch.autocast("cuda")`` turns itself off when no GPU is present, so the state it sets
    (enabled, dtype, nesting) is set here directly and restored after.
    """
    prev = (torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"))
    with FakeTensorMode():
        x = torch.randn(4, 16, device="cuda")
        w, b = torch.randn(16, 16, device="cuda"), torch.randn(16, device="cuda")
        target = torch.zeros(4, dtype=torch.long, device="cuda")
        torch.set_autocast_dtype("cuda", torch.float16)
        torch.set_autocast_enabled("cuda", True)
        torch.autocast_increment_nesting()
        try:
            h = F.linear(x, w, b)
            out = {"device": str(h.device), "linear": h.dtype, "matmul": (x @ x.t()).dtype,
                   "softmax": torch.softmax(h, -1).dtype, "layer_norm": F.layer_norm(h, (16,)).dtype,
                   "sum": h.sum().dtype, "exp": h.exp().dtype, "gelu": F.gelu(h).dtype, "mean": h.mean().dtype,
                   "cross_entropy": F.cross_entropy(h, target).dtype}
        finally:
            torch.autocast_decrement_nesting()
            torch.set_autocast_enabled("cuda", prev[0])
            torch.set_autocast_dtype("cuda", prev[1])
            torch.clear_autocast_cache()
    return {k: str(v).replace("torch.", "") for k, v in out.items()}


@claim("amp.cuda-autocast-lists", question=Q,
       statement="CUDA 的名单编译在每个 torch 里，没有 GPU 也能查：这台机器装的是 CPU 版 torch {version}，它的分发器里 "
                 "`softmax`、`layer_norm`、`sum`、`exp` 在 AutocastCUDA 键上{cuda_registered:?都注册了|并非都注册了} "
                 "autocast kernel（注册在 `{where}`），在 AutocastCPU 键上{cpu_any:?有的也注册了|一个也没有注册}。用 "
                 "FakeTensorMode 造出只有形状和 dtype 的 CUDA 张量、打开 CUDA 的 FP16 autocast，让这些 wrapper 真正走一遍："
                 "`F.linear` 输出 {d.linear}，接在它后面的 `softmax`、`layer_norm`、`sum`、`exp` 输出 {d.softmax}、"
                 "{d.layer_norm}、{d.sum}、{d.exp}，`cross_entropy` 输出 {d.cross_entropy}；不在名单上的 `gelu`、`mean` "
                 "按输入类型得 {d.gelu}、{d.mean}。",
       expect={"cuda_registered": True, "cpu_any": False, "where": "aten/src/ATen/autocast_mode.cpp",
               "d": {"device": "cuda:0", "linear": "float16", "matmul": "float16", "softmax": "float32",
                     "layer_norm": "float32", "sum": "float32", "exp": "float32", "gelu": "float16",
                     "mean": "float16", "cross_entropy": "float32"}})
def _(ctx):
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return {"version": torch.__version__,
            "cuda_registered": all(has(op, "AutocastCUDA") for op in FP32_OPS.values()),
            "cpu_any": any(has(op, "AutocastCPU") for op in FP32_OPS.values()),
            "cpu_registered": {k: has(op, "AutocastCPU") for k, op in FP32_OPS.items()},
            "where": _registered_at(FP32_OPS["softmax"], "AutocastCUDA"),
            "mm_cpu_registered": has("aten::mm", "AutocastCPU"),
            "d": _cuda_autocast_dtypes()}
