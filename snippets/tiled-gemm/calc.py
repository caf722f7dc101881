"""计算题 of this question: a GEMM's FLOPs and its arithmetic intensity when each matrix crosses HBM once.

The quiz draws shapes and dtypes and asks for FLOP per byte; the claims count the FLOPs of a real
``torch.mm`` with ``FlopCounterMode`` (on meta tensors: shapes and dtypes only) and the bytes of the
three tensors it reads and writes, and compare both with the formula.
"""

from __future__ import annotations

from verify.claim import claim

Q = "tiled-gemm"
DTYPE_BYTES = {"BF16": 2, "FP16": 2, "FP32": 4}


def gemm_intensity(m: int, n: int, k: int, dtype: str) -> float:
    """2·M·N·K FLOP over (M·K + K·N + M·N) elements of ``dtype``: A and B read once, C written once."""
    return 2 * m * n * k / ((m * k + k * n + m * n) * DTYPE_BYTES[dtype])


def _worked(m: int, n: int, k: int, dtype: str) -> str:
    return f"2×{m}×{n}×{k} ÷ (({m}×{k} + {k}×{n} + {m}×{n}) × {DTYPE_BYTES[dtype]} 字节)"


CALCULATORS = [
    {"id": "gemm-intensity", "question": Q, "claim": "tgemm.calc-formula",
     "prompt": "一个矩阵乘 C = A·B：A 是 {m}×{k}，B 是 {k}×{n}，C 是 {m}×{n}，三者都是 {dtype}。"
               "一次乘加算 2 次 FLOP；假设 A、B 从 HBM 各读一次、C 写回一次，"
               "它的算术强度是多少 FLOP/字节？",
     "params": {"m": [1, 16, 128, 1024, 4096], "n": [4096, 11008, 14336], "k": [4096, 8192], "dtype": ["BF16", "FP32"]},
     "answer": gemm_intensity, "unit": "FLOP/字节", "tolerance": 0.02,
     "shown": {"dtype": lambda d: f"{d}（每元素 {DTYPE_BYTES[d]} 字节）"}, "worked": _worked,
     "explain": "FLOPs = 2·M·N·K；字节 = (M·K + K·N + M·N) × 每元素字节数；强度 = FLOPs ÷ 字节。"
                "M 很小（decode 的 GEMV）时约等于 2·M ÷ 每元素字节数，远在 ridge 之下。"},
]

SHAPES = [(7, 13, 5, "FP32"), (64, 96, 32, "BF16"), (1, 4096, 4096, "FP16")]


def _counted(m: int, n: int, k: int, dtype: str) -> tuple[int, int]:
    """FLOPs ``FlopCounterMode`` counts for ``torch.mm`` on these shapes, and the bytes of A, B and C."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    dt = {"BF16": torch.bfloat16, "FP16": torch.float16, "FP32": torch.float32}[dtype]
    a = torch.empty(m, k, dtype=dt, device="meta")
    b = torch.empty(k, n, dtype=dt, device="meta")
    with FlopCounterMode(display=False) as counter:
        c = torch.mm(a, b)
    return counter.get_total_flops(), sum(t.numel() * t.element_size() for t in (a, b, c))


@claim("tgemm.calc-formula", question=Q,
       statement="GEMM 算术强度的公式和 PyTorch 数出来的一致：{n_shapes} 种形状和 dtype 的 `torch.mm`，"
                 "`FlopCounterMode` 数出的 FLOPs ÷ A、B、C 三个张量的字节数，与 2·M·N·K ÷ ((M·K + K·N + M·N) × "
                 "每元素字节数){equal:?处处相等|有不相等的}；M = {=1} 的 {=4096}×{=4096} FP16 GEMV 只有 "
                 "{gemv:.2f} FLOP/字节。模拟面试的计算题用的就是这个公式。",
       expect={"equal": True, "n_shapes": 3, "gemv": {"<": 1.01}})
def _(ctx):
    equal = True
    for m, n, k, dtype in SHAPES:
        flops, nbytes = _counted(m, n, k, dtype)
        equal = equal and flops / nbytes == gemm_intensity(m, n, k, dtype)
    return {"equal": equal, "n_shapes": len(SHAPES), "gemv": gemm_intensity(1, 4096, 4096, "FP16")}


@claim("tgemm.calc-items", question=Q,
       statement="模拟面试里 GEMM 算术强度的 {n_items} 道计算题按这个公式出答案；按每道题的形状在 meta 设备上做一次 "
                 "`torch.mm`，`FlopCounterMode` 数出的 FLOPs ÷ 三个张量的字节数与答案{equal:?每道都相等|有不相等的}。",
       expect={"equal": True, "n_items": 6})
def _(ctx):
    """The quiz's items of this question, each answer checked against the FLOPs and bytes of its GEMM."""
    from snippets._calc import checked, same

    def again(_calc, p):
        flops, nbytes = _counted(**p)
        return flops / nbytes

    quiz, pairs = checked(CALCULATORS, again)
    return {"equal": same(pairs), "n_items": len(pairs), "calc_items": quiz}
