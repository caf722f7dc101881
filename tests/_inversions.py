"""Answers that say a key point of a real question page backwards, in a candidate's own words.

Written from the key points of the pages in docs/questions/: roles swapped, directions reversed,
negated, numbers off by about ten times. Each uses at least one of the point's own words (the hard
case for a keyword rule), so the quiz shows it among 「你的回答里含这些词的句子」 for that point, and
must still pre-select nothing. ``INVERSIONS``: (question id, key point index, answer).
"""

from __future__ import annotations

INVERSIONS: list[tuple[str, int, str]] = [
    # activation-checkpoint
    ("activation-checkpoint", 0, "检查点在前向里保存段内所有的中间激活，反向时直接拿来用，不需要重算。"),
    ("activation-checkpoint", 3, "检查点不管 RNG 状态，重算时 dropout 掩码会重新随机，所以梯度和不做检查点时不相同。"),
    # amp-bf16-fp16
    ("amp-bf16-fp16", 1, "FP16 的上限是 6550.4；下溢是突然的，没有次正规数，小于 finfo.tiny 直接变 0。"),
    ("amp-bf16-fp16", 4, "BF16 训练必须用 GradScaler，FP16 反而不需要；梯度裁剪要在 unscale_ 之前做。"),
    # autograd-engine
    ("autograd-engine", 2, "每次 backward 会覆盖 .grad，不会累加；zero_grad 默认把梯度填成 0，retain_graph 没什么用。"),
    ("autograd-engine", 3, "detach() 会复制一份数据，不和原张量共享存储；要共享存储得用 clone()。"),
    # conv-cost-and-algorithms
    ("conv-cost-and-algorithms", 0, "按 FLOP 算卷积的计算量不用乘 2，一次乘加就算一个 FLOP，MAC 数是 FLOP 的两倍。"),
    ("conv-cost-and-algorithms", 4, "FFT 卷积在小核时划算，大核反而亏：它的开销随 K² 涨，直接卷积基本不随 K 变。"),
    ("conv-cost-and-algorithms", 6, "训练模式的 BN 可以折叠进前面的卷积，eval 模式用 batch 统计量，所以不能折叠。"),
    # cpp-virtual-functions
    ("cpp-virtual-functions", 0, "虚表每个对象一份，存在堆上；同类对象的 vptr 各不相同。"),
    ("cpp-virtual-functions", 2, "基类构造函数里调用虚函数会走到派生类的版本，因为 vptr 一开始就指向派生类的虚表。"),
    # ddp-bucketing
    ("ddp-bucketing", 1, "DDP 的 all-reduce 对梯度求和之后不取平均，world_size 只影响桶的个数。"),
    ("ddp-bucketing", 5, "分桶减少了通信量，每步只 all-reduce 一部分梯度；no_sync 里的反向照样通信。"),
    ("ddp-bucketing", 7, "DataParallel 是多进程的，每张卡一个进程，不用 replicate 模型，也没有主卡。"),
    # flash-attention
    ("flash-attention", 1, "FlashAttention 是近似算法，误差和低秩注意力一个量级，但结果与普通实现逐位相同。"),
    ("flash-attention", 4, "causal 时 kernel 不会跳过任何块，对角线以上的块也照算，工作量和非 causal 一样。"),
    # gpu-execution-model
    ("gpu-execution-model", 1, "block 内线程按 y 最快的顺序线性编号，blockDim 为 (16,16) 时一个 warp 正好是一列。"),
    ("gpu-execution-model", 4, "occupancy 只看寄存器，shared memory 和线程数都不影响，寄存器按线程逐个分配。"),
    # gpu-memory-hierarchy
    ("gpu-memory-hierarchy", 1, "合并访存按 request 数算代价：一个 warp 读连续的 fp32 要 32 个 sector，步长越大 sector 越少。"),
    ("gpu-memory-hierarchy", 3, "shared memory 有 16 个 bank，多个线程读同一个 word 会冲突，补一列也没用。"),
    # graph-fusion
    ("graph-fusion", 0, "融合省的主要是计算量，中间结果的读写不变，kernel launch 次数反而增加。"),
    ("graph-fusion", 3, "torch.compile 默认就把 GEMM 交给 Triton 模板，epilogue 总是融进 GEMM，不需要 max-autotune。"),
    # kv-cache
    ("kv-cache", 2, "Q 也得缓存：当前 token 的输出要用全部历史的 q，历史 q 之后还会反复使用。"),
    ("kv-cache", 3, "KV cache 的显存按查询头数算，跟层数和 batch 无关。"),
    ("kv-cache", 5, "decode 是计算受限的，batch 越大权重的算术强度越低，和带宽没关系。"),
    # lru-cache
    ("lru-cache", 0, "LRU 用单向链表加数组就行：get 命中把节点挪到表尾，满了删表头。"),
    ("lru-cache", 3, "get 只读不写，读写锁的读锁下并发 get 没问题，不需要互斥锁。"),
    # mha-mqa-gqa
    ("mha-mqa-gqa", 0, "GQA 缩小的是 W_q 和查询头数，KV 头数保持和 MHA 一样。"),
    ("mha-mqa-gqa", 1, "分组是交错的，把 K/V 展开成 MHA 形状要用 repeat，用 repeat_interleave 会报错。"),
    # moe-expert-parallel
    ("moe-expert-parallel", 0, "路由器给每个 token 选 top-k 个专家后只取分数最高那个专家的输出，不做加权和，每个 token 用到全部专家参数。"),
    ("moe-expert-parallel", 2, "负载均衡辅助损失里 f_i 是可导的，梯度从 f_i 走，P_i 只是计数；不加它路由器也不会塌缩。"),
    # norm-layers
    ("norm-layers", 1, "torch.no_grad() 会把 BatchNorm 切到推理模式，不会更新 running 统计，所以验证时不用 model.eval()。"),
    ("norm-layers", 4, "说 RMSNorm 不减均值是错的，它和 LayerNorm 一样减均值，对输入平移不变，权重可以互换。"),
    # op-registration
    ("op-registration", 3, "宏展开成的静态对象要等 main 里第一次调用算子时才构造，注册是惰性的。"),
    ("op-registration", 5, "一个命名空间可以写多个 TORCH_LIBRARY，TORCH_LIBRARY_IMPL 每个后端只能写一次。"),
    # optimizers
    ("optimizers", 2, "torch.optim.Adam 的 weight_decay 就是解耦衰减，和 AdamW 一样；对 SGD 两者反而不等价。"),
    ("optimizers", 5, "clip_grad_norm_ 要放在 step 之后；用 GradScaler 时不需要先 unscale_。"),
    # paged-attention
    ("paged-attention", 2, "块不能共享，每条序列的前缀都单独复制一份；写时复制会把整张块表都复制。"),
    ("paged-attention", 5, "分页让 attention 更快：FLOPs 不变，但读的字节少了一半，吞吐和 batch 无关。"),
    # pipeline-parallel
    ("pipeline-parallel", 0, "bubble 占比是 (m−1)/(m+p−1)，微批数越多 bubble 越大。"),
    ("pipeline-parallel", 1, "1F1B 的 bubble 比 GPipe 小一半，激活显存两者一样。"),
    # python-overhead
    ("python-overhead", 1, "小张量时固定开销可以忽略，计算量大时开销才占主导，而且开销是毫秒级的。"),
    ("python-overhead", 10, "TorchScript 还是推荐的导出方式，没有弃用，编译出的 IR 也不能序列化。"),
    # quant-granularity
    ("quant-granularity", 0, "对称量化每个元素的误差不超过 s，不是 s/2；粒度越细，共用一个 scale 的元素越多。"),
    ("quant-granularity", 3, "组大小越大误差越小、开销越大；int4 每组 128 摊下来约 5.25 位，两个码不打包。"),
    # repeat-vs-expand
    ("repeat-vs-expand", 1, "repeat 只改 stride 不拷贝，得到的张量不连续，内存也不随倍数增长。"),
    ("repeat-vs-expand", 4, "expand 是 O(n) 的，repeat 才是 O(1)。"),
    # smart-pointers
    ("smart-pointers", 0, "unique_ptr 可以拷贝、不能移动；删除器不是它类型的一部分。"),
    ("smart-pointers", 3, "循环引用时计数照样归零，析构函数照常运行，不会泄漏；weak_ptr 也计数。"),
    # smoothquant
    ("smoothquant", 3, "α 越大越好，α = 1 最优，把离群值搬进权重后误差最小，不用校准。"),
    # softmax-online
    ("softmax-online", 2, "部分状态 (m, l) 不能合并，顺序一变结果就不同，所以 split-K 没法并行归并。"),
    ("softmax-online", 4, "全被 mask 的行用 -inf 填充时 torch.softmax 得均匀分布，-1e9 填充反而得 NaN。"),
    # tensor-parallel
    ("tensor-parallel", 0, "MLP 先行后列：W1 行并行、W2 列并行，GeLU 作用在部分和上也没关系，两层之间不用通信。"),
    ("tensor-parallel", 6, "环形 all-reduce 每卡发的字节随 TP 度 t 成比例减少，所以 TP 适合跨节点，NVLink 无所谓。"),
    # tiled-gemm
    ("tiled-gemm", 1, "tile 的算术强度随 BK 增大，是 BM·BN·BK；H100 上 64×64 的 tile 就超过 ridge point 了。"),
    ("tiled-gemm", 3, "fp32 输入的 tl.dot 默认就是真 fp32 的 FFMA，写 input_precision=\"ieee\" 才走 TF32。"),
    # train-memory
    ("train-memory", 2, "优化器状态在构造时就建好，不等第一次 step()；跑一步前向反向就能测准显存峰值。"),
    ("train-memory", 5, "每层激活约 sbh(34 + 5as/h) 字节，长序列时 34 那一项占大头，激活与模型状态之比随层数线性增长。"),
    # zero-stages
    ("zero-stages", 0, "ZeRO-1 切参数，ZeRO-2 再切梯度，ZeRO-3 才切优化器状态。"),
    ("zero-stages", 2, "ZeRO-3 在前向和反向各 all-gather 一次参数，通信是 DDP 的 3 倍；reduce-scatter 加 all-gather 比 all-reduce 多一倍。"),
]
