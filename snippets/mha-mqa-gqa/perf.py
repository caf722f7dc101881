"""One decode step's attention against a long cache: MHA against GQA and MQA, and GQA done by
copying K/V up to MHA's shape first."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from snippets._workloads.overhead import single_thread
from verify import timing
from verify.claim import claim

Q = "mha-mqa-gqa"
# The timing runs on one CPU thread (single_thread): a parallel region of two threads stalls whenever
# another process holds one of the cores, and that stall, not the work, would then be what is measured.


def repeat_kv(x, g):
    """K/V expanded to one head per query head, as many model implementations do before SDPA (a copy)."""
    b, h, t, dh = x.shape
    return x[:, :, None].expand(b, h, g, t, dh).reshape(b, h * g, t, dh)


def grouped(q, k, v):
    """Attention of a one-token query with the query heads of a group stacked as rows: K/V read once per group."""
    b, hq, _, dh = q.shape
    hkv = k.shape[1]
    qg = q.view(b, hkv, hq // hkv, dh)
    w = ((qg @ k.transpose(-2, -1)) * dh ** -0.5).softmax(-1)
    return (w @ v).view(b, hq, 1, dh)


@claim("gqa.decode-time", question=Q, kind="perf",
       statement="在 CPU 上单线程计时解码一步（batch {=1}、{=8} 个查询头、上下文 {=8192} 个 token、FP32，每层 K/V 缓存 "
                 "MHA {kv_bytes.mha:bytes}、GQA {kv_bytes.gqa:bytes}）：同一种分组矩阵乘写法下，MHA 要 {timings.mha_grouped}，"
                 "GQA 要 {timings.gqa_grouped}，快 {grouped_speedup:x}，因为要读的缓存少了；先用 `repeat_kv` 把 GQA 的 K/V "
                 "复制成 MHA 的形状再调 SDPA，要 {timings.gqa_repeat_kv}，是直接算 MHA（{timings.mha_sdpa}）的 "
                 "{repeat_over_mha:x}。这个倍数只属于 CPU：每次复制都新申请一块 MHA 大小的内存、从缺页开始写，"
                 "比按字节估出来的多得多。",
       expect={"grouped_speedup": {">=": 1.2}, "repeat_over_mha": {">": 1.0}, "same_result": True})
def _(ctx):
    # 8 query heads, 8192 cached positions of head_dim 128 in fp32: MHA's K and V are 32 MiB each,
    # far beyond any CPU cache, so the step is bound by reading them. GQA (2 KV heads) reads a
    # quarter of that with the same code: faster anywhere the read dominates (1.55x at the least under
    # verify stress, with MKL on its reproducible path; >= 1.2 keeps room). repeat_kv
    # writes MHA-sized K/V and then reads them: strictly more memory traffic than MHA itself.
    # CPU on purpose: on a GPU this read takes microseconds and kernel launches would dominate.
    hq, dh, b, t = 8, 128, 1, 8192
    g = torch.Generator().manual_seed(0)
    q = torch.randn(b, hq, 1, dh, generator=g)
    kv = {h: (torch.randn(b, h, t, dh, generator=g), torch.randn(b, h, t, dh, generator=g)) for h in (8, 2, 1)}
    (k8, v8), (k2, v2), (k1, v1) = kv[8], kv[2], kv[1]
    variants = {
        "mha_sdpa": lambda: F.scaled_dot_product_attention(q, k8, v8),
        "gqa_sdpa": lambda: F.scaled_dot_product_attention(q, k2, v2, enable_gqa=True),
        "mqa_sdpa": lambda: F.scaled_dot_product_attention(q, k1, v1, enable_gqa=True),
        "mha_grouped": lambda: grouped(q, k8, v8),
        "gqa_grouped": lambda: grouped(q, k2, v2),
        "gqa_repeat_kv": lambda: F.scaled_dot_product_attention(q, repeat_kv(k2, 4), repeat_kv(v2, 4)),
    }
    ref = F.scaled_dot_product_attention(q, k2, v2, enable_gqa=True)
    same = all(torch.allclose(ref, f(), atol=1e-5, rtol=1e-4)
               for name, f in variants.items() if name.startswith("gqa"))
    with single_thread():
        tm = timing.compare(variants, rounds=15, warmup=3)
    return {
        "timings": tm, "batch": b, "hq": hq, "ctx_len": t, "same_result": same,
        "kv_bytes": {name: 2 * k.numel() * k.element_size() for name, (k, _) in
                     (("mha", kv[8]), ("gqa", kv[2]), ("mqa", kv[1]))},
        "grouped_speedup": timing.ratio(tm, "mha_grouped", "gqa_grouped"),
        "sdpa_speedup": timing.ratio(tm, "mha_sdpa", "gqa_sdpa"),
        "mqa_sdpa_speedup": timing.ratio(tm, "mha_sdpa", "mqa_sdpa"),
        "repeat_over_mha": timing.ratio(tm, "gqa_repeat_kv", "mha_sdpa"),
    }


@claim("gqa.repeat-kv-page-faults", kind="measured", question=Q,
       statement="CPU 上 `repeat_kv` 慢在哪：同样的 {=2} 个 KV 头、上下文 {=8192}、FP32，每次调用都新申请 MHA 形状的 K、V "
                 "副本（共 {copy_bytes:bytes}），这块内存是刚从内核要来的新页，一次调用缺页 {repeat_faults:,} 次（按每页 "
                 "{page:bytes} 算是 {faulted_bytes:bytes}，差不多就是整个副本）；直接调 MHA 的 SDPA、带 `enable_gqa` 的 SDPA "
                 "分别缺页 {mha_faults} 次和 {gqa_faults} 次。",
       expect={"repeat_faults": {">": 0}, "mha_faults": {"<": 16}, "gqa_faults": {"<": 16}})
def _(ctx):
    # torch's CPU allocator does not cache; glibc serves a block this large with mmap and gives it back
    # with munmap on free, so every call writes its copy into pages the kernel has to fault in first.
    import resource  # noqa: PLC0415

    hq, dh, b, t = 8, 128, 1, 8192
    g = torch.Generator().manual_seed(0)
    q = torch.randn(b, hq, 1, dh, generator=g)
    k8, v8 = torch.randn(b, hq, t, dh, generator=g), torch.randn(b, hq, t, dh, generator=g)
    k2, v2 = torch.randn(b, 2, t, dh, generator=g), torch.randn(b, 2, t, dh, generator=g)
    calls = {
        "mha": lambda: F.scaled_dot_product_attention(q, k8, v8),
        "gqa": lambda: F.scaled_dot_product_attention(q, k2, v2, enable_gqa=True),
        "repeat": lambda: F.scaled_dot_product_attention(q, repeat_kv(k2, 4), repeat_kv(v2, 4)),
    }
    faults = {}
    for name, f in calls.items():
        f()  # warm: first-call allocations of the kernel itself are not what is counted
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        f()
        faults[name] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    page = resource.getpagesize()
    return {"repeat_faults": faults["repeat"], "mha_faults": faults["mha"], "gqa_faults": faults["gqa"], "page": page,
            "faulted_bytes": faults["repeat"] * page, "copy_bytes": 2 * k8.numel() * k8.element_size()}
