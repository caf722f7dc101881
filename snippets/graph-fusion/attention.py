"""Attention as the complex fusion: SDPA against attention written out, on the CPU."""

from __future__ import annotations

import functools

import torch
from torch.profiler import ProfilerActivity, profile

from snippets._workloads.fusion import naive_attention, sdpa_attention
from verify.claim import claim

B, H, N, D = 1, 4, 1024, 64


def _qkv():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, N, D, generator=g) for _ in range(3))


def _peak_bytes(prof) -> int:
    """Peak of bytes allocated during the profile, from the profiler's allocation timeline.

    Tensors that existed before the profile (q, k, v) are not counted: this is the memory the
    attention itself needs on top of its inputs.
    """
    live = peak = 0
    for _, action, _, size in prof._memory_profile().timeline:
        if action.name == "CREATE":
            live += size
        elif action.name == "DESTROY":
            live -= size
        peak = max(peak, live)
    return peak


@functools.cache
def _profiles():
    q, k, v = _qkv()
    out = {}
    for name, fn in (("naive", naive_attention), ("sdpa", sdpa_attention)):
        fn(q, k, v)  # warm: one-time allocations are not part of the comparison
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                     with_stack=True) as prof:
            result = fn(q, k, v)
            del result
        out[name] = prof
    return out


def _ops_with_shape(prof, shape) -> list[str]:
    return sorted({e.name for e in prof.events() if any(list(s) == list(shape) for s in (e.input_shapes or []))})


@claim(
    "attention.no-nxn",
    question="graph-fusion",
    statement="SDPA 在 CPU 上走融合的 flash attention 实现，(B, H, N, N) 的注意力分数矩阵从没作为张量出现；手写版本里它是矩阵乘的结果，再被除、softmax 各读写一遍。两者结果一致。",
    expect={"naive_ops_on_scores": {"contains": "aten::_softmax"}, "sdpa_ops_on_scores": [],
            "sdpa_kernel": {"contains": "flash_attention"}, "same_result": True},
)
def _(ctx):
    q, k, v = _qkv()
    profs = _profiles()
    scores = (B, H, N, N)
    kernels = [e.name for e in profs["sdpa"].events() if e.name.startswith("aten::_scaled_dot_product")]
    return {
        "scores_shape": list(scores),
        "naive_ops_on_scores": _ops_with_shape(profs["naive"], scores),
        "sdpa_ops_on_scores": _ops_with_shape(profs["sdpa"], scores),
        "sdpa_kernel": kernels[0] if kernels else None,
        "same_result": torch.allclose(naive_attention(q, k, v), sdpa_attention(q, k, v), atol=1e-5),
    }


@claim(
    "attention.peak-memory",
    question="graph-fusion",
    statement="峰值内存：N=1024、4 个头时，手写 attention 同时持有两份 N×N 的分数矩阵（各 16 MiB），峰值约 33 MiB；SDPA 的峰值只有输出加少量分块缓冲区，约 1.6 MiB，小一个数量级以上。",
    expect={"naive_peak_over_scores": {">=": 1.9}, "sdpa_peak_over_scores": {"<": 0.2},
            "peak_ratio": {">=": 10}},
)
def _(ctx):
    profs = _profiles()
    scores_bytes = B * H * N * N * 4
    naive, sdpa = _peak_bytes(profs["naive"]), _peak_bytes(profs["sdpa"])
    return {
        "scores_MiB": scores_bytes / 2**20,
        "naive_peak_MiB": round(naive / 2**20, 2),
        "sdpa_peak_MiB": round(sdpa / 2**20, 2),
        "output_MiB": B * H * N * D * 4 / 2**20,
        "naive_peak_over_scores": round(naive / scores_bytes, 3),
        "sdpa_peak_over_scores": round(sdpa / scores_bytes, 3),
        "peak_ratio": round(naive / sdpa, 1),
    }
