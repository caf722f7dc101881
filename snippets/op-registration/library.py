"""An operator registered from C++ (TORCH_LIBRARY / TORCH_LIBRARY_IMPL) and from Python (torch.library)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

from verify.claim import claim

SOURCE = "demo_ops.cpp"
LIB_NAME = "opreg_demo_ext"
SHOWN = ("CPU", "CUDA", "Meta", "AutogradCPU", "AutogradCUDA", "CompositeImplicitAutograd")


def _source() -> Path:
    return Path(__file__).resolve().parent / SOURCE


@functools.cache
def build() -> dict:
    """Compile demo_ops.cpp once per source and torch version; later runs reuse the build directory."""
    from torch.utils import cpp_extension  # noqa: PLC0415

    src = _source()
    digest = hashlib.sha256(src.read_bytes() + torch.__version__.encode()).hexdigest()[:12]
    root = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or tempfile.gettempdir())
    build_dir = root / f"opreg_demo-{digest}"
    build_dir.mkdir(parents=True, exist_ok=True)
    so = build_dir / f"{LIB_NAME}.so"
    cold = not so.exists()
    start = time.perf_counter()
    # is_python_module=False: no pybind11 module; the .so is loaded with torch.ops.load_library,
    # and loading it is all the registration needs.
    cpp_extension.load(name=LIB_NAME, sources=[str(src)], build_directory=str(build_dir),
                       is_python_module=False, extra_cflags=["-O1"])
    return {"so": so, "obj": build_dir / "demo_ops.o", "build_s": round(time.perf_counter() - start, 2), "cold": cold,
            "build_dir": build_dir}


def table_kinds(op: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        key, _, rest = line.partition(":")
        if key in SHOWN and "[" in rest:
            out[key] = rest[rest.rfind("[") + 1 : rest.rfind("]")]
    return out


def registered_keys(op: str) -> list[str]:
    """Keys that have a registration of their own (not a fallback), from the dispatcher's dump."""
    keys = []
    for line in torch._C._dispatch_dump(op).splitlines():
        key, sep, rest = line.partition(": registered at")
        if sep and "::" not in key and key.strip() != "debug":
            keys.append(key.strip())
    return keys


@claim(
    "library.cpp-op-table",
    question="op-registration",
    statement="在 `TORCH_LIBRARY(opreg_demo, m)` 里用 `m.def` 定义 schema，再用 `TORCH_LIBRARY_IMPL(opreg_demo, CPU, m)` 和 "
    "`TORCH_LIBRARY_IMPL(opreg_demo, CUDA, m)` 各注册一个 kernel，编译加载后 `opreg_demo::twice` 的表里 CPU 列和 CUDA 列"
    "就是我们的 kernel，Meta 和 Autograd 列只有通用的 backend fallback；对 CPU tensor 的调用只进了 CPU kernel。",
    expect={
        "registered": ["CPU", "CUDA"],
        "table": {"CPU": "kernel", "CUDA": "kernel", "Meta": "backend fallback", "AutogradCPU": "backend fallback",
                  "AutogradCUDA": "backend fallback"},
        "result": [0.0, 2.0, 4.0, 6.0],
        "calls_delta": [1, 0],
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    info = build()
    before = list(torch.ops.opreg_demo.kernel_calls())
    result = torch.ops.opreg_demo.twice(torch.arange(4.0))
    after = list(torch.ops.opreg_demo.kernel_calls())
    return {
        "registered": registered_keys("opreg_demo::twice"),
        "table": table_kinds("opreg_demo::twice"),
        "result": result.tolist(),
        "calls_delta": [a - b for a, b in zip(after, before)],  # [cpu kernel, cuda kernel]
        "build_s": info["build_s"],
        "cold_build": info["cold"],
        "includes": "torch/library.h",
    }


@claim(
    "library.macro-is-static-object",
    question="op-registration",
    statement="用预处理器展开 `demo_ops.cpp` 就能看到答案：`TORCH_LIBRARY` 和两个 `TORCH_LIBRARY_IMPL` 这 {static_objects} 个宏"
    "各展开成一个 `static const torch::detail::TorchLibraryInit` 对象，注册写在它的构造函数里；编译器把这些构造集中到"
    "初始化函数 `_GLOBAL__sub_I_demo_ops.cpp`，登记在目标文件的 `.init_array` 段，加载时由运行时调用。",
    expect={
        "static_objects": 3,
        "def_object": {"contains": "TORCH_LIBRARY_static_init_opreg_demo"},
        "init_function": "_GLOBAL__sub_I_demo_ops.cpp",
        "has_init_array": True,
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    from torch.utils import cpp_extension  # noqa: PLC0415

    info = build()
    flags = [f"-I{p}" for p in cpp_extension.include_paths()]
    pre = subprocess.run(["g++", "-std=c++17", "-E", "-P", *flags, str(_source())], capture_output=True, text=True,
                         check=True).stdout
    # Our code is at the end of the preprocessed text; the static objects are one per macro.
    objects = re.findall(r"static const torch::detail::TorchLibraryInit (\w+)\(", pre)
    expansion = pre[pre.index("static void TORCH_LIBRARY_init_opreg_demo") :]
    expansion = expansion[: expansion.index("{")].replace(str(_source()), SOURCE)
    nm = subprocess.run(["nm", str(info["obj"])], capture_output=True, text=True, check=True).stdout
    init_fns = [line.split()[-1] for line in nm.splitlines() if "_GLOBAL__sub_I_" in line]
    sections = subprocess.run(["objdump", "-h", str(info["obj"])], capture_output=True, text=True, check=True).stdout
    return {
        "static_objects": len(objects),
        "object_names": objects,
        "def_object": objects[0] if objects else "",
        "expansion": " ".join(expansion.split()),
        "init_function": init_fns[0] if init_fns else "",
        "has_init_array": ".init_array" in sections,
    }


LOAD_SCRIPT = r"""
import ctypes, sys, torch
def present():
    try:
        torch._C._dispatch_find_schema_or_throw("opreg_demo::twice", "")
        return True
    except RuntimeError:
        return False
before = present()
ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)   # a plain dlopen, not torch's loader
after = present()
y = torch.ops.opreg_demo.twice(torch.ones(2)).tolist() if after else None
print(before, after, y)
"""


@claim(
    "library.registered-on-load",
    question="op-registration",
    statement="所以注册不需要任何人调用：在一个新进程里，加载 .so 之前 dispatcher 里没有 `opreg_demo::twice`；"
    "只用 `ctypes` 做一次普通的 dlopen（不调用任何注册函数），它就出现了，并且能调用。",
    expect={"before_load": False, "after_load": True, "result": [2.0, 2.0]},
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    so = build()["so"]
    out = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, str(so)], capture_output=True, text=True, check=True,
                         timeout=120).stdout.split(maxsplit=2)
    return {"before_load": out[0] == "True", "after_load": out[1] == "True",
            "result": eval(out[2]) if out[2].strip() != "None" else None}  # noqa: S307  (our own print)


@claim(
    "library.no-meta-kernel",
    question="op-registration",
    statement="对 Meta tensor 调用一个没有 Meta kernel、也没有 fake 实现的算子，抛出 `NotImplementedError`；"
    "`torch.compile` / `torch.export` 追踪形状时走的就是这一列，所以自定义算子要补 fake 实现。",
    raises=("NotImplementedError", "Meta"),
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    build()
    ctx.observe(meta_column=table_kinds("opreg_demo::twice").get("Meta"))
    try:
        torch.ops.opreg_demo.twice(torch.empty(3, device="meta"))
    except NotImplementedError as exc:
        ctx.observe(message=str(exc).split(". ")[0])
        raise


@claim(
    "library.no-autograd-kernel",
    question="op-registration",
    statement="没有注册 Autograd kernel 的 C++ 算子调用时不报错：前向没有任何警告，反向时只给 {backward_warnings} 条"
    "“an autograd kernel was not registered to the Autograd key(s)” 的警告，梯度却是 {grad_value:g}，正确值是 "
    "{correct_value:g}，因为 kernel 内部先 `clone` 再直接改写数据，autograd 只看见了那次 `clone`。",
    expect={
        "forward_warnings": 0,
        "backward_warnings": {">=": 1},
        "warning": {"contains": "an autograd kernel was not registered to the Autograd key(s)"},
        "grad": [1.0, 1.0, 1.0],
        "correct_grad": [2.0, 2.0, 2.0],
        "grad_value": 1.0,
        "correct_value": 2.0,
        "grad_fn": "CloneBackward0",
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    build()
    x = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.ops.opreg_demo.twice(x)
        forward = len(caught)
        y.sum().backward()
        backward = len(caught) - forward
    msgs = [str(w.message) for w in caught]
    ref = torch.ones(3, requires_grad=True)  # the same function, 2 * x, through ops autograd knows
    (ref * 2).sum().backward()
    return {
        "forward_warnings": forward,
        "backward_warnings": backward,
        "warning": msgs[-1].split(". ")[0] if msgs else "",
        "grad_fn": type(y.grad_fn).__name__,
        "grad": x.grad.tolist(),
        "correct_grad": ref.grad.tolist(),
        "grad_value": x.grad[0].item(),
        "correct_value": ref.grad[0].item(),
        "autograd_fallback_mode": torch._C._get_autograd_fallback_mode(),
    }


@claim(
    "library.cuda-kernel",
    question="op-registration",
    statement="在 GPU 上，对 CUDA tensor 调用同一个算子，dispatcher 按 CUDA 键选中 `TORCH_LIBRARY_IMPL(…, CUDA, …)` "
    "注册的 kernel，CPU kernel 不被调用。",
    expect={"calls_delta": [0, 1], "result": [0.0, 2.0, 4.0, 6.0], "device": "cuda:0"},
    needs=["cuda", "g++"],
    timeout=240,
)
def _(ctx):
    build()
    before = list(torch.ops.opreg_demo.kernel_calls())
    y = torch.ops.opreg_demo.twice(torch.arange(4.0, device="cuda"))
    after = list(torch.ops.opreg_demo.kernel_calls())
    return {"calls_delta": [a - b for a, b in zip(after, before)], "result": y.cpu().tolist(),
            "device": str(y.device)}
