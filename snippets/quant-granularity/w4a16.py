"""Weight-only int4 (W4A16): what it buys in decode and not in prefill, how the kernel reads it, and how GPTQ and AWQ pick the codes."""

import torch

from snippets._gpu import specs
from verify.claim import claim

Q = "quant-granularity"
# Llama-7B's linear layers: 32 blocks of q, k, v, o (4096 x 4096) and gate, up, down (4096 x 11008)
HIDDEN, FFN, LAYERS = 4096, 11008, 32
GROUP = 128
PREFILL_TOKENS = 2048


@claim("quant.w4a16-decode-vs-prefill", question=Q,
       statement="按规格算 W4A16 在哪里快。Llama-7B 形状的全部线性层共 {params:,d} 个权重：FP16 存是 {fp16_bytes:bytes}，"
                 "int4 每组 {=128} 个共用一个 FP16 scale（每个权重的位数见上面的表），共 {w4_bytes:bytes}。"
                 "H100 SXM 上解码一个 token（batch 1）要把权重读一遍，只读权重的时间下限 FP16 {decode_fp16_ms:.2f} ms、W4A16 "
                 "{decode_w4_ms:.2f} ms（{decode_speedup:x}），而这一步的矩阵乘按 BF16 稠密算力只要 {decode_compute_us:.0f} µs："
                 "解码受带宽限制，字节少了就快。预填充 {=2048} 个 token 时，矩阵乘按算力要 {prefill_compute_ms:.1f} ms，远大于"
                 "读 FP16 权重的时间；W4A16 的 kernel 把权重反量化回 FP16 再用 FP16 Tensor Core 算，算力那一项不变，时间下限之比"
                 "是 {prefill_speedup:.2f}。按 H100 的算力带宽比，一次处理约 {fp16_crossover:.0f} 个 token 以上 FP16 就转为算力"
                 "受限，W4A16 在约 {w4_crossover:.0f} 个以上。",
       expect={"params": 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008), "w4_bytes_per_weight": 0.515625,
               "decode_speedup": {"between": [3.8, 3.9]}, "prefill_speedup": 1.0, "decode_memory_bound": True})
def _(ctx):
    params = LAYERS * (4 * HIDDEN * HIDDEN + 3 * HIDDEN * FFN)
    w4_per_weight = 0.5 + 2 / GROUP               # a 4-bit code, plus a 2-byte scale shared by GROUP weights
    bw = specs.get(ctx, "H100 SXM", "hbm_bytes_per_s")
    flops = specs.get(ctx, "H100 SXM", "bf16_dense_flops")
    fp16_bytes, w4_bytes = params * 2, params * w4_per_weight
    decode_compute = 2 * params / flops
    prefill_compute = 2 * params * PREFILL_TOKENS / flops

    def bound(compute, weight_bytes):              # a lower bound: the larger of compute and weight traffic
        return max(compute, weight_bytes / bw)

    return {"params": params, "fp16_bytes": fp16_bytes, "w4_bytes": w4_bytes, "w4_bytes_per_weight": w4_per_weight,
            "decode_fp16_ms": fp16_bytes / bw * 1e3, "decode_w4_ms": w4_bytes / bw * 1e3,
            "decode_speedup": bound(decode_compute, fp16_bytes) / bound(decode_compute, w4_bytes),
            "decode_compute_us": decode_compute * 1e6, "decode_memory_bound": decode_compute < w4_bytes / bw,
            "prefill_compute_ms": prefill_compute * 1e3,
            "prefill_speedup": bound(prefill_compute, fp16_bytes) / bound(prefill_compute, w4_bytes),
            "fp16_crossover": flops / bw * 2 / 2, "w4_crossover": flops / bw * w4_per_weight / 2}


def _pack(codes):
    """Unsigned 4-bit codes (0..15) -> uint8, two per byte: even columns low nibble, odd columns high nibble."""
    return codes[:, 0::2] | (codes[:, 1::2] << 4)


def _unpack(packed):
    return torch.stack((packed & 0x0F, packed >> 4), dim=-1).flatten(-2)


def quant_int4_asym(w, group=GROUP):
    """Asymmetric int4, one (scale, zero point) per group of ``group`` input elements: codes 0..15, scales, zeros."""
    wg = w.reshape(w.shape[0], -1, group)
    lo, hi = wg.amin(-1, keepdim=True), wg.amax(-1, keepdim=True)
    scale = ((hi - lo) / 15).clamp(min=1e-8)
    zero = torch.round(-lo / scale)
    codes = torch.clamp(torch.round(wg / scale) + zero, 0, 15)
    return codes.reshape(w.shape).to(torch.uint8), scale, zero


def dequant_int4(codes, scale, zero, group=GROUP):
    cg = codes.reshape(codes.shape[0], -1, group).to(scale.dtype)
    return ((cg - zero) * scale).reshape(codes.shape)


@claim("quant.w4a16-kernel-dequant", kind="measured", question=Q,
       statement="W4A16 的 kernel 里权重一直是打包的：{n}×{k} 的权重按每组 {=128} 个做非对称 int4，两个码拼一个字节，显存里是 "
                 "{packed_bytes:bytes} 的码加 {meta_bytes:bytes} 的 scale 和零点（FP16 权重是 {fp16_bytes:bytes}）。模拟 kernel 的"
                 "做法：沿 K 每次取一组，解包、减零点、乘 scale 得到 FP16 的权重块，与 FP16 的激活块相乘，在 FP32 里累加。解包出的码"
                 "与量化时的码{codes_equal:?逐个相同|不全相同}，这样算出的结果与先把整个权重反量化再做矩阵乘相差 {kernel_rel:.1e}"
                 "（相对），只差 FP32 累加顺序。",
       expect={"codes_equal": True, "kernel_rel": {"<": 1e-5}})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    n, k, tokens = 256, 1024, 8
    w = torch.randn(n, k, generator=g) * 0.02
    x = torch.randn(tokens, k, generator=g).half()
    codes, scale, zero = quant_int4_asym(w)
    scale16, zero16 = scale.half(), zero.half()
    packed = _pack(codes)
    acc = torch.zeros(tokens, n)
    for j in range(k // GROUP):                         # one K-tile per group, as the kernel's main loop
        tile = _unpack(packed[:, j * GROUP // 2:(j + 1) * GROUP // 2])
        w_tile = (tile.half() - zero16[:, j]) * scale16[:, j]
        acc += x[:, j * GROUP:(j + 1) * GROUP].float() @ w_tile.float().t()
    ref = x.float() @ dequant_int4(codes, scale16, zero16).float().t()   # the whole weight dequantized first
    return {"n": n, "k": k, "packed_bytes": packed.numel() * packed.element_size(),
            "meta_bytes": (scale16.numel() + zero16.numel()) * 2, "fp16_bytes": n * k * 2,
            "codes_equal": torch.equal(_unpack(packed), codes),
            "kernel_rel": ((acc - ref).abs().max() / ref.abs().max()).item()}


def _rtn(w, scale, qmax):
    return torch.clamp(torch.round(w / scale), -qmax, qmax) * scale


def gptq(w, x, scale, qmax, damp=0.01):
    """GPTQ (Frantar et al., Algorithm 1, without lazy batching): quantize column by column on a fixed grid,
    spreading each column's error over the columns not yet quantized through the inverse Hessian of ||XW^T||."""
    w = w.clone()
    cols = w.shape[1]
    h = 2 * x.T @ x / x.shape[0]
    h += damp * h.diagonal().mean() * torch.eye(cols, dtype=h.dtype)
    hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    q = torch.zeros_like(w)
    for i in range(cols):
        q[:, i] = _rtn(w[:, i:i + 1], scale, qmax)[:, 0]
        err = (w[:, i] - q[:, i]) / hinv[i, i]
        w[:, i:] -= err[:, None] * hinv[i, i:][None, :]
    return q


@claim("quant.gptq-vs-rtn", question=Q,
       statement="GPTQ 用同一套格点（int4、每个输出通道一个 scale），只是换一种取整：逐列量化，每量化一列，就用逆 Hessian "
                 "`(2XᵀX)⁻¹` 把这一列的误差摊到还没量化的列上（OBQ 的补偿公式）。{=64}×{=64} 的权重、{=512} 个输入彼此相关的"
                 "校准样本：输出 `XWᵀ` 的相对误差，就近取整（RTN）是 {rtn_calib:pct}，GPTQ 是 {gptq_calib:pct}；换一批没见过的"
                 "同分布输入，RTN {rtn_test:pct}、GPTQ {gptq_test:pct}。GPTQ 的码{on_grid:?仍全在同一套格点上|有的不在格点上}，"
                 "权重本身的误差反而从 {rtn_w:pct} 变成 {gptq_w:pct}：它优化的是输出，不是权重。",
       expect={"on_grid": True, "calib_better": True, "test_better": True, "gptq_weight_worse": True})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    out_f, in_f, n = 64, 64, 512
    w = torch.randn(out_f, in_f, generator=g, dtype=torch.float64) * 0.02
    mix = torch.randn(in_f, in_f, generator=g, dtype=torch.float64)   # correlated input features

    def batch():
        return torch.randn(n, in_f, generator=g, dtype=torch.float64) @ mix

    calib, test = batch(), batch()
    qmax = 7
    scale = w.abs().amax(1, keepdim=True) / qmax
    r, q = _rtn(w, scale, qmax), gptq(w, calib, scale, qmax)

    def out_err(wq, x):
        return ((x @ wq.T - x @ w.T).norm() / (x @ w.T).norm()).item()

    res = {"rtn_calib": out_err(r, calib), "gptq_calib": out_err(q, calib), "rtn_test": out_err(r, test),
           "gptq_test": out_err(q, test), "rtn_w": ((r - w).norm() / w.norm()).item(),
           "gptq_w": ((q - w).norm() / w.norm()).item(),
           "on_grid": bool(torch.allclose(q / scale, torch.round(q / scale)) and (q / scale).abs().max() <= qmax)}
    res.update(calib_better=res["gptq_calib"] < res["rtn_calib"], test_better=res["gptq_test"] < res["rtn_test"],
               gptq_weight_worse=res["gptq_w"] > res["rtn_w"])
    return res


@claim("quant.awq-scaling", kind="measured", question=Q,
       statement="AWQ 不改取整，改的是量化之前的尺度：按激活的平均幅值找出重要的输入通道，把权重的这些列乘以 "
                 "`s = mean|X_j|^α`、激活除以同一个 `s`（可以折进前一层），再做 int4 每组 {=128} 的非对称量化（AWQ 的默认设置）。"
                 "{=256}×{=512} 的权重、{=8} 个输入通道的激活放大 {=20} 倍：不缩放（α = 0）时输出误差 {err_a0:pct}；按 AWQ 的"
                 "做法在校准数据上搜 {=20} 个 α，选中 α = {best_alpha}，误差降到 {best_calib:pct}，在没见过的数据上是 "
                 "{best_test:pct}；α 取到 {=0.95} 时是 {err_a95:pct}，放大过头，其余通道的组被撑大。",
       expect={"best_alpha": {"between": [0.1, 0.7]}, "improved": True, "test_improved": True,
               "too_far_worse": True})
def _(ctx):
    g = torch.Generator().manual_seed(0)
    tokens, in_f, out_f = 512, 512, 256
    w = torch.randn(out_f, in_f, generator=g, dtype=torch.float64) * 0.02
    salient = torch.randperm(in_f, generator=g)[:8]

    def acts():
        x = torch.randn(tokens, in_f, generator=g, dtype=torch.float64)
        x[:, salient] *= 20
        return x

    calib, test = acts(), acts()
    x_mean = calib.abs().mean(0)

    def err(x, alpha):
        s = x_mean.pow(alpha).clamp(min=1e-4)
        s = s / (s.max() * s.min()).sqrt()               # as llm-awq's auto_scale normalises
        wq = dequant_int4(*quant_int4_asym(w * s))
        y = x @ w.T
        return (((x / s) @ wq.T - y).norm() / y.norm()).item()

    alphas = [i / 20 for i in range(20)]
    calib_err = {a: err(calib, a) for a in alphas}
    best = min(alphas, key=calib_err.get)
    return {"err_a0": calib_err[0.0], "best_alpha": best, "best_calib": calib_err[best],
            "best_test": err(test, best), "test_a0": err(test, 0.0), "err_a95": calib_err[0.95],
            "improved": calib_err[best] < calib_err[0.0], "test_improved": err(test, best) < err(test, 0.0),
            "too_far_worse": calib_err[0.95] > calib_err[0.0]}
