"""On a GPU: which fused kernel SDPA picks by dtype, and what it saves in time and memory there."""

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from verify import timing
from verify.claim import claim

Q = "flash-attention"
B = 1
H = 16
N = 4096
D = 64
FUSED = ["aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_cudnn_attention"]


def qkv(dtype, n=N):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, n, D, generator=g).to("cuda", dtype) for _ in range(3))


def naive_attention(q, k, v):
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    return torch.softmax(scores, -1) @ v


def kernel_of(q, k, v):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")]
    return names[0] if names else None


@claim("flash.cuda-kernel", question=Q, needs=["cuda"],
       statement="GPU 上后端的选择取决于 dtype：FP16 的 q、k、v 走融合 kernel {fp16_op}；FlashAttention 的 GPU kernel 只支持 "
                 "FP16 和 BF16，float32 输入改走 {fp32_op}（memory-efficient attention，同样分块、不物化 N×N）。"
                 "GPU 上 `FlopCounterMode` 能数出 SDPA 的 FLOP（N={=1024}、{=16} 个头）：{fp16_flops:,}，等于 `4·B·H·N²·D`。",
       expect={"fp16_op": {"in": FUSED}, "fp32_op": "aten::_scaled_dot_product_efficient_attention",
               "fp16_flops": 4 * B * H * 1024 * 1024 * D})
def _(ctx):
    """N=1024、16 个头时 FP16 与 float32 输入各走哪个 SDPA kernel，以及 FlopCounterMode 数出的 FP16 SDPA 的 FLOP。"""
    q16 = qkv(torch.float16, n=1024)
    q32 = qkv(torch.float32, n=1024)
    with FlopCounterMode(display=False) as counter:
        F.scaled_dot_product_attention(*q16)
    return {"fp16_op": kernel_of(*q16), "fp32_op": kernel_of(*q32), "fp16_flops": counter.get_total_flops(),
            "gpu": torch.cuda.get_device_name()}


@claim("flash.cuda-speed-memory", question=Q, needs=["cuda"], kind="perf",
       statement="在 GPU 上（FP16，N={=4096}、{=16} 个头），一份 N×N 分数矩阵有 {scores_bytes:bytes}：手写 attention 的显存峰值"
                 "增加 {peak.naive:bytes}，SDPA 只增加 {peak.sdpa:bytes}；时间上手写版 {timings.naive}，SDPA {timings.sdpa}，"
                 "快 {speedup:x}。",
       expect={"speedup": {">": 1.5}, "naive_at_least_scores": True, "sdpa_below_quarter_scores": True})
def _(ctx):
    """FP16、N=4096、16 个头时手写 attention 与 SDPA 的显存峰值增量和耗时。"""
    q, k, v = qkv(torch.float16)
    scores_bytes = B * H * N * N * 2
    peak = {}
    for name, fn in (("naive", naive_attention), ("sdpa", F.scaled_dot_product_attention)):
        fn(q, k, v)  # warm
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = fn(q, k, v)
        torch.cuda.synchronize()
        peak[name] = torch.cuda.max_memory_allocated() - base
        del out
    t = timing.compare({"naive": lambda: naive_attention(q, k, v),
                        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v)},
                       rounds=15, warmup=3, device="cuda")
    return {"n": N, "heads": H, "scores_bytes": scores_bytes, "peak": peak, "timings": t,
            "speedup": timing.ratio(t, "naive", "sdpa"),
            "naive_at_least_scores": peak["naive"] >= scores_bytes,
            "sdpa_below_quarter_scores": peak["sdpa"] < scores_bytes / 4}
