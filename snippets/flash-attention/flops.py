"""FLOPs: FlashAttention does not compute less; counting them on a CPU needs care."""

import torch
import torch.nn.functional as F
from torch.utils import flop_counter
from torch.utils.flop_counter import FlopCounterMode

from verify.claim import claim

Q = "flash-attention"
B = 1
H = 4
N = 512
D = 64


def qkv(requires_grad=False):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(B, H, N, D, generator=g).requires_grad_(requires_grad) for _ in range(3))


def naive_attention(q, k, v):
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    return torch.softmax(scores, -1) @ v


def counted(fn):
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@claim("flash.same-flops", question=Q,
       statement="FlashAttention 并没有少算：`FlopCounterMode` 数出手写 attention 的前向是 {naive.forward:,} FLOP"
                 "（两次矩阵乘，`4·B·H·N²·D`），PyTorch 为融合 attention kernel 登记的公式给出同一个数 {fused.forward:,}；"
                 "反向时手写版是 {naive.backward:,}（四次矩阵乘），融合 kernel 的公式是 {fused.backward:,}，"
                 "多出的 {backward_extra:pct} 就是反向时重算 `Q·Kᵀ` 那一次矩阵乘：它用计算换掉了保存 N×N 矩阵。",
       expect={"naive": {"forward": 4 * B * H * N * N * D, "backward": 8 * B * H * N * N * D},
               "fused": {"forward": 4 * B * H * N * N * D, "backward": 10 * B * H * N * N * D},
               "backward_extra": 0.25})
def _(ctx):
    q, k, v = qkv(requires_grad=True)
    out = {}
    with FlopCounterMode(display=False) as fwd:
        o = naive_attention(q, k, v)
    with FlopCounterMode(display=False) as bwd:
        o.sum().backward()
    out["naive"] = {"forward": fwd.get_total_flops(), "backward": bwd.get_total_flops()}
    shape = (B, H, N, D)
    out["fused"] = {"forward": flop_counter.sdpa_flop_count(shape, shape, shape),
                    "backward": flop_counter.sdpa_backward_flop_count(shape, shape, shape, shape)}
    out["backward_extra"] = out["fused"]["backward"] / out["naive"]["backward"] - 1
    return out


@claim("flash.flop-counter-cpu", question=Q,
       statement="在 CPU 上用 `FlopCounterMode` 数 SDPA 会得到 {sdpa_cpu_flops}：CPU 的融合算子 "
                 "`_scaled_dot_product_flash_attention_for_cpu` {cpu_op_registered:?在|不在}它的公式表里，"
                 "GPU 上的 `_scaled_dot_product_flash_attention` {cuda_op_registered:?在|不在}；退回 math 实现时又能数出 "
                 "{sdpa_math_flops:,}，因为那是普通的矩阵乘。",
       expect={"sdpa_cpu_flops": 0, "cpu_op_registered": False, "cuda_op_registered": True,
               "sdpa_math_flops": 4 * B * H * N * N * D})
def _(ctx):
    q, k, v = qkv()  # CPU on purpose: the CPU operator is the subject
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    def math_sdpa():
        with sdpa_kernel(SDPBackend.MATH):
            F.scaled_dot_product_attention(q, k, v)

    aten = torch.ops.aten
    table = flop_counter.flop_registry
    return {"sdpa_cpu_flops": counted(lambda: F.scaled_dot_product_attention(q, k, v)),
            "cpu_op_registered": aten._scaled_dot_product_flash_attention_for_cpu in table
            or aten._scaled_dot_product_flash_attention_for_cpu.default in table,
            "cuda_op_registered": aten._scaled_dot_product_flash_attention in table
            or aten._scaled_dot_product_flash_attention.default in table,
            "sdpa_math_flops": counted(math_sdpa)}
