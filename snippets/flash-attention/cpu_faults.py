"""On the CPU, what else the written-out attention pays for: fresh pages for its (N, N) temporaries."""

import resource

import torch
import torch.nn.functional as F

from verify.claim import claim

Q = "flash-attention"
B = 1
H = 4
N = 2048
D = 64
F32 = 4


def qkv():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, N, D, generator=g) for _ in range(3))


def naive_attention(q, k, v):
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    return torch.softmax(scores, -1) @ v


def minor_faults(fn, calls=3):
    """Minor page faults of the process during each of ``calls`` calls, after one call to warm."""
    fn()
    out = []
    for _ in range(calls):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        fn()
        out.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return out


@claim(
    "flash.cpu-page-faults", kind="measured",
    question=Q,
    needs=["glibc"],
    statement="CPU 上的倍数里混着一件与 GPU 无关的事：在上面同样的输入上（N={=2048}、{=4} 个头），手写 attention 每次调用触发 "
              "{naive_faults:,} 次缺页（页大小 {page:bytes}），合 {fresh_matrices:.1f} 份上面那么大的分数矩阵："
              "`q @ k.T`、乘 scale、softmax 各得到一块新内存，这么大的块 glibc 每次用 mmap 向内核要、用完就还，"
              "内核要先把每一页清零再交出来；SDPA 每次调用的缺页是 {sdpa_faults:,} 次。",
    expect={"fresh_matrices": {"approx": [3, 0.1]}, "sdpa_faults": {"<": 1000}},
)
def _(ctx):
    q, k, v = qkv()  # CPU on purpose: page faults of the host allocator are the subject
    page = resource.getpagesize()
    naive = minor_faults(lambda: naive_attention(q, k, v))
    sdpa = minor_faults(lambda: F.scaled_dot_product_attention(q, k, v))
    scores_bytes = B * H * N * N * F32
    return {"page": page, "naive_calls": naive, "sdpa_calls": sdpa, "naive_faults": min(naive),
            "sdpa_faults": max(sdpa), "scores_bytes": scores_bytes,
            "fresh_matrices": min(naive) * page / scores_bytes}
