"""TF32: FP32's exponent with FP16's mantissa, off by default for matmuls, on for cuDNN convolutions; its rate and its error."""

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "amp-bf16-fp16"
N = 1024


@claim("amp.tf32-defaults", question=Q,
       statement="FP32 的矩阵乘在 GPU 上默认不走 TF32：torch {version} 里 `torch.backends.cuda.matmul.allow_tf32` 默认"
                 "{matmul_tf32:?打开|关闭}，`torch.get_float32_matmul_precision()` 默认是“{precision}”；调成 `\"high\"` 后 "
                 "`allow_tf32` {high_turns_on:?随之打开|仍然关闭}（新接口 `torch.backends.cuda.matmul.fp32_precision` 读出 "
                 "“{high_fp32_precision}”）。卷积不一样：`torch.backends.cudnn.allow_tf32` 默认{cudnn_tf32:?打开|关闭}"
                 "（`torch.backends.cudnn.conv.fp32_precision` 是“{conv_precision}”），FP32 的卷积在 A100、H100 上默认允许 cuDNN 走 TF32。",
       expect={"matmul_tf32": False, "precision": "highest", "high_turns_on": True, "high_fp32_precision": "tf32",
               "cudnn_tf32": True, "conv_precision": "tf32"})
def _(ctx):
    out = {"version": torch.__version__, "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
           "precision": torch.get_float32_matmul_precision(), "cudnn_tf32": torch.backends.cudnn.allow_tf32,
           "conv_precision": torch.backends.cudnn.conv.fp32_precision}
    try:
        torch.set_float32_matmul_precision("high")
        out["high_turns_on"] = torch.backends.cuda.matmul.allow_tf32
        out["high_fp32_precision"] = torch.backends.cuda.matmul.fp32_precision
    finally:
        torch.set_float32_matmul_precision(out["precision"])
    out["restored"] = torch.backends.cuda.matmul.allow_tf32 == out["matmul_tf32"]
    return out


@claim("amp.tf32-spec-rate", question=Q,
       statement="按规格，稠密 Tensor Core 的算力：H100 SXM 上 TF32 是 {h100.tf32:.1f} TFLOPS，只有 BF16（{h100.bf16:.1f}）的 "
                 "{h100.tf32_over_bf16:pct}，但是不用 Tensor Core 的 FP32（{h100.fp32:.0f}）的 {h100.tf32_over_fp32:x}；FP8 是 "
                 "{h100.fp8:.0f}，BF16 的 {h100.fp8_over_bf16:x}。A100 SXM 上 TF32 {a100.tf32:.0f}、BF16 {a100.bf16:.0f}，"
                 "TF32 同样是 BF16 的一半，是 FP32（{a100.fp32:.1f}）的 {a100.tf32_over_fp32:x}。",
       expect={"h100_tf32_over_bf16": {"approx": [0.5, 0.001]}, "h100_fp8_over_bf16": {"approx": [2.0, 0.001]},
               "h100_tf32_over_fp32": {">": 7}, "a100_tf32_over_bf16": 0.5, "a100_tf32_over_fp32": 8.0})
def _(ctx):
    out = {}
    for key, gpu in (("h100", "H100 SXM"), ("a100", "A100 SXM 80GB")):
        tf32, bf16 = specs.get(ctx, gpu, "tf32_dense_flops"), specs.get(ctx, gpu, "bf16_dense_flops")
        fp32 = specs.get(ctx, gpu, "fp32_flops")
        out[key] = {"tf32": tf32 / 1e12, "bf16": bf16 / 1e12, "fp32": fp32 / 1e12,
                    "tf32_over_bf16": tf32 / bf16, "tf32_over_fp32": tf32 / fp32}
    out["h100_bf16_over_fp32"] = out["h100"]["bf16"] / out["h100"]["fp32"]
    fp8 = specs.get(ctx, "H100 SXM", "fp8_dense_flops")
    out["h100"].update(fp8=fp8 / 1e12, fp8_over_bf16=fp8 / specs.get(ctx, "H100 SXM", "bf16_dense_flops"))
    for key in ("h100", "a100"):
        out.update({f"{key}_{k}": v for k, v in out[key].items() if "_over_" in k})
    return out


def to_tf32(x):
    """Round FP32 to TF32 (keep 10 of the 23 mantissa bits, nearest, ties to even); finite inputs only."""
    bits = x.view(torch.int32)
    bits = (bits + 0x0FFF + ((bits >> 13) & 1)) & ~0x1FFF
    return bits.view(torch.float32)


@claim("amp.tf32-emulated-error", question=Q,
       statement="TF32 是 19 位的计算格式：FP32 的 {=8} 位指数加 FP16 的 {=10} 位尾数，Tensor Core 读入 FP32 时丢掉低 13 位"
                 "尾数，乘积在 FP32 里累加。在 CPU 上模拟（把输入的尾数舍入到 10 位，再做 FP32 矩阵乘；这是模拟，不是在 GPU 上"
                 "测的）：舍入后低 13 位{low_bits_zero:?全是 0|不全是 0}，单个数的最大相对舍入误差 {round_rel:.3g}（2^-11 = "
                 "{half_eps:.3g}）。{=1024}×{=1024} 的随机矩阵相乘，与 FP64 参考的相对误差：FP32 {fp32_err:.1e}，TF32 "
                 "{tf32_err:.1e}（FP32 的 {tf32_over_fp32:x}），BF16 输入 {bf16_err:.1e}。乘单位矩阵也变了：TF32 下 `x @ I` 有 "
                 "{identity_changed:.2%} 的元素不等于 `x`。",
       expect={"low_bits_zero": True, "round_rel": {"<=": 2.0 ** -11}, "tf32_over_fp32": {">": 100},
               "tf32_err": {"between": [1e-4, 1e-3]}, "bf16_err": {">": 1e-3}, "identity_changed": {">": 0.9}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(N, N, generator=g), torch.randn(N, N, generator=g)
    ta, tb = to_tf32(a), to_tf32(b)
    ref = a.double() @ b.double()

    def err(c):
        return ((c.double() - ref).norm() / ref.norm()).item()

    fp32, tf32 = err(a @ b), err(ta @ tb)
    eye = torch.eye(N)
    return {"low_bits_zero": bool(((ta.view(torch.int32) & 0x1FFF) == 0).all()),
            "round_rel": ((ta - a).abs() / a.abs()).max().item(), "half_eps": 2.0 ** -11,
            "fp32_err": fp32, "tf32_err": tf32, "tf32_over_fp32": tf32 / fp32,
            "bf16_err": err(a.bfloat16() @ b.bfloat16()),
            "identity_changed": (to_tf32(a) @ to_tf32(eye) != a).float().mean().item()}
