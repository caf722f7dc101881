"""Why activations cannot simply be quantized per channel: which scales an integer GEMM can take."""

import torch

from snippets.smoothquant._data import activations, quantize, rel_error, weight
from verify.claim import claim
from verify.timing import compare, ratio

Q = "smoothquant"


@claim("sq.int-mm-factor", kind="measured", question=Q,
       statement="int8 矩阵乘在 int32 里累加，结果是精确的：`torch._int_mm` 对 {x_shape} 和 {w_shape} 的 int8 矩阵算出的结果是 {dtype}，"
                 "{exact:?与 int64 参考逐元素相等|与 int64 参考不全相等}。per-token 的激活 scale `s_x[i]` 和 per-output-channel 的权重 scale "
                 "`s_w[j]` 都不随求和下标 k 变，可以提到求和号外：整数结果乘上 `s_x[i]·s_w[j]`，与先反量化再做 float64 "
                 "矩阵乘的结果相对差 {factor_rel:.1e}。int8 的每个元素占 {int8_bytes:bytes}，是 FP16（{fp16_bytes:bytes}）的一半。",
       expect={"dtype": "torch.int32", "exact": True, "factor_rel": {"<": 1e-12}, "int8_bytes": 1, "fp16_bytes": 2})
def _(ctx):
    x, _ = activations()
    w = weight()
    xq, sx = quantize(x, -1)           # (tokens, 1): per token
    wq, sw = quantize(w, -1)           # (out, 1): per output channel
    a8, w8 = xq.to(torch.int8), wq.to(torch.int8)
    acc = torch._int_mm(a8, w8.t().contiguous())
    exact = torch.equal(acc.long(), a8.long() @ w8.long().t())
    y_int = acc.double() * sx * sw.t()
    y_dequant = (xq * sx) @ (wq * sw).t()
    return {"x_shape": list(a8.shape), "w_shape": list(w8.shape), "dtype": str(acc.dtype), "exact": exact,
            "factor_rel": rel_error(y_int, y_dequant), "int8_bytes": a8.element_size(),
            "fp16_bytes": torch.empty(0, dtype=torch.float16).element_size()}


def _best_outer_rescale(acc, target, iters=50):
    """Row factors r and column factors c minimising ||r_i * acc_ij * c_j - target_ij|| (alternating least squares)."""
    r = torch.ones(acc.shape[0], 1, dtype=acc.dtype)
    c = torch.ones(1, acc.shape[1], dtype=acc.dtype)
    for _ in range(iters):
        b = acc * c
        r = (target * b).sum(1, keepdim=True) / (b * b).sum(1, keepdim=True)
        b = acc * r
        c = (target * b).sum(0, keepdim=True) / (b * b).sum(0, keepdim=True)
    return r * acc * c


@claim("sq.per-channel-cannot-factor", kind="measured", question=Q,
       statement="按输入通道给激活取 scale，scale 就挂在求和下标 k 上：`Σ_k s_k·Xq[i,k]·Wq[j,k]` 不是整数矩阵乘再逐行逐列缩放能得到的。"
                 "为整数结果的每一行、每一列各自挑最好的缩放因子（交替最小二乘），与正确的反量化结果仍差 {best_rel:pct}；"
                 "整数累加用同一把尺子加总各个通道，{outliers} 个离群通道本该大得多的贡献被当成了普通通道。",
       expect={"best_rel": {">": 0.3}, "outliers": 4})
def _(ctx):
    x, idx = activations()
    w = weight()
    xq, sk = quantize(x, 0)            # (1, channels): per input channel
    wq, sw = quantize(w, -1)
    acc = (xq.to(torch.int8).long() @ wq.to(torch.int8).long().t()).double()
    target = (xq * sk) @ (wq * sw).t()
    return {"best_rel": rel_error(_best_outer_rescale(acc, target), target), "outliers": idx.numel()}


@claim("sq.cuda-int8-faster", question=Q, kind="perf", needs=["cuda"], timeout=120,
       statement="W8A8 的速度来自 int8 的 GEMM 硬件：GPU 上 {=4096}×{=4096}×{=4096} 的 `torch._int_mm`（int8 输入、int32 输出）耗时 "
                 "{times.int8:time}，同形状的 FP16 矩阵乘 {times.fp16:time}，快 {speedup:x}。",
       expect={"speedup": {">": 1.0}})
def _(ctx):
    """GPU 上 4096×4096×4096 的 int8 `torch._int_mm`（int32 输出）与同形状 FP16 矩阵乘的耗时。"""
    m = k = n = 4096
    a8 = torch.randint(-127, 128, (m, k), dtype=torch.int8, device="cuda")
    b8 = torch.randint(-127, 128, (n, k), dtype=torch.int8, device="cuda").t()  # column-major, as a weight is used
    a16, b16 = a8.half(), b8.half()
    t = compare({"int8": lambda: torch._int_mm(a8, b8), "fp16": lambda: a16 @ b16}, rounds=15, warmup=3,
                inner=5, device="cuda")
    # Which kernel each call ran. torch._int_mm reaches at::cuda::blas::int8_gemm, which calls
    # cublasLtMatmul with no algorithm and no workspace, so cuBLASLt's heuristic picks the kernel;
    # its name tells a Hopper (sm90) kernel from an older one when the speedup is small.
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415

    kernels = {}
    for name, fn in (("int8", lambda: torch._int_mm(a8, b8)), ("fp16", lambda: a16 @ b16)):
        try:
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            kernels[name] = [e.name[:120] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        except Exception as exc:  # noqa: BLE001  (only a diagnostic: the timing above is the claim)
            kernels[name] = [f"profiler failed: {type(exc).__name__}: {str(exc)[:120]}"]
    work = 2 * m * n * k
    return {"m": m, "k": k, "n": n, "times": t, "speedup": ratio(t, "fp16", "int8"), "kernels": kernels,
            "tera_ops_per_s": {name: round(work / float(v["median_s"]) / 1e12, 1) for name, v in t.items()}}
