"""计算题 of this question: the roofline's lower bound on a GEMM's time, from the spec table's peak and bandwidth.

A kernel takes at least max(FLOPs ÷ peak FLOP/s, bytes ÷ HBM bandwidth). The quiz draws a GEMM shape
and a GPU, states the GPU's dense BF16 Tensor Core peak and HBM bandwidth from the spec table, and
asks for that bound. The claims take the FLOPs ``FlopCounterMode`` counts for a real ``torch.mm``
(meta tensors) and its tensors' bytes, the rates from the spec table, and compare with the formula.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "gpu-memory-hierarchy"
BF16 = 2


def _rates(gpu: str) -> tuple[float, float]:
    """The spec table's dense BF16 Tensor Core FLOP/s and HBM bytes/s of ``gpu``."""
    return specs.GPUS[gpu]["bf16_dense_flops"].value, specs.GPUS[gpu]["hbm_bytes_per_s"].value


def roofline_us(gpu: str, m: int, n: int, k: int) -> float:
    """Microseconds the roofline allows a BF16 GEMM at least: the larger of compute time and HBM time."""
    peak, bandwidth = _rates(gpu)
    return 1e6 * max(2 * m * n * k / peak, (m * k + k * n + m * n) * BF16 / bandwidth)


def _gpu_words(gpu: str) -> str:
    peak, bandwidth = _rates(gpu)
    return f"{gpu}（规格表：dense BF16 Tensor Core {peak / 1e12:g} TFLOP/s，HBM {bandwidth / 1e12:g} TB/s）"


def _worked(gpu: str, m: int, n: int, k: int) -> str:
    peak, bandwidth = _rates(gpu)
    return (f"max(2×{m}×{n}×{k} FLOP ÷ {peak / 1e12:g}e12 FLOP/s, "
            f"({m}×{k} + {k}×{n} + {m}×{n}) × 2 字节 ÷ {bandwidth / 1e12:g}e12 字节/s)")


CALCULATORS = [
    {"id": "roofline-gemm", "question": Q, "claim": "spec.calc-roofline",
     "prompt": "在 {gpu}上做一个 BF16 矩阵乘 C = A·B：A 是 {m}×{k}，B 是 {k}×{n}，C 是 {m}×{n}（每元素 2 字节）。"
               "一次乘加算 2 次 FLOP，A、B 从 HBM 各读一次、C 写回一次，算力和带宽都按峰值。按 roofline，"
               "这个 kernel 至少要多少微秒？",
     "params": {"gpu": ["A100 SXM 80GB", "H100 SXM", "H200 SXM"], "m": [1, 32, 256, 2048, 8192],
                "n": [4096, 8192, 28672], "k": [4096, 8192]},
     "answer": roofline_us, "unit": "µs", "tolerance": 0.02, "shown": {"gpu": _gpu_words}, "worked": _worked,
     "explain": "时间下限 = max(FLOPs ÷ 峰值算力, 字节 ÷ HBM 带宽)；FLOPs = 2·M·N·K，字节 = (M·K + K·N + M·N) × 2。"
                "强度（FLOPs ÷ 字节）低于 ridge（峰值 ÷ 带宽）时取带宽那一项，高于时取算力那一项。"},
]

SHAPES = [("H100 SXM", 1, 4096, 4096), ("A100 SXM 80GB", 8192, 8192, 8192), ("H200 SXM", 64, 96, 32)]


def _measured(ctx, gpu: str, m: int, n: int, k: int) -> float:
    """The bound from what PyTorch counts (FLOPs of ``torch.mm``, bytes of its tensors) and the spec table."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    a = torch.empty(m, k, dtype=torch.bfloat16, device="meta")
    b = torch.empty(k, n, dtype=torch.bfloat16, device="meta")
    with FlopCounterMode(display=False) as counter:
        c = torch.mm(a, b)
    nbytes = sum(t.numel() * t.element_size() for t in (a, b, c))
    peak = specs.get(ctx, gpu, "bf16_dense_flops")
    bandwidth = specs.get(ctx, gpu, "hbm_bytes_per_s")
    return 1e6 * max(counter.get_total_flops() / peak, nbytes / bandwidth)


@claim("spec.calc-roofline", question=Q,
       statement="roofline 的时间下限公式和 PyTorch 数出来的一致：{n_shapes} 个 BF16 GEMM，`FlopCounterMode` 数出的 FLOPs "
                 "除以规格表的 dense BF16 峰值、三个张量的字节数除以 HBM 带宽，取大者，与公式{equal:?处处相等|有不相等的}。"
                 "按它，H100 SXM 上 {=1}×{=4096} 乘 {=4096}×{=4096} 的 GEMV 至少 {gemv_us:.1f} µs，由带宽决定，"
                 "算力只要 {gemv_compute_us:.3f} µs。模拟面试的计算题用的就是这个公式。",
       expect={"equal": True, "n_shapes": 3, "gemv_bandwidth_bound": True})
def _(ctx):
    equal = all(_measured(ctx, *shape) == roofline_us(*shape) for shape in SHAPES)
    peak, _bw = _rates("H100 SXM")
    gemv = roofline_us("H100 SXM", 1, 4096, 4096)
    compute = 1e6 * 2 * 4096 * 4096 / peak
    return {"equal": equal, "n_shapes": len(SHAPES), "gemv_us": gemv, "gemv_compute_us": compute,
            "gemv_bandwidth_bound": gemv > 10 * compute}


@claim("spec.calc-roofline-items", question=Q,
       statement="模拟面试里 roofline 的 {n_items} 道计算题按这个公式出答案；按每道题的 GPU 和形状在 meta 设备上做一次 "
                 "`torch.mm`，数出的 FLOPs、字节和规格表的峰值、带宽算出的下限与答案{equal:?每道都相等|有不相等的}；"
                 "其中 {bandwidth_bound} 道由带宽决定。",
       expect={"equal": True, "n_items": 6})
def _(ctx):
    """The quiz's items of this question, each answer found again from counted FLOPs and bytes."""
    from snippets._calc import checked, same

    quiz, pairs = checked(CALCULATORS, lambda _calc, p: _measured(ctx, **p))
    by_bandwidth = 0
    for p in (item["params"] for item, _found in pairs):
        peak, bandwidth = _rates(p["gpu"])
        by_bandwidth += 2 * p["m"] * p["n"] * p["k"] / peak < (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"]) * BF16 / bandwidth
    return {"equal": same(pairs), "n_items": len(pairs), "bandwidth_bound": by_bandwidth, "calc_items": quiz}
