"""PyTorch's TF32 defaults, matmul against cuDNN convolution (read from the installed torch; no GPU needed)."""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "tiled-gemm"


@claim(
    "tgemm.torch-tf32-defaults",
    question=Q,
    statement="这里装的 torch {version} 的默认：矩阵乘 `torch.backends.cuda.matmul.allow_tf32` {matmul_allow_tf32:?是 True|是 False}"
              "（`get_float32_matmul_precision()` 是 `{matmul_precision}`），cuDNN 的 `torch.backends.cudnn.allow_tf32` 是 "
              "{cudnn_allow_tf32:?True|False}，新接口 `torch.backends.cudnn.conv.fp32_precision` 是 `{conv_fp32_precision}`：fp32 矩阵乘默认不走 TF32，"
              "fp32 卷积默认走。",
    expect={"matmul_allow_tf32": False, "matmul_precision": "highest", "cudnn_allow_tf32": True, "conv_fp32_precision": "tf32"},
    min_torch="2.9",
)
def _(ctx):
    return {"version": torch.__version__.split("+")[0], "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "matmul_precision": torch.get_float32_matmul_precision(), "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "conv_fp32_precision": torch.backends.cudnn.conv.fp32_precision}
