"""How many thread blocks (CTAs) each version launches, against the SM count of published specs; and the paper figures.

FA1 launches one CTA per (batch, head) and FA2 adds the sequence dimension, one CTA per (batch, head, block of
B_r queries), both as the FlashAttention-2 paper describes them (section 3.2). For decoding,
FA2's ``set_params_splitkv`` (``csrc/flash_attn/flash_api.cpp``) picks a number of K/V splits with
``num_splits_heuristic``, re-implemented here: if the CTAs almost fill the GPU (>= 80% of 2 x SMs, two CTAs of
128 threads per SM), one split; else the smallest split count whose wave efficiency (waves / ceil(waves)) is
within 85% of the best, skipping counts that give the same blocks per split as one fewer. FA2 runs it only when the
caller passes num_splits <= 0 (``flash_attn_with_kvcache``'s default). Arithmetic only. The paper figures
(paper.json) are those of the FlashAttention-3 paper's first arXiv version (2407.08608v1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from snippets._gpu import specs
from verify.claim import claim

Q = "flash-attention-2-3"
GPUS = {"h100": "H100 SXM", "a100": "A100 SXM 80GB"}


def num_splits(ctas, sms, n_blocks, max_splits=128, skip=True):
    """FA2's num_splits_heuristic (flash_api.cpp), written out; ``sms`` is what FA2 passes: 2 x the SM count.

    ``skip=False`` drops the rule that skips split counts, to show what that rule changes.
    """
    if ctas >= 0.8 * sms:
        return 1
    max_splits = min(max_splits, sms, n_blocks)

    def eligible(s):
        return not skip or s == 1 or math.ceil(n_blocks / s) != math.ceil(n_blocks / (s - 1))

    eff = {s: (w := ctas * s / sms) / math.ceil(w) for s in range(1, max_splits + 1) if eligible(s)}
    best = max(eff.values())
    return min(s for s, e in eff.items() if e >= 0.85 * best)


@claim(
    "fa23.ctas-prefill",
    question=Q,
    statement="长序列、小 batch 时第一版填不满 GPU：batch {batch}、{heads} 个头、N={n} 的前向，第一版每个 (batch, head) 一个线程块，"
              "共 {fa1_ctas} 个，H100 SXM 有 {h100.sms} 个 SM，每 SM 放一个线程块也只用上 {h100.fa1_busy:pct}（A100 的 {a100.sms} 个 SM 用上 "
              "{a100.fa1_busy:pct}）；第二版再按 B_r={br} 行的 Q 块切，共 {fa2_ctas:,} 个线程块，是 H100 SM 数的 {h100.fa2_waves:.1f} 倍。",
    expect={"fa1_ctas": 32, "fa2_ctas": 2048, "h100_sms": 132, "h100_fa1_busy": {"approx": [0.2424, 1e-3]},
            "a100_sms": 108, "a100_fa1_busy": {"approx": [0.2963, 1e-3]}},
)
def _(ctx):
    """Thread blocks per launch, against the published SM counts.

    范围：batch 2、16 头、N=8192，H100/A100 规格
    """
    batch, heads, n, br = 2, 16, 8192, 128
    fa1, fa2 = batch * heads, batch * heads * math.ceil(n / br)
    out = {"batch": batch, "heads": heads, "n": n, "br": br, "fa1_ctas": fa1, "fa2_ctas": fa2}
    for key, gpu in GPUS.items():
        sms = int(specs.get(ctx, gpu, "sms"))
        out[key] = {"sms": sms, "fa1_busy": min(fa1, sms) / sms, "fa2_waves": fa2 / sms}
    return out | _flat(out)


def skipped(max_splits, n_blocks):
    """Split counts up to ``max_splits`` that the heuristic skips: same blocks per split as one split fewer."""
    return [s for s in range(2, max_splits + 1) if math.ceil(n_blocks / s) == math.ceil(n_blocks / (s - 1))]


def _flat(out):
    """The per-GPU values again as top-level keys (expectations name top-level keys)."""
    return {f"{gpu}_{k}": v for gpu in GPUS for k, v in out[gpu].items()}


@claim(
    "fa23.decode-splits",
    question=Q,
    statement="解码时每个请求只有一个查询：batch {batch}、{heads} 个头、d={d}、KV 长 {kv_len} 的一步，不切 KV 只有 "
              "{ctas} 个线程块（Q 块只有 1 个）。照 FlashAttention-2 的 `num_splits_heuristic` 算（它把 SM 数乘 2 代入），"
              "H100 SXM（{h100.sms} 个 SM）切成 {h100.splits} 段、共 {h100.ctas} 个线程块，A100（{a100.sms} 个）切成 {a100.splits} 段、"
              "共 {a100.ctas} 个；各段的 fp32 部分输出和 logsumexp 写出再读回，H100 上是 {h100.partial_bytes:bytes}，"
              "只是这一步读 KV cache（fp16，{kv_bytes:bytes}）的 {h100.partial_share:pct}。段数由整波效率、段数上限（不超过 KV 块数）和"
              "“每段块数不能与少切一段相同”三条规则一起定，不随 KV 长度单调：KV 长 {short_len}（{short_blocks} 个块）时 "
              "H100 切成 {h100.short_splits} 段，A100 切成 {a100.short_splits} 段：段数上限是 {short_blocks}，其中 {skipped_text} 段"
              "每段都是 2 块、与少切一段相同，全被跳过；没有跳过这条规则，两者会是 {h100.short_noskip} 段和 {a100.short_noskip} 段。",
    expect={"ctas": 32, "h100_splits": 7, "h100_ctas": 224, "h100_partial_share": {"<": 0.01}, "h100_short_splits": 8,
            "a100_splits": 6, "a100_ctas": 192, "a100_short_splits": 4, "kv_bytes": 134217728, "short_blocks": 8,
            "h100_short_skipped": [5, 6, 7], "h100_short_noskip": 7,
            "a100_short_skipped": [5, 6, 7], "a100_short_noskip": 6},
)
def _(ctx):
    """FA2's split count for one decode step, from the published SM counts.

    范围：FA2 切分规则，batch 1、32 头、d=128
    """
    batch, heads, d, kv_len, short_len = 1, 32, 128, 8192, 1024
    block_n = 256 if d <= 64 else (128 if d <= 128 else 64)  # flash_api.cpp: must match the splitkv dispatch
    ctas = batch * heads * 1  # ceil(seqlen_q / 64) = 1 query block
    kv_bytes = 2 * batch * heads * kv_len * d * 2
    short_blocks = math.ceil(short_len / block_n)
    out = {"batch": batch, "heads": heads, "d": d, "kv_len": kv_len, "short_len": short_len, "ctas": ctas,
           "block_n": block_n, "kv_bytes": kv_bytes, "short_blocks": short_blocks}
    for key, gpu in GPUS.items():
        sms = int(specs.get(ctx, gpu, "sms"))
        s = num_splits(ctas, 2 * sms, math.ceil(kv_len / block_n))
        partial = 2 * s * batch * heads * (d + 1) * 4  # written by the split kernel, read by the combine kernel
        out[key] = {"sms": sms, "splits": s, "ctas": ctas * s, "partial_bytes": partial,
                    "partial_share": partial / kv_bytes,
                    "short_splits": num_splits(ctas, 2 * sms, short_blocks),
                    "short_skipped": skipped(min(128, 2 * sms, short_blocks), short_blocks),
                    "short_noskip": num_splits(ctas, 2 * sms, short_blocks, skip=False)}
    out["skipped_text"] = "、".join(map(str, out["h100"]["short_skipped"]))
    return out | _flat(out)


@claim(
    "fa23.nonmatmul-cost-spec",
    question=Q,
    statement="第二版为什么要省非矩阵乘运算：按公开规格，A100 的 FP16 Tensor Core 稠密算力是 FP32 CUDA core 的 {a100:.1f} 倍，"
              "H100 SXM 是 {h100:.1f} 倍；乘、加、比较走的是后者。exp 走的是更慢的特殊函数单元（SFU）：FlashAttention-3 论文"
              "（arXiv v1）给的 H100 SXM5 数字是 FP16 矩阵乘 {paper_matmul_tflops:.0f} TFLOPS、特殊函数只有 {paper_sfu_tflops:.1f} TFLOPS，"
              "两数相除差 {h100_sfu:.0f} 倍。所以占矩阵乘 FLOP 比例很小的非矩阵乘运算，按这些比例折算成时间就不再是小头。"
              "按同一张规格表，H100 SXM 的 FP8 稠密算力是 FP16 的 {fp8_over_fp16:.0f} 倍，矩阵乘更快，exp 占的时间比例只会更大。",
    expect={"a100": {"approx": [16.0, 1e-3]}, "h100": {"approx": [14.77, 1e-3]}, "h100_sfu": {"approx": [253.6, 1e-3]},
            "sfu_slower_than_cuda_core": True, "fp8_over_fp16": 2.0},
)
def _(ctx):
    """Tensor Core FP16 dense rate over FP32 CUDA-core rate (spec table), and over the special-function rate (FA3 paper).

    范围：A100/H100 规格，FA3 论文 v1 的 SFU 数字
    """
    paper = _paper(ctx)
    out = {key: specs.get(ctx, gpu, "fp16_dense_flops") / specs.get(ctx, gpu, "fp32_flops") for key, gpu in GPUS.items()}
    matmul, sfu = paper["h100_fp16_matmul_flops"]["value"], paper["h100_special_function_flops"]["value"]
    return out | {"paper_matmul_tflops": matmul / 1e12, "paper_sfu_tflops": sfu / 1e12, "h100_sfu": matmul / sfu,
                  "sfu_slower_than_cuda_core": sfu < specs.get(ctx, "H100 SXM", "fp32_flops"),
                  "fp8_over_fp16": specs.get(ctx, "H100 SXM", "fp8_dense_flops") / specs.get(ctx, "H100 SXM", "fp16_dense_flops")}


def _paper(ctx):
    """The FA3 paper's figures (paper.json), each source recorded in the observation."""
    paper = json.loads((Path(__file__).parent / "paper.json").read_text(encoding="utf-8"))
    for key, v in paper.items():
        ctx.observed.setdefault("sources", {})[key] = v["source"]
    return paper


@claim(
    "fa23.fa3-paper-utilization",
    question=Q,
    statement="FlashAttention-3 论文（Shah 等 2024，arXiv v1 的摘要）报告的 H100 前向吞吐：FP16 最高 {fp16_tflops:.0f} TFLOPs/s，"
              "FP8 接近 {fp8_tflops:.0f} TFLOPs/s，FlashAttention-2 在 H100 上只有 {fa2_util:pct} 的利用率。下面是本页按 H100 SXM "
              "的公开稠密峰值折算的（不是论文原文的数）：FP16 是峰值的 {fp16_util:pct}，FP8 是 FP8 峰值的 {fp8_util:pct}，"
              "FlashAttention-2 的 {fa2_util:pct} 约合 {fa2_tflops:.0f} TFLOPs/s。这些吞吐是论文的数字，这里没有测。",
    expect={"fp16_util": {"approx": [0.7479, 1e-3]}, "fp8_util": {"approx": [0.6064, 1e-3]},
            "fa2_tflops": {"approx": [346.3, 1e-3]}},
)
def _(ctx):
    """The FA3 paper's throughput figures (paper.json, arXiv v1) over H100 SXM's dense peaks (spec table).

    范围：FA3 论文 arXiv v1 的数字，H100 规格
    """
    paper = _paper(ctx)
    fp16 = specs.get(ctx, "H100 SXM", "fp16_dense_flops")
    fp8 = specs.get(ctx, "H100 SXM", "fp8_dense_flops")
    return {"fp16_tflops": paper["fa3_fp16_flops"]["value"] / 1e12, "fp16_util": paper["fa3_fp16_flops"]["value"] / fp16,
            "fp8_tflops": paper["fa3_fp8_flops"]["value"] / 1e12, "fp8_util": paper["fa3_fp8_flops"]["value"] / fp8,
            "fa2_util": paper["fa2_h100_utilization"]["value"],
            "fa2_tflops": paper["fa2_h100_utilization"]["value"] * fp16 / 1e12}
