"""How a KV cache grows in memory: appending with torch.cat against a preallocated (static) cache."""

from __future__ import annotations

import torch

from verify.claim import claim

Q = "kv-cache"

# One layer's K of a small model: batch 1, 4 KV heads, head_dim 64, fp32.
HEADS, DH = 4, 64


def _grow_with_cat(device, prompt, steps):
    """Append one position per step with torch.cat; returns pointers seen and bytes written."""
    k = torch.zeros(1, HEADS, prompt, DH, device=device)
    ptrs, written = [k.data_ptr()], 0
    for _ in range(steps):
        new = torch.ones(1, HEADS, 1, DH, device=device)
        k = torch.cat((k, new), dim=2)  # a new tensor: the old content is copied, then the new row
        written += k.numel() * k.element_size()
        ptrs.append(k.data_ptr())
    return k, ptrs, written


def _grow_static(device, prompt, steps):
    """A buffer sized for the whole generation up front; each step writes one position in place."""
    buf = torch.zeros(1, HEADS, prompt + steps, DH, device=device)
    ptrs, written = [buf.data_ptr()], 0
    for t in range(prompt, prompt + steps):
        new = torch.ones(1, HEADS, 1, DH, device=device)
        buf[:, :, t:t + 1] = new
        written += new.numel() * new.element_size()
        ptrs.append(buf.data_ptr())
    return buf, ptrs, written


@claim("kvcache.cat-rewrites", question=Q,
       statement="用 `torch.cat` 往缓存里追加，每一步都新分配一块张量、把旧内容整段再写一遍：从 {prompt} 个位置"
                 "追加到 {final} 个，{steps} 步里数据指针换了 {cat_new_ptrs} 次，共写了 {cat_written:bytes}，"
                 "是最终缓存大小（{final_bytes:bytes}）的 {cat_over_final:x}；预先按最大长度分配的静态缓存原地写入，"
                 "指针始终不变（换了 {static_new_ptrs} 次），只写了新增的 {static_written:bytes}。",
       expect={"cat_new_ptrs": 64, "static_new_ptrs": 0, "same_content": True,
               "cat_written": 4 * 64 * 4 * (64 * 128 + 64 * 65 // 2), "static_written": 64 * 4 * 64 * 4})
def _(ctx):
    prompt, steps = 128, 64
    a, pa, wa = _grow_with_cat(ctx.device, prompt, steps)
    b, pb, wb = _grow_static(ctx.device, prompt, steps)
    final = a.numel() * a.element_size()
    return {"prompt": prompt, "final": a.shape[2], "steps": steps,
            "cat_new_ptrs": sum(x != y for x, y in zip(pa, pa[1:])),
            "static_new_ptrs": sum(x != y for x, y in zip(pb, pb[1:])),
            "cat_written": wa, "static_written": wb, "final_bytes": final, "cat_over_final": wa / final,
            "same_content": torch.equal(a, b)}


@claim("kvcache.cuda-cat-peak", question=Q, needs=["cuda"],
       statement="在 GPU 上，一块 {old_bytes:bytes} 的缓存用 `torch.cat` 追加一个位置时，`max_memory_allocated` "
                 "比追加前多出 {peak_delta:bytes}，比整块旧缓存还大：新旧两份同时在显存里；往静态缓存里原地写入同一个"
                 "位置，峰值多出 {static_peak_delta:bytes}。",
       expect={"peak_delta": {">": 16 * 1024 * 1024}, "static_peak_delta": 0})
def _(ctx):
    """GPU 上 16 MiB（1×8×4096×128、FP32）的缓存用 torch.cat 追加一个位置、与往 4097 长的静态缓存原地写入时的显存峰值增量。"""
    k = torch.zeros(1, 8, 4096, 128, device="cuda")  # 16 MiB
    new = torch.ones(1, 8, 1, 128, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.max_memory_allocated()
    k2 = torch.cat((k, new), dim=2)
    torch.cuda.synchronize()
    peak_delta = torch.cuda.max_memory_allocated() - before
    del k2
    buf = torch.zeros(1, 8, 4097, 128, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.max_memory_allocated()
    buf[:, :, 4096:4097] = new
    torch.cuda.synchronize()
    static_delta = torch.cuda.max_memory_allocated() - before
    return {"old_bytes": k.numel() * k.element_size(), "peak_delta": peak_delta, "static_peak_delta": static_delta}
