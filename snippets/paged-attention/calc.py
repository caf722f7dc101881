"""计算题 of this question: how much KV cache paging allocates for a batch, and how much of it stands empty.

Each sequence holds ⌈L/B⌉ blocks of B tokens; only its last block can be partly empty. The quiz
draws a batch and a model and asks for the allocated GiB and the empty slots' MiB; the claims build
a block table token by token (a block is taken from the free list when a sequence's last one is
full), put the blocks' K and V in a pool tensor, and compare what the table holds with the formula.
"""

from __future__ import annotations

from verify.claim import claim

Q = "paged-attention"
GIB, MIB = 2**30, 2**20
BF16 = 2
HEAD_DIM = 128


def token_bytes(layers: int, kv_heads: int) -> int:
    """KV bytes of one token: K and V, every layer, every KV head, head_dim 128, BF16."""
    return 2 * layers * kv_heads * HEAD_DIM * BF16


def allocated_bytes(seqs: int, length: int, block: int, layers: int, kv_heads: int) -> int:
    """Bytes of the blocks a batch of ``seqs`` sequences of ``length`` tokens holds: ⌈L/B⌉ blocks each."""
    return seqs * -(-length // block) * block * token_bytes(layers, kv_heads)


def empty_bytes(seqs: int, length: int, block: int, layers: int, kv_heads: int) -> int:
    """Bytes of the slots allocated but not written: ⌈L/B⌉·B − L per sequence."""
    return seqs * (-(-length // block) * block - length) * token_bytes(layers, kv_heads)


PARAMS = {"seqs": [4, 16, 64], "length": [100, 1000, 2047, 3001, 4097], "block": [16, 32], "layers": [32, 80],
          "kv_heads": [8, 32]}
SETUP = ("一个 {layers} 层的模型，{kv_heads} 个 KV 头、head_dim 128，KV cache 用 BF16（每元素 2 字节）；PagedAttention "
         "每个 block 放 {block} 个 token 的 K 和 V，一条序列的 block 写满了才分配下一个。batch 里 {seqs} 条序列，"
         "每条已有 {length} 个 token。")


def _per_seq(length: int, block: int) -> str:
    return f"⌈{length}/{block}⌉ = {-(-length // block)} 个 block"


CALCULATORS = [
    {"id": "paged-allocated", "question": Q, "claim": "paged.calc-formula",
     "prompt": SETUP + "这些序列一共分配了多少 GiB 的 KV cache？", "params": PARAMS,
     "answer": allocated_bytes, "unit": "GiB", "scale": GIB, "tolerance": 0.02,
     "worked": lambda seqs, length, block, layers, kv_heads:
         f"每条 {_per_seq(length, block)}；{seqs} × {-(-length // block)} × {block} 个槽位 × "
         f"(2 × {layers} × {kv_heads} × 128 × 2 字节) ÷ 2³⁰",
     "explain": "分配的字节 = 序列数 × ⌈L/B⌉ × B × 每个 token 的 KV 字节；每个 token 的 KV 字节 = 2（K 和 V）× 层数 × "
                "KV 头数 × head_dim × 每元素字节数。"},
    {"id": "paged-empty", "question": Q, "claim": "paged.calc-formula",
     "prompt": SETUP + "分配了却还空着的 token 槽位一共占多少 MiB？", "params": PARAMS,
     "answer": empty_bytes, "unit": "MiB", "scale": MIB, "tolerance": 0.02,
     "worked": lambda seqs, length, block, layers, kv_heads:
         f"每条 {_per_seq(length, block)}，空 {-(-length // block) * block} − {length} = "
         f"{-(-length // block) * block - length} 个槽位；{seqs} × {-(-length // block) * block - length} × "
         f"(2 × {layers} × {kv_heads} × 128 × 2 字节) ÷ 2²⁰",
     "explain": "只有每条序列的最后一个 block 可能没写满：空槽位 = 序列数 × (⌈L/B⌉ × B − L)，"
                "乘以每个 token 的 KV 字节（2 × 层数 × KV 头数 × head_dim × 每元素字节数）。"},
]


def block_table(lengths: list[int], block: int, pool_blocks: int) -> tuple[list[list[int]], list[tuple[int, int, int]]]:
    """Each sequence's block table after appending its tokens one at a time, and every written slot
    (sequence, block id, offset): a block is taken from the free list when the sequence's last one is full."""
    free = list(range(pool_blocks))[::-1]
    tables: list[list[int]] = [[] for _ in lengths]
    written = []
    for s, length in enumerate(lengths):
        for pos in range(length):
            if pos % block == 0:
                tables[s].append(free.pop())
            written.append((s, tables[s][-1], pos % block))
    return tables, written


CASES = [([5, 16, 17, 40], 16, 2, 2), ([1, 33, 64], 32, 3, 1), ([100, 7], 8, 1, 4)]  # lengths, block, layers, kv_heads


@claim("paged.calc-formula", question=Q,
       statement="分页 KV cache 的两条公式和真实的块表一致：{n_cases} 组长度各不相同的序列，逐个 token 追加，写满一个 block "
                 "才从空闲表取下一个；把块表里的 block 在 BF16 的池张量（形状 (block 数, 2, 层数, B, KV 头数, head_dim)）里"
                 "写上 K、V，占用的字节{allocated:?等于|不等于}各条序列的 ⌈L/B⌉·B 个槽位乘每 token 的 KV 字节之和，"
                 "没写到的槽位字节{empty:?等于|不等于}各条的 ⌈L/B⌉·B − L 个槽位乘每 token 的 KV 字节之和。"
                 "模拟面试的计算题用的就是这两条。",
       expect={"allocated": True, "empty": True, "n_cases": 3})
def _(ctx):
    import torch

    allocated = empty = True
    for lengths, block, layers, kv_heads in CASES:
        tables, written = block_table(lengths, block, pool_blocks=64)
        pool = torch.zeros(64, 2, layers, block, kv_heads, HEAD_DIM, dtype=torch.bfloat16)
        for _s, b, offset in written:
            pool[b, :, :, offset] = 1.0
        used = sorted({b for t in tables for b in t})
        held = pool[used]
        slot_bytes = held[:, :, :, 0].numel() // len(used) * held.element_size()
        unwritten = int((held == 0).all(dim=(1, 2, 4, 5)).sum()) * slot_bytes
        allocated = allocated and held.numel() * held.element_size() == sum(
            allocated_bytes(1, n, block, layers, kv_heads) for n in lengths)
        empty = empty and unwritten == sum(empty_bytes(1, n, block, layers, kv_heads) for n in lengths)
    return {"allocated": allocated, "empty": empty, "n_cases": len(CASES)}


@claim("paged.calc-items", question=Q,
       statement="模拟面试里分页 KV cache 的 {n_items} 道计算题（分配了多少、空着多少）按这两条公式出答案；按每道题的 batch "
                 "逐个 token 建出块表，在 meta 设备上按用到的 block 数建池张量，分配的字节和空着的槽位字节与答案"
                 "{equal:?每道都相等|有不相等的}。",
       expect={"equal": True, "n_items": 12})
def _(ctx):
    """The quiz's items of this question, each answer found again from a block table of its batch."""
    import torch

    from snippets._calc import checked, same

    def again(calc, p):
        tables, written = block_table([p["length"]] * p["seqs"], p["block"], pool_blocks=p["seqs"] * p["length"])
        pool = torch.empty(sum(map(len, tables)), 2, p["layers"], p["block"], p["kv_heads"], HEAD_DIM,
                           dtype=torch.bfloat16, device="meta")
        held = pool.numel() * pool.element_size()
        slot = held // (len(pool) * p["block"])
        return {"paged-allocated": held, "paged-empty": held - len(written) * slot}[calc["id"]]

    quiz, pairs = checked(CALCULATORS, again)
    return {"equal": same(pairs), "n_items": len(pairs), "calc_items": quiz}
