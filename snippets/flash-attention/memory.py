"""Memory: what attention keeps for backward, and what SDPA allocates in the forward pass, as N grows."""

import torch
import torch.nn.functional as F

from snippets._workloads.memprof import allocations, memory_profile
from verify.claim import claim

Q = "flash-attention"
B = 1
H = 4
D = 64
F32 = 4  # bytes per float32


def qkv(n, requires_grad=False):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, n, D, generator=g).requires_grad_(requires_grad) for _ in range(3))


def naive_attention(q, k, v):
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    return torch.softmax(scores, -1) @ v


def saved_for_backward(fn, n):
    """Bytes of the distinct storages autograd saves for backward, and the shapes it saves."""
    q, k, v = qkv(n, requires_grad=True)
    storages, shapes = {}, []

    def pack(t):
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        shapes.append(list(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(q, k, v)
    return sum(storages.values()), shapes


@claim("flash.saved-bytes", question=Q,
       statement="省显存的大头在反向：用 `saved_tensors_hooks` 统计 autograd 为反向保存的张量（按存储去重），"
                 "N 从 {=512} 翻倍到 {=1024} 再到 {=2048}（{=4} 个头、head_dim {=64}），手写 attention 保存 "
                 "{saved.naive.n512:bytes}、{saved.naive.n1024:bytes}、{saved.naive.n2048:bytes}，其中 N×N 的 softmax 结果"
                 "占大头，最后一次翻倍涨到 {growth_naive:x}（平方增长，O(N²)）；CPU 上的 SDPA 只保存 q、k、v、输出和每行一个数的 "
                 "`logsumexp`（N={=512} 时形状依次是 {sdpa_shapes_n512}），{saved.sdpa.n512:bytes}、{saved.sdpa.n1024:bytes}、"
                 "{saved.sdpa.n2048:bytes}，每次翻倍正好涨到 {growth_sdpa:x}（O(N)）；N={=2048} 时两者差 {ratio_at_largest:x}。",
       expect={"naive_matches_formula": True, "sdpa_matches_formula": True, "growth_sdpa": 2.0, "growth_naive": {">": 3.5},
               "sdpa_shapes_n512": [[B, H, 512, D], [B, H, 512, D], [B, H, 512, D], [B, H, 512], [B, H, 512, D]]})
def _(ctx):
    ns = [512, 1024, 2048]
    saved = {"naive": {}, "sdpa": {}}
    shapes = None
    for n in ns:
        saved["naive"][f"n{n}"], _ = saved_for_backward(naive_attention, n)
        saved["sdpa"][f"n{n}"], sdpa_shapes = saved_for_backward(F.scaled_dot_product_attention, n)
        shapes = shapes or sdpa_shapes
    qkv_bytes = {n: 3 * B * H * n * D * F32 for n in ns}
    return {
        "n_small": ns[0], "n_mid": ns[1], "n_large": ns[2], "heads": H, "d": D, "saved": saved, "sdpa_shapes_n512": shapes,
        # naive: q, k, v and the (N, N) softmax output (the matmul after it saves the same tensor)
        "naive_matches_formula": all(saved["naive"][f"n{n}"] == qkv_bytes[n] + B * H * n * n * F32 for n in ns),
        # SDPA: q, k, v, the output and one float per query row
        "sdpa_matches_formula": all(saved["sdpa"][f"n{n}"] == qkv_bytes[n] + B * H * n * D * F32 + B * H * n * F32
                                    for n in ns),
        "growth_naive": saved["naive"]["n2048"] / saved["naive"]["n1024"],
        "growth_sdpa": saved["sdpa"]["n2048"] / saved["sdpa"]["n1024"],
        "ratio_at_largest": saved["naive"]["n2048"] / saved["sdpa"]["n2048"],
    }


@claim("flash.cpu-workspace", question=Q,
       statement="前向也一样：SDPA 在 CPU 上除了输出和 `logsumexp`，只分配一块工作区，N 取 {=1024}、{=2048}、{=4096} "
                 "时都是 {workspace.n1024:bytes}，{workspace_constant:?与 N 无关|随 N 变化}。它等于本机 {threads} 个线程 × "
                 "每线程一块缓冲区：一个 {=256} 行 × {=512} 列的分数块、{=256} 行的 `m` 和 `l`、"
                 "{=256} 行 × {=64} 列的输出累加器（{matches_formula:?逐字节相符|与这个算式不符}）。这块分数块就是 CPU 上的“SRAM”：它放在每个核的缓存里，"
                 "完整的 N×N 矩阵从不出现。",
       expect={"workspace_constant": True, "matches_formula": True})
def _(ctx):
    ns = [1024, 2048, 4096]
    threads = torch.get_num_threads()
    # Block sizes of aten/src/ATen/native/cpu/FlashAttentionKernel.cpp for a query length of 768 or more.
    q_split, kv_split = 256, 512
    per_thread_floats = q_split * kv_split + 2 * q_split + q_split * D
    workspace, peaks = {}, {}
    for n in ns:
        q, k, v = qkv(n)
        peak, sizes = allocations(memory_profile(lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v)))
        outputs = B * H * n * D * F32 + B * H * n * F32
        peaks[f"n{n}"] = peak
        workspace[f"n{n}"] = peak - outputs
    values = list(workspace.values())
    return {"n_small": ns[0], "n_mid": ns[1], "n_large": ns[2], "threads": threads, "q_split": q_split, "kv_split": kv_split, "d": D,
            "workspace": workspace, "peak": peaks, "workspace_constant": len(set(values)) == 1,
            "matches_formula": all(w == threads * per_thread_floats * F32 for w in values)}
