"""How DDP cuts parameters into buckets: the function its constructor and its rebuild both call,
``dist._compute_bucket_assignment_by_size``, run on tensors listed in gradient-ready order."""

import torch
import torch.distributed as dist

from verify.claim import claim

Q = "ddp-bucketing"
MiB = 1024 * 1024


@claim("ddp.bucket-assignment", question=Q,
       statement="分桶只看大小、dtype 和顺序：按就绪顺序排好的张量，上限取 DDP 的两个默认值时，"
                 "桶 0 是张量 {buckets.0}（{bytes.0:bytes}，装进越过上限的那个才关上）；唯一的 fp16 张量 {fp16_index} "
                 "单独成桶 {fp16_bucket}，桶从不混装 dtype；一个 {big_bytes:bytes} 的张量在上限只有 {small_cap:bytes} "
                 "时也整个放进一个桶（{big_n_buckets} 个桶），张量从不被拆开。",
       expect={"buckets": {"0": [0, 1, 2], "1": [3, 4, 6], "2": [5]}, "bytes": {"0": 1069096, "1": 4720640, "2": 1024},
               "fp16_index": 5, "fp16_bucket": [5], "big_buckets": [[0]], "big_n_buckets": 1, "big_bytes": 4194304})
def _(ctx):
    # Gradient-ready order of a small network: the head first, then a 1 MiB and a 4 MiB weight, one
    # fp16 tensor, and a 512 KiB weight last.
    tensors = [torch.empty(10, 512), torch.empty(10), torch.empty(512, 512), torch.empty(512),
               torch.empty(1024, 1024), torch.empty(512, dtype=torch.float16), torch.empty(512, 256)]
    first_cap, cap = dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * MiB
    buckets, _limits = dist._compute_bucket_assignment_by_size(tensors, [first_cap, cap])
    nbytes = {str(i): sum(tensors[j].numel() * tensors[j].element_size() for j in b) for i, b in enumerate(buckets)}
    fp16 = next(i for i, t in enumerate(tensors) if t.dtype == torch.float16)
    big = torch.empty(1024, 1024)
    big_buckets, _ = dist._compute_bucket_assignment_by_size([big], [MiB])
    return {"buckets": {str(i): b for i, b in enumerate(buckets)}, "bytes": nbytes, "first_cap": first_cap, "cap": cap,
            "fp16_index": fp16, "fp16_bucket": next(b for b in buckets if fp16 in b),
            "big_buckets": big_buckets, "big_n_buckets": len(big_buckets), "big_bytes": big.numel() * big.element_size(), "small_cap": MiB}
