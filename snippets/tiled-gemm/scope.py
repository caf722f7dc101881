"""PyTorch's TF32 defaults, matmul against cuDNN convolution (read from the installed torch; no GPU needed),
and how much of L2 the first wave of the grouped tile order asks for."""

from __future__ import annotations

import subprocess
import sys

import torch

from snippets._gpu import interp, specs
from snippets import _sibling as sibling
from verify.claim import claim

Q = "tiled-gemm"

# Set the matmul switch with the new API, then read it back with the legacy one (a fresh interpreter:
# the flags are process-wide and must not leak into other claims).
_MIXED = """
import torch
torch.backends.cuda.matmul.fp32_precision = "tf32"
try:
    torch.backends.cuda.matmul.allow_tf32
    print("read")
except RuntimeError as e:
    print("RuntimeError", "mix of the legacy and new APIs" in str(e))
"""


@claim(
    "tgemm.torch-tf32-defaults",
    question=Q,
    statement="这里装的 torch {version} 的默认：矩阵乘 `torch.backends.cuda.matmul.allow_tf32` {matmul_allow_tf32:?开着|关着}"
              "（`get_float32_matmul_precision()` 是 `{matmul_precision}`，新接口 `torch.backends.cuda.matmul.fp32_precision` 是 "
              "`{matmul_fp32_precision}`，即没用新接口设过），cuDNN 的 `torch.backends.cudnn.allow_tf32` "
              "{cudnn_allow_tf32:?开着|关着}，新接口 `torch.backends.cudnn.conv.fp32_precision` 是 `{conv_fp32_precision}`：fp32 矩阵乘默认不走 TF32，"
              "fp32 卷积默认走。在一个新进程里先用新接口设 `matmul.fp32_precision = \"tf32\"`，再读旧的 `matmul.allow_tf32`："
              "{mixed_read_raises:?报 RuntimeError（新旧接口混用）|照常读出}。",
    expect={"matmul_allow_tf32": False, "matmul_precision": "highest", "matmul_fp32_precision": "none",
            "cudnn_allow_tf32": True, "conv_fp32_precision": "tf32", "mixed_read_raises": True},
    min_torch="2.9",
)
def _(ctx):
    mixed = subprocess.run([sys.executable, "-c", _MIXED], capture_output=True, text=True, timeout=120, check=True).stdout.split()
    return {"version": torch.__version__.split("+")[0], "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "matmul_precision": torch.get_float32_matmul_precision(),
            "matmul_fp32_precision": torch.backends.cuda.matmul.fp32_precision,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "conv_fp32_precision": torch.backends.cudnn.conv.fp32_precision,
            "mixed_read_raises": mixed == ["RuntimeError", "True"]}


def _gemm(ctx):
    """The kernels of gemm.py beside this file (its claims are not run from here)."""
    return sibling.load(ctx.snippet_dir() / "gemm.py")


@claim(
    "tgemm.grouped-wave-vs-l2",
    question=Q,
    statement="同一个 {=8192}³ 的 fp16 GEMM、128×128 tile、GROUP_M={=8} 的分组顺序，第一波 {sms} 个 tile 碰到 {a_panels} 个 A 行条和 "
              "{b_panels} 个 B 列条，整条（沿整个 K）加起来 {unique_bytes:bytes}，是 H100 SXM 的 L2（{l2:bytes}）的 {whole_over_l2:.2f} 倍："
              "{whole_fits:?整条都留得下|L2 还要放 C 的写和别的数据，整条留不全}。沿 K 每步 BK={=64}，这些条当前那一段加起来只有 {slice_bytes:bytes}。",
    expect={"a_panels": 8, "b_panels": 17, "whole_over_l2": {">=": 1.0}, "whole_fits": False, "slice_fits": True},
    needs=["triton"],
)
def _(ctx):
    """范围：8192³、128×128 tile、H100 SXM 的 132 个 SM"""
    size, bm, bk = 8192, 128, 64
    sms, l2 = int(specs.get(ctx, "H100 SXM", "sms")), int(specs.get(ctx, "H100 SXM", "l2_bytes"))
    k = interp.kernel(ctx, _gemm(ctx).tile_order_kernel)
    pm, pn = torch.empty(sms, dtype=torch.int32), torch.empty(sms, dtype=torch.int32)
    k[(sms,)](pm, pn, size, size, BM=bm, BN=bm, GROUP_M=8)  # the first wave: programs 0 .. sms-1
    a_panels, b_panels = len(set(pm.tolist())), len(set(pn.tolist()))
    unique = (a_panels + b_panels) * size * bm * 2
    piece = (a_panels + b_panels) * bm * bk * 2
    return {"sms": sms, "l2": l2, "a_panels": a_panels, "b_panels": b_panels, "unique_bytes": unique,
            "whole_over_l2": unique / l2, "whole_fits": unique < l2, "slice_bytes": piece, "slice_fits": piece < l2}
