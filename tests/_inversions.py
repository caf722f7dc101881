"""Answers that say a key point's opposite, in a candidate's own words, for the real question pages.

Written from each key point's text and keywords only, without reading its ``contradicts`` list:
they are what a candidate who has it backwards says, most of them using the point's own terms
(the hard case for a keyword matcher). ``INVERSIONS``: (question id, key point index, answer).
``RIGHT``: answers that do make the point, for the same matcher: a suggestion that is never
说到了 would pass the inversions and help nobody.
"""

from __future__ import annotations

INVERSIONS: list[tuple[str, int, str]] = [
    # kv-cache
    ("kv-cache", 0, "KV cache 每层只存 Q，K/V 不追加，每一步还是要把整段重算一遍。"),
    ("kv-cache", 1, "因果掩码跟能不能缓存无关，前缀不变也不成立，双向的 BERT 一样可以用 KV cache。"),
    ("kv-cache", 1, "有没有因果掩码都行，前缀不变是因为权重不变，双向模型照样缓存。"),
    ("kv-cache", 2, "当前 token 的输出要用历史所有的 q，所以 Q 也得缓存，不再使用是错的。"),
    ("kv-cache", 3, "显存和层数、batch 都无关，只跟序列长度、字节数有关，而且按查询头数算，不是 KV 头数。"),
    ("kv-cache", 4, "有了缓存每步计算量就是常数，注意力不会线性增长，权重的矩阵乘才随长度变。"),
    ("kv-cache", 5, "decode 不受带宽限制，算术强度很高，batch 再大也不用管权重和 KV 的读。"),
    # mha-mqa-gqa
    ("mha-mqa-gqa", 0, "GQA 减少的是查询头，KV 头数不变，也没有共享，W_k 和 W_q 一起缩小。"),
    ("mha-mqa-gqa", 2, "GQA 并不省 KV cache 的显存，省的是计算，倍数关系跟 KV cache 无关。"),
    ("mha-mqa-gqa", 3, "GQA 快是因为注意力 FLOPs 不变是假的，它少算了一大半，跟访存、算术强度、解码都没关系。"),
    ("mha-mqa-gqa", 4, "直接读共享的 KV 头没必要，enable_gqa 也不用传，先复制成 MHA 形状一样快。"),
    ("mha-mqa-gqa", 6, "MLA 不缓存潜向量，而是缓存完整的每头 K/V；吸收做不到，解耦 RoPE 也不需要。"),
    # flash-attention
    ("flash-attention", 0, "FlashAttention 不分块，也不用 online softmax 修正，它还是先把 N×N 的分数矩阵整个算出来。"),
    ("flash-attention", 1, "FlashAttention 不是精确算法，误差跟低秩近似差不多，结果逐位不可能接近。"),
    ("flash-attention", 2, "它快是因为 FLOP 相同是错的：它少算了，不需要重算，HBM 读写一点没少，也不存 logsumexp。"),
    ("flash-attention", 3, "块大小和 SRAM 无关，HBM 读写也不会减少，d×d 放不放得下无所谓。"),
    ("flash-attention", 4, "causal 时 FlashAttention 也不跳过对角线以上的块，工作量一样。"),
    # softmax-online
    ("softmax-online", 0, "减最大值只是为了防上溢，和下溢无关，而且会改变结果，平移不变不成立。"),
    ("softmax-online", 1, "online softmax 不用维护最大值，修正因子没有，一遍也做不到，结果还跟块大小有关。"),
    ("softmax-online", 2, "部分的 (m, l) 不能合并，必须按顺序算，归并会改变结果，所以 split-K 没法并行。"),
    ("softmax-online", 5, "训练时直接 log(softmax) 就行，不需要 log_softmax 或 cross_entropy，也不会出现 -inf。"),
    # amp-bf16-fp16
    ("amp-bf16-fp16", 0, "BF16 的指数位比 FP16 少，范围更小，尾数位更多，所以精度比 FP16 高。"),
    ("amp-bf16-fp16", 2, "不需要保留 FP32 主权重，BF16 权重直接更新就行，FP32 累加和舍入都无所谓。"),
    ("amp-bf16-fp16", 4, "FP16 训练用不着 GradScaler，放大、跳过、unscale_ 都不用管，裁剪也不用先 unscale_。"),
    ("amp-bf16-fp16", 6, "E4M3 比 E5M2 范围大，FP8 不需要 scale，块级 scale 没有意义；TF32 跟 FP16 一样是 16 位存储。"),
    # quant-granularity
    ("quant-granularity", 1, "per-tensor 的 scale 不受离群值影响，最大值再大也不会让别的权重舍入成 0。"),
    ("quant-granularity", 2, "离群值在输入通道时 per-channel 正好能隔离它，输出通道无所谓，每一行不受影响，不需要 group-wise。"),
    ("quant-granularity", 4, "per-token 的 scale 没法提到求和外面，int32 累加后不能一次缩放，K 维上的 scale 反而可以。"),
    ("quant-granularity", 5, "ReLU 之后的非负激活用对称量化最好，零点没有用，非对称反而浪费码。"),
    ("quant-granularity", 6, "W4A16 在预填充时最快，解码时不快，带宽不是瓶颈；GPTQ 不用逆 Hessian，AWQ 也不管重要通道。"),
    # smoothquant
    ("smoothquant", 0, "激活难量化不是因为离群值，离群值也不集中在固定通道，权重才难量化。"),
    ("smoothquant", 1, "激活完全可以按输入通道量化，GEMM 的求和维上挂 scale 没问题，per-token 和 per-output-channel 没区别。"),
    ("smoothquant", 2, "SmoothQuant 不是等价变换，会改变输出；s_j 跟 α 无关，也不是几何平均。"),
    ("smoothquant", 3, "α 越大越好，α = 1 最优，误差不是 U 形，不需要校准。"),
    ("smoothquant", 4, "s 不能折进前一层，推理时要额外的除法算子；LayerNorm 的 weight 不动，GELU 前后都能折。"),
    # python-overhead
    ("python-overhead", 1, "PyTorch 每次调用没有固定开销，小张量和大张量的开销一样，跟微秒无关。"),
    ("python-overhead", 3, "CUDA 的 launch 不是异步的，每次都等 GPU 算完才返回，stream 也不会让 CPU 跑在前面。"),
    ("python-overhead", 5, "CUDA Graph 回放不要求静态地址，捕获时可以同步，reduce-overhead 的输出也不会被覆盖。"),
    ("python-overhead", 10, "TorchScript 没有弃用，仍是推荐的方式，IR 也不能序列化。"),
    # gpu-memory-hierarchy
    ("gpu-memory-hierarchy", 0, "local memory 在片上，比寄存器还快；SM 上最大的存储是 shared memory，不是寄存器文件，L2 和 HBM 都在 SM 里。"),
    ("gpu-memory-hierarchy", 2, "线程顺序打乱会破坏合并；不对齐会让 sector 数翻倍，不是多一个 sector；大步长反而不贵。"),
    ("gpu-memory-hierarchy", 3, "多个线程读同一个 word 也是 bank 冲突，不是广播；32 个 bank 每个 8 字节，补一列没用。"),
    # gpu-execution-model
    ("gpu-execution-model", 0, "SM 按单个线程调度，不是按 warp；一个 block 可以分到多个 SM 上跑，SIMT 和这没关系。"),
    ("gpu-execution-model", 2, "warp 分化时两条路径同时执行，不是依次执行，也没有汇合；warp 一致的分支也会分化。"),
    ("gpu-execution-model", 4, "occupancy 只由线程数决定，寄存器和 shared memory 不是上限，也没有分配粒度。"),
]

RIGHT: list[tuple[str, int, str]] = [
    ("kv-cache", 1, "能缓存靠因果掩码：每个位置只看过去，序列变长时前缀不变；换成双向的 BERT，缓存就作废了。"),
    ("kv-cache", 3, "KV cache 的字节数是 2 乘层数、batch、KV 头数、head_dim、序列长度和每元素字节数。"),
    ("mha-mqa-gqa", 2, "GQA 让 KV cache 按查询头数与 KV 头数之比缩小，这个倍数就是省下的显存。"),
    ("flash-attention", 4, "causal 的时候融合 kernel 直接跳过对角线以上的块，工作量差不多减半。"),
    ("softmax-online", 5, "训练时用 log_softmax 或 cross_entropy，直接 log(softmax) 会在概率下溢成 0 之后得到 -inf。"),
    ("quant-granularity", 5, "ReLU 之后的激活是非负的，对称量化浪费一半的码，加零点的非对称量化能用满。"),
    ("python-overhead", 3, "CUDA 的 launch 是异步的，提交到 stream 就返回，CPU 可以跑在 GPU 前面。"),
    ("gpu-execution-model", 0, "一个 block 整个放在一个 SM 上执行，SM 以 warp 为单位调度，这就是 SIMT。"),
]
