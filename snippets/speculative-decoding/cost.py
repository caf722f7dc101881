"""What a speculative step costs, by arithmetic, not by a clock: the roofline lower bound of one verify pass of
γ + 1 tokens against one ordinary decode step on two GPUs (published specs), and the expected speedup of the
cost model in Leviathan et al. (2023), where a draft step costs c target steps.

Both ignore what a real engine adds (attention over the KV cache, the draft's own memory traffic, sampling and
scheduling): they say when speculation can pay, not how fast a given engine is.
"""

from __future__ import annotations

from snippets._gpu import specs
from verify.claim import claim

Q = "speculative-decoding"
GPUS = {"h100": "H100 SXM", "h200": "H200 SXM"}
N = K = 4096  # one 4096x4096 bf16 weight matrix
BF16 = 2
GAMMA, ALPHA = 4, 0.8
BATCHES = (1, 16, 128)


def tokens_per_pass(alpha: float, gamma: int) -> float:
    """Expected tokens one target pass emits when every draft is accepted with probability alpha, independently."""
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def roofline(rows: int, flops_per_s: float, bytes_per_s: float) -> float:
    """Lower bound in seconds of (rows x K)·(K x N) in bf16: compute or memory, whichever is larger."""
    return max(2 * rows * N * K / flops_per_s, (rows * K + K * N + rows * N) * BF16 / bytes_per_s)


@claim("specdec.verify-roofline", question=Q,
       statement="为什么验证 γ+1 个 token 几乎不比解码 1 个贵：decode 时权重矩阵乘受带宽限制，多几行输入几乎不多读字节。按规格算一个 "
                 "{=4096}×{=4096} 的 bf16 线性层的屋顶线下界，γ = {=4}：batch 1 时验证一步是普通一步的 {ratio.h100.b1:.2f} 倍"
                 "（H100 SXM，H200 SXM 也是 {ratio.h200.b1:.2f} 倍）；batch {=16} 时 {ratio.h100.b16:.2f} 倍；batch {=128} 时行数 "
                 "{=640} 越过拐点，变成 {ratio.h100.b128:.2f} 倍（H200 SXM {ratio.h200.b128:.2f} 倍）。按 α = {=0.8} 每次验证期望产出 "
                 "{tokens:.2f} 个 token，按这个下界估算的收益（未计草稿与 attention，是理想值）从 batch 1 的 {gain.h100.b1:.2f} 倍降到 "
                 "batch 128 的 {gain.h100.b128:.2f} 倍（H100 SXM）：只看稠密层的权重，batch 越大，投机解码能省的越少。",
       expect={"memory_bound_b1": True, "compute_bound_b128": True, "gain_falls": True,
               "ratio_b1_h100": {"approx": [1.002, 1e-3]}, "ratio_b1_h200": {"approx": [1.002, 1e-3]}})
def _(ctx):
    """范围：4096² bf16 线性层，H100/H200"""
    tokens = tokens_per_pass(ALPHA, GAMMA)
    ratio, gain, mem_b1, comp_b128 = {}, {}, True, True
    for key, gpu in GPUS.items():
        f, bw = specs.get(ctx, gpu, "bf16_dense_flops"), specs.get(ctx, gpu, "hbm_bytes_per_s")
        ridge = f / bw
        ratio[key], gain[key] = {}, {}
        for b in BATCHES:
            rows = b * (GAMMA + 1)
            r = roofline(rows, f, bw) / roofline(b, f, bw)
            ratio[key][f"b{b}"], gain[key][f"b{b}"] = r, tokens / r
        mem_b1 &= 2 * (GAMMA + 1) * N * K / ((GAMMA + 1) * (K + N) + K * N) / BF16 < ridge
        comp_b128 &= 2 * 128 * (GAMMA + 1) * N * K / ((128 * (GAMMA + 1)) * (K + N) + K * N) / BF16 > ridge
    falls = all(gain[k]["b1"] > gain[k]["b16"] > gain[k]["b128"] for k in GPUS)
    return {"ratio": ratio, "gain": gain, "tokens": tokens, "memory_bound_b1": mem_b1, "compute_bound_b128": comp_b128,
            "gain_falls": falls, "ratio_b1_h100": ratio["h100"]["b1"], "ratio_b1_h200": ratio["h200"]["b1"]}


def speedup(alpha: float, gamma: int, c: float) -> float:
    """Leviathan et al.'s expected walltime improvement: tokens per pass over the cost of gamma draft steps plus one
    target step, in target steps (verification assumed as cheap as one ordinary target step)."""
    return tokens_per_pass(alpha, gamma) / (gamma * c + 1)


@claim("specdec.cost-model", question=Q,
       statement="γ 不是越大越好。按 Leviathan 等人的代价模型（草稿一步的代价是目标一步的 c 倍，验证算一步目标；是公式，不是实测）：α = {=0.8}、"
                 "c = {=0.05} 时最优 γ = {best.a08_c005}，加速 {best_speedup.a08_c005:.2f} 倍；草稿贵到 c = {=0.3} 时最优 γ 降到 "
                 "{best.a08_c03}，只有 {best_speedup.a08_c03:.2f} 倍；α = {=0.6}、c = {=0.3} 时最优 γ = {best.a06_c03}，而 γ 取 {=8} "
                 "是 {slow:.2f} 倍，比不用投机解码还慢。",
       expect={"best": {"a08_c005": 8, "a08_c03": 3, "a06_c03": 1}, "slower_than_plain": True})
def _(ctx):
    """范围：Leviathan 代价模型（公式）"""
    configs = {"a08_c005": (0.8, 0.05), "a08_c03": (0.8, 0.3), "a06_c03": (0.6, 0.3)}
    best, best_speedup = {}, {}
    for key, (alpha, c) in configs.items():
        g = max(range(1, 33), key=lambda gamma: speedup(alpha, gamma, c))
        best[key], best_speedup[key] = g, speedup(alpha, g, c)
    slow = speedup(0.6, 8, 0.3)
    return {"best": best, "best_speedup": best_speedup, "slow": slow, "slower_than_plain": slow < 1}
