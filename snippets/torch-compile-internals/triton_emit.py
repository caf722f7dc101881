"""The Triton half of Inductor with no GPU: the kernel source Inductor's Triton code generator emits for an
element-wise chain, then that kernel compiled by the pinned Triton for sm_90a (PTX, SASS, resources). Nothing runs
on a GPU: no time, no result.

Inductor only emits Triton for a CUDA device or for its ``cpu_backend="triton"``; this machine has neither a GPU
nor a Triton CPU backend. The claim asks the CPU Triton backend for the code (the code generator is the same
``TritonKernel`` for both) and stops it before it compiles for the CPU, which needs a driver: the content hash
of the Triton install that the generator puts in the kernel's metadata is replaced by a constant, and the
generated source is taken from ``TritonScheduling.define_kernel``.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any
from unittest import mock

import torch

from snippets._gpu import compiled
from verify import toolchain
from verify.claim import claim

Q = "torch-compile-internals"


def _chain(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() * 2 + 1).relu()


def _inductor_triton_source() -> tuple[str, str]:
    """The Triton kernel Inductor generates for ``_chain`` on 1024 float32 elements, and its name."""
    import torch._inductor.config as iconfig  # noqa: PLC0415
    import torch.utils._triton as triton_utils  # noqa: PLC0415
    from torch._inductor.codegen.triton import TritonScheduling  # noqa: PLC0415

    emitted: list[tuple[str, str]] = []
    define = TritonScheduling.define_kernel

    def keep(self: Any, src_code: str, *args: Any, **kwargs: Any) -> str:
        name = define(self, src_code, *args, **kwargs)
        emitted.append((src_code, name))
        return name

    torch._dynamo.reset()
    with iconfig.patch(cpu_backend="triton"), mock.patch.object(TritonScheduling, "define_kernel", keep), \
            mock.patch.object(triton_utils, "triton_hash_with_backend", lambda: "0" * 64):
        try:
            torch.compile(_chain)(torch.randn(1024))
        except Exception:  # noqa: BLE001, S110 - compiling for the CPU needs a Triton CPU backend; the source is out by then
            pass
    torch._dynamo.reset()
    if not emitted:
        raise RuntimeError("Inductor emitted no Triton kernel")
    src, name = emitted[0]
    return src.replace("Placeholder.KERNEL_NAME", name), name


def _load_kernel(ctx: Any, src: str, name: str) -> Any:
    """The emitted kernel as a ``triton.jit`` function: the source without Inductor's launcher decorator and its
    CPU-driver line, written to a file (Triton reads a kernel's source from its file)."""
    lines = src.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("@triton_heuristics."))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("@triton.jit"))
    body = [ln for ln in lines[:start] + lines[end:] if "set_driver_to_cpu" not in ln]
    path = ctx.path(f"{name}.py")
    path.write_text("\n".join(body) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@claim(
    "inductor.triton-kernel",
    question=Q,
    statement="同一条链（{=1024} 个 float32，静态形状），在没有 GPU 的机器上让 Inductor 的 Triton 代码生成器走 `cpu_backend=\"triton\"` 出代码"
              "（换掉一个私有步骤，在为 CPU 编译之前取出源码）：kernel `{kernel_name}` 里每个 program 处理 `XBLOCK` 个元素，`xmask` 挡住越界，"
              "{loads} 次 `tl.load`、{stores} 次 `tl.store`，中间值只是局部变量；去掉 Inductor 的启动装饰器后，由 Triton 按 `XBLOCK`={xblock}、{num_warps} 个 warp、"
              "指针按 `tt.divisibility=16` 对齐（本论断给的假设）编译成 sm_90a 的 PTX（没有在 GPU 上运行）：读写都是每线程一次 4 个 float 的向量指令"
              "（`ld.global.v4` {ptx_v4_loads} 条、`st.global.v4` {ptx_v4_stores} 条），每线程 {registers} 个寄存器、共享内存 {shared:bytes}。",
    expect={"kernel_name": {"contains": "triton_poi_fused"}, "blocked": True, "loads": 1, "stores": 1, "masked": True,
            "ptx_v4_loads": {">=": 1}, "ptx_v4_stores": {">=": 1}, "shared": 0, "registers": {"between": [16, 64]},
            "ptx_target": "sm_90a"},
    needs=["triton"],
    timeout=240,
)
def _(ctx):
    """The kernel Inductor emits (taken from its cpu_backend="triton" path), compiled with XBLOCK=1024 and 4 warps; not run.

    范围：torch 2.13 Inductor，Triton 3.9，sm_90a
    """
    toolchain.activate()
    src, name = _inductor_triton_source()
    kernel = _load_kernel(ctx, src, name)
    xblock, num_warps = 1024, 4  # chosen here, not by Inductor: the registers and vector widths depend on them
    c = compiled.triton_kernel(ctx, kernel, {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"},
                               {"XBLOCK": xblock}, target="sm_90a", num_warps=num_warps, num_stages=1,
                               divisible=("in_ptr0", "out_ptr0", "xnumel"))
    body = src.split("@triton.jit", 1)[1]
    return {
        "kernel_name": name, "xblock": xblock, "num_warps": num_warps, "loads": body.count("tl.load("), "stores": body.count("tl.store("),
        "masked": "xmask = xindex < xnumel" in body, "blocked": "tl.program_id(0) * XBLOCK" in body, "source": body.strip()[:1500],
        "ptx_v4_loads": len(re.findall(r"ld\.global\S*\.v4", c.ptx)), "ptx_v4_stores": len(re.findall(r"st\.global\S*\.v4", c.ptx)),
        "registers": c.registers, "shared": c.shared, "ptx_target": c.ptx_target,
        "sass_ops": dict(c.sass_ops.most_common(12)),
    }
