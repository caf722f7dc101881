"""What W8A8 buys on the GPU, from the published rates: int8 Tensor Cores against FP16."""

from snippets._gpu import specs
from verify.claim import claim

Q = "smoothquant"


@claim("sq.int8-spec-rate", question=Q,
       statement="按规格，A100 SXM 的稠密 int8 Tensor Core 是 {a100.int8:.0f} TOPS，FP16 是 {a100.fp16:.0f} TFLOPS"
                 "（{a100.int8_over_fp16:x}）；H100 SXM 上是 {h100.int8:.0f} 对 {h100.fp16:.1f}（{h100.int8_over_fp16:x}），"
                 "FP8 与 int8 同为 {h100.fp8:.0f}。W8A8 的矩阵乘算力上限因此比 FP16 翻了一番，读的字节减半；实际能拿到多少，"
                 "要看量化、反量化这些 kernel 外的开销。",
       expect={"a100_ratio": 2.0, "h100_ratio": {"approx": [2.0, 0.001]}, "h100_fp8_equals_int8": True})
def _(ctx):
    out = {}
    for key, gpu in (("a100", "A100 SXM 80GB"), ("h100", "H100 SXM")):
        int8, fp16 = specs.get(ctx, gpu, "int8_dense_ops"), specs.get(ctx, gpu, "fp16_dense_flops")
        out[key] = {"int8": int8 / 1e12, "fp16": fp16 / 1e12, "int8_over_fp16": int8 / fp16}
        out[f"{key}_ratio"] = int8 / fp16
    out["h100"]["fp8"] = specs.get(ctx, "H100 SXM", "fp8_dense_flops") / 1e12
    out["h100_fp8_equals_int8"] = out["h100"]["fp8"] == out["h100"]["int8"]
    return out
