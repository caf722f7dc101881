import torch
import triton
import triton.language as tl


@triton.jit
def _flash_forward(q_ptr, k_ptr, v_ptr, o_ptr, n_q, n_k, dim, scale,
                   stride_qb, stride_qs, stride_kb, stride_ks, stride_vb, stride_vs, stride_ob, stride_os,
                   BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    ...


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(dim)) v for (seq, dim) or (batch*heads, seq, dim) float32 inputs, with an online
    softmax over blocks of keys in a Triton kernel."""
    raise NotImplementedError
