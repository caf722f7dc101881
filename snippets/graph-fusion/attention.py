"""Attention as the complex fusion: SDPA against attention written out, on the CPU."""

from __future__ import annotations

import functools

import torch
from torch.profiler import ProfilerActivity, profile

from snippets._workloads.fusion import naive_attention, sdpa_attention
from snippets._workloads.memprof import allocations, memory_profile
from verify.claim import claim

B, H, N, D = 1, 4, 1024, 64


def _qkv():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, N, D, generator=g) for _ in range(3))


@functools.cache
def _profiles():
    q, k, v = _qkv()
    out = {}
    for name, fn in (("naive", naive_attention), ("sdpa", sdpa_attention)):
        out[name] = memory_profile(lambda fn=fn: fn(q, k, v))  # warm first: one-time allocations are not compared
    return out


def _ops_with_shape(prof, shape) -> list[str]:
    return sorted({e.name for e in prof.events() if any(list(s) == list(shape) for s in (e.input_shapes or []))})


@claim(
    "attention.no-nxn",
    question="graph-fusion",
    statement="`scaled_dot_product_attention` 在 CPU 上走融合的 flash attention 实现（{sdpa_kernel}），形状为 (B, H, N, N) 的注意力分数矩阵从没作为张量出现过；手写版本里它是矩阵乘的结果，是一个真实的张量，再被除、被 softmax 各读写一遍；两者的结果一致。",
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
    statement="这直接体现在峰值内存上：N=1024、4 个头时，一份 N×N 分数矩阵是 {scores_MiB:.0f} MiB，手写 attention 的峰值是 {naive_peak_MiB:.1f} MiB，合 {naive_peak_over_scores:.2f} 份分数矩阵（分数和它的 softmax 同时活着）；SDPA 的峰值只有 {sdpa_peak_MiB:.2f} MiB，只比 {output_MiB:.0f} MiB 的输出多一点分块缓冲区，小了 {peak_ratio:x}，超过一个数量级。",
    expect={"naive_peak_over_scores": {">=": 1.9}, "sdpa_peak_over_scores": {"<": 0.2},
            "peak_ratio": {">=": 10}},
)
def _(ctx):
    """范围：CPU、float32，N=1024、4 个头的一组形状"""
    profs = _profiles()
    scores_bytes = B * H * N * N * 4
    naive, sdpa = allocations(profs["naive"])[0], allocations(profs["sdpa"])[0]  # beyond q, k, v
    return {
        "scores_MiB": scores_bytes / 2**20,
        "naive_peak_MiB": round(naive / 2**20, 2),
        "sdpa_peak_MiB": round(sdpa / 2**20, 2),
        "output_MiB": B * H * N * D * 4 / 2**20,
        "naive_peak_over_scores": round(naive / scores_bytes, 3),
        "sdpa_peak_over_scores": round(sdpa / scores_bytes, 3),
        "peak_ratio": round(naive / sdpa, 1),
    }


def _sdpa_kernel_name(prof) -> str | None:
    """The backend's own op under ``aten::scaled_dot_product_attention`` (flash or math)."""
    names = [e.name for e in prof.events()
             if e.name.startswith("aten::_scaled_dot_product") and "backward" not in e.name]
    return names[0] if names else None


def _short(name: str | None) -> str | None:
    if name is None:
        return None
    return "flash" if "flash" in name else "math" if "math" in name else name


@claim(
    "attention.backend-choice", kind="measured",
    question="graph-fusion",
    statement="CPU 上 SDPA 选哪个实现，用 profiler 看它实际调用的算子：float32 和 bfloat16、不带掩码、带布尔掩码、`is_causal=True` 这六种情况都走 {fp32_none_kernel}；`dropout_p=0.1` 时退回 {dropout_kernel}。用 `torch.nn.attention.sdpa_kernel(SDPBackend.MATH)` 强制数学实现后调用的是 {forced_math_kernel}，结果与 flash 版{math_matches_flash:?一致|不一致}；但它把分数矩阵整个算出来，峰值内存是 {math_peak_MiB:.1f} MiB，合 {math_peak_over_scores:.2f} 份 N×N 分数矩阵。",
    expect={"choices": {"float32": {"none": "flash", "bool_mask": "flash", "causal": "flash"},
                        "bfloat16": {"none": "flash", "bool_mask": "flash", "causal": "flash"}},
            "dropout_choice": "math", "forced_math_choice": "math", "math_matches_flash": True,
            "math_peak_over_scores": {">=": 1.0}, "flash_peak_over_scores": {"<": 0.2}},
)
def _(ctx):
    import torch.nn.functional as F  # noqa: PLC0415
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    g = torch.Generator().manual_seed(0)
    n_small = 256  # the choice does not depend on the length; a short one keeps the six runs fast
    mask = torch.rand(n_small, n_small, generator=g) > 0.1
    choices: dict = {}
    kernels: dict = {}
    for dtype in (torch.float32, torch.bfloat16):
        q, k, v = (torch.randn(B, H, n_small, D, generator=g).to(dtype) for _ in range(3))
        label = str(dtype).removeprefix("torch.")
        choices[label], kernels[label] = {}, {}
        for case, kw in (("none", {}), ("bool_mask", {"attn_mask": mask}), ("causal", {"is_causal": True})):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                F.scaled_dot_product_attention(q, k, v, **kw)
            kernels[label][case] = _sdpa_kernel_name(prof)
            choices[label][case] = _short(kernels[label][case])
    q, k, v = (torch.randn(B, H, n_small, D, generator=g) for _ in range(3))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
    dropout_kernel = _sdpa_kernel_name(prof)

    # forced math against the default, at the length of attention.peak-memory
    q, k, v = _qkv()
    F.scaled_dot_product_attention(q, k, v)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True, with_stack=True) as pf:
        flash_out = F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel(SDPBackend.MATH):
        F.scaled_dot_product_attention(q, k, v)
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                     with_stack=True) as pm:
            math_out = F.scaled_dot_product_attention(q, k, v)
    scores_bytes = B * H * N * N * 4
    flash_peak, math_peak = allocations(pf)[0], allocations(pm)[0]
    return {
        "kernels": kernels,
        "choices": choices,
        "fp32_none_kernel": kernels["float32"]["none"],
        "dropout_kernel": dropout_kernel,
        "dropout_choice": _short(dropout_kernel),
        "forced_math_kernel": _sdpa_kernel_name(pm),
        "forced_math_choice": _short(_sdpa_kernel_name(pm)),
        "math_matches_flash": torch.allclose(math_out, flash_out, atol=1e-5),
        "flash_peak_MiB": round(flash_peak / 2**20, 2),
        "math_peak_MiB": round(math_peak / 2**20, 2),
        "math_peak_over_scores": round(math_peak / scores_bytes, 3),
        "flash_peak_over_scores": round(flash_peak / scores_bytes, 3),
    }


@claim(
    "attention.saved-for-backward", kind="measured",
    question="graph-fusion",
    statement="反向传播同样不留 N×N：用 `torch.autograd.graph.saved_tensors_hooks` 记下前向为反向保存的张量，CPU 上的 flash 实现存的是 q、k、v、输出和形状为 {flash_lse_shape} 的 logsumexp（每行 softmax 的归一化量），除了输入和输出只多占 {flash_extra_bytes:bytes}；强制数学实现时存下了 {math_nxn_saved} 个含 N×N 个元素的张量，多占 {math_extra_bytes:bytes}。flash 的反向 {flash_backward_op} 用 q、k 和 logsumexp 把分数矩阵分块重算一遍，两种实现算出的梯度{grads_match:?一致|不一致}。",
    expect={"flash_saves_nxn": False, "flash_saves_lse": True, "math_nxn_saved": {">=": 1},
            "grads_match": True, "flash_backward_op": {"contains": "flash_attention"}},
)
def _(ctx):
    import contextlib  # noqa: PLC0415

    import torch.nn.functional as F  # noqa: PLC0415
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    n = 512
    g = torch.Generator().manual_seed(0)
    base = [torch.randn(B, H, n, D, generator=g) for _ in range(3)]
    results = {}
    for name, make in (("flash", contextlib.nullcontext), ("math", lambda: sdpa_kernel(SDPBackend.MATH))):
        q, k, v = (t.clone().requires_grad_() for t in base)
        saved: list[torch.Tensor] = []

        def pack(t, saved=saved):
            saved.append(t)
            return t

        with make(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = F.scaled_dot_product_attention(q, k, v)
        own = {t.untyped_storage().data_ptr() for t in (q, k, v, out)}
        extra = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved
                 if t.untyped_storage().data_ptr() not in own}
        with make(), profile(activities=[ProfilerActivity.CPU]) as prof:
            out.sum().backward()
        results[name] = {
            "shapes": [list(t.shape) for t in saved],
            "nxn": sum(1 for t in saved if t.numel() >= n * n and t.shape[-1] == n and t.shape[-2] == n),
            "extra_bytes": sum(extra.values()),
            "backward_ops": sorted({e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")}),
            "grads": [t.grad for t in (q, k, v)],
        }
    flash, math = results["flash"], results["math"]
    lse = [s for s in flash["shapes"] if s == [B, H, n]]
    return {
        "n": n,
        "flash_saved_shapes": flash["shapes"],
        "math_saved_shapes": math["shapes"],
        "flash_saves_nxn": flash["nxn"] > 0,
        "flash_saves_lse": bool(lse),
        "flash_lse_shape": lse[0] if lse else None,
        "flash_extra_bytes": flash["extra_bytes"],
        "math_nxn_saved": math["nxn"],
        "math_extra_bytes": math["extra_bytes"],
        "flash_backward_op": next((o for o in flash["backward_ops"] if "backward" in o), None),
        "math_backward_ops": math["backward_ops"],
        "grads_match": all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in zip(flash["grads"], math["grads"])),
    }
