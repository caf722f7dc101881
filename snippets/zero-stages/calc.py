"""计算题 of this question: model-state bytes per GPU under each ZeRO stage, and the claim that checks them.

Mixed-precision Adam keeps, per parameter, 2 bytes of BF16 weights, 2 of BF16 gradients and 12 of
FP32 optimizer state (master weights, m, v). Stage 1 shards the 12, stage 2 the gradients too,
stage 3 the weights as well. The claim builds those tensors for a small model, shards them the way
each stage does across N ranks, and compares what rank 0 holds with the formula.
"""

from __future__ import annotations

from verify.claim import claim

Q = "zero-stages"
GIB = 2**30
WEIGHTS, GRADS, OPTIM = 2, 2, 12  # bytes per parameter: BF16 weights and gradients, FP32 master + m + v


def model_state_bytes(params: float, stage: int, gpus: int) -> float:
    """Bytes of weights, gradients and optimizer state one GPU holds (the ZeRO paper's accounting)."""
    sharded = {0: (), 1: ("optim",), 2: ("optim", "grads"), 3: ("optim", "grads", "weights")}[stage]
    parts = {"weights": WEIGHTS, "grads": GRADS, "optim": OPTIM}
    return sum(params * b / (gpus if name in sharded else 1) for name, b in parts.items())


def _billions(x: float) -> str:
    return f"{x:g}B"


CALCULATORS = [
    {"id": "zero-model-states", "question": Q, "claim": "zero.calc-formula",
     "prompt": "用 BF16 混合精度加 Adam 训练一个 {params} 参数的模型（每参数：BF16 权重 2 字节、BF16 梯度 2 字节、"
               "FP32 主权重与 m、v 共 12 字节），数据并行 {gpus} 张卡、ZeRO stage {stage}。不算激活，每张卡上的模型状态"
               "（权重、梯度、优化器状态）一共多少 GiB？",
     "params": {"params": [1.3e9, 7e9, 13e9, 70e9], "stage": [0, 1, 2, 3], "gpus": [8, 16, 64]},
     "answer": model_state_bytes, "unit": "GiB", "scale": GIB, "tolerance": 0.02,
     "shown": {"params": lambda p: _billions(p / 1e9)},
     "explain": "stage 0：16Ψ；stage 1：4Ψ + 12Ψ/N；stage 2：2Ψ + 14Ψ/N；stage 3：16Ψ/N（Ψ 是参数量，N 是卡数）。"},
]


@claim("zero.calc-formula", question=Q,
       statement="每卡模型状态的公式和真实的切分一致：给一个 {=1,000,003} 参数的模型建出 BF16 权重、BF16 梯度和 FP32 的主权重、m、v，"
                 "按各 stage 的做法在 {=4} 个 rank 间切（`torch.chunk`，最后一块可以略小），rank 0 持有的字节数与 "
                 "16Ψ、4Ψ + 12Ψ/N、2Ψ + 14Ψ/N、16Ψ/N 相比，最大相对差 {worst:.1e}（只差不能整除的余数）；"
                 "模拟面试的计算题用的就是这个公式。",
       expect={"worst": {"<": 1e-5}, "stages": 4})
def _(ctx):
    import torch

    psi, n = 1_000_003, 4
    tensors = {"weights": torch.zeros(psi, dtype=torch.bfloat16), "grads": torch.zeros(psi, dtype=torch.bfloat16),
               "optim": [torch.zeros(psi, dtype=torch.float32) for _ in range(3)]}
    sharded = {0: (), 1: ("optim",), 2: ("optim", "grads"), 3: ("optim", "grads", "weights")}
    worst = 0.0
    for stage, names in sharded.items():
        held = 0
        for name, value in tensors.items():
            for t in value if isinstance(value, list) else [value]:
                piece = t.chunk(n)[0] if name in names else t
                held += piece.numel() * piece.element_size()
        worst = max(worst, abs(held - model_state_bytes(psi, stage, n)) / held)
    return {"worst": worst, "stages": len(sharded)}


@claim("zero.calc-items", question=Q,
       statement="模拟面试里 ZeRO 的 {n_items} 道计算题按每卡模型状态的公式出答案；按每道题的参数量、stage 和卡数在 meta 设备上"
                 "建出权重、梯度和优化器状态，把该 stage 切分的那几样切成卡数份，第 0 份（rank 0 那份）加上不切的，"
                 "字节数与答案{equal:?每道都相等|有不相等的}。",
       expect={"equal": True, "n_items": 6})
def _(ctx):
    """The quiz's items of this question, each answer checked against a real sharding of its model."""
    import torch

    from snippets._calc import checked, same

    def again(_calc, p):
        psi, n = int(p["params"]), p["gpus"]
        names = {0: (), 1: ("optim",), 2: ("optim", "grads"), 3: ("optim", "grads", "weights")}[p["stage"]]
        tensors = {"weights": [torch.empty(psi, dtype=torch.bfloat16, device="meta")],
                   "grads": [torch.empty(psi, dtype=torch.bfloat16, device="meta")],
                   "optim": [torch.empty(psi, dtype=torch.float32, device="meta") for _ in range(3)]}
        return sum(piece.numel() * piece.element_size() for name, ts in tensors.items() for t in ts
                   for piece in [t.chunk(n)[0] if name in names else t])

    quiz, pairs = checked(CALCULATORS, again)
    return {"equal": same(pairs), "n_items": len(pairs), "calc_items": quiz}
