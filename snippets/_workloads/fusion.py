"""Workloads for the graph-fusion page, shared by its claims and by the benchmarks.

Every function here is plain PyTorch. The claims compile them with ``torch.compile`` (Inductor)
and compare them with eager mode; the benchmarks time the same functions over more sizes.

Byte model used on the page (float32, ``n`` elements, bias vector negligible): an eager
element-wise op reads each input once and writes its output once; a fused kernel reads the
inputs of the whole chain once and writes only what leaves the chain.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any
from unittest import mock

import torch
import torch.nn.functional as F

# Element counts for size sweeps: in L1/L2, around L2/L3, and well past a 32 MiB L3.
SIZES = {"16K": 1 << 14, "1M": 1 << 20, "16M": 1 << 24}


# --- element-wise chains -------------------------------------------------------------------

def bias_relu_dropout(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The seed's example of an element-wise chain: bias + ReLU + dropout (training mode)."""
    return F.dropout(torch.relu(x + b), p=0.1, training=True)


def cheap_chain(x: torch.Tensor) -> torch.Tensor:
    """Three cheap element-wise ops: one multiply-add pair and a max per element."""
    return torch.relu(x * 2.0 + 1.0)


def cheap_chain_out(x: torch.Tensor, tmp: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``cheap_chain`` in eager mode writing into preallocated buffers (no allocation)."""
    torch.mul(x, 2.0, out=tmp)
    torch.add(tmp, 1.0, out=out)
    return torch.clamp_min(out, 0.0, out=out)


def cheap_chain_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``cheap_chain`` writing into a caller's buffer; compiled, Inductor writes there directly."""
    return out.copy_(cheap_chain(x))


def transcendental_chain(x: torch.Tensor) -> torch.Tensor:
    """Three element-wise ops with the same bytes as ``cheap_chain`` but far more arithmetic."""
    return torch.tanh(torch.exp(torch.sin(x)))


def transcendental_chain_out(x: torch.Tensor, tmp: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``transcendental_chain`` in eager mode writing into preallocated buffers (no allocation)."""
    torch.sin(x, out=tmp)
    torch.exp(tmp, out=out)
    return torch.tanh(out, out=out)


def transcendental_chain_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """``transcendental_chain`` writing into a caller's buffer; compiled, Inductor writes there directly."""
    return out.copy_(transcendental_chain(x))


# --- reduction, GEMM, attention --------------------------------------------------------------

def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A reduction with element-wise work before (square) and after (rsqrt, scale)."""
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def sum_scale(x: torch.Tensor) -> torch.Tensor:
    """The seed's reduce fusion: sum, then scale."""
    return x.sum(-1) * 0.5


def gemm_bias_relu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """GEMM with an epilogue (bias + activation)."""
    return torch.relu(x @ w + b)


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Attention written out: the (B, H, N, N) score matrix is a real tensor."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (B, H, N, N)
    return torch.softmax(scores, dim=-1) @ v  # (B, H, N, D)


def sdpa_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The same attention through the fused kernel."""
    return F.scaled_dot_product_attention(q, k, v)


# --- Inductor's generated code ---------------------------------------------------------------

@functools.cache
def _compiled(fn: Callable[..., Any], dynamic: bool | None) -> Callable[..., Any]:
    return torch.compile(fn, dynamic=dynamic)


_CODES: dict[tuple[Callable[..., Any], bool | None], list[str]] = {}


def compiled(fn: Callable[..., Any], *args: Any, dynamic: bool | None = None) -> tuple[Callable[..., Any], list[str]]:
    """Compile ``fn`` once per process and return it with the wrapper code Inductor generated.

    The first call runs ``fn`` on ``args`` so that the code is produced (a compile, or a hit in
    the on-disk cache, which also hands the code over). Later calls reuse both, so several claims
    share one compile.
    """
    from torch._inductor.graph import GraphLowering  # noqa: PLC0415

    key = (fn, dynamic)
    cfn = _compiled(fn, dynamic)
    if key not in _CODES:
        codes: list[str] = []
        with mock.patch.object(GraphLowering, "save_output_code", codes.append):
            cfn(*args)
        _CODES[key] = codes
    return cfn, _CODES[key]


def kernel_names(code: str) -> list[str]:
    """Names of the kernels a generated module defines (C++ on the CPU, Triton on CUDA)."""
    return re.findall(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", code, re.M)


def call_body(code: str) -> str:
    """The body of the generated ``call`` function: allocations and kernel calls, in order."""
    return code.split("def call(self, args):", 1)[1].split("\nrunner = ", 1)[0]


def buffers(code: str) -> list[list[int]]:
    """Shapes of the buffers the generated code allocates (``bufN = empty_strided_...((shape), ...``)."""
    shapes = re.findall(r"^\s*buf\d+ = empty_strided_\w+\(\(([^)]*)\)", call_body(code), re.M)
    return [[int(d) if d.strip().isdigit() else d.strip() for d in s.split(",") if d.strip()] for s in shapes]


def full_buffers(code: str, numel: int) -> list[list[int]]:
    """Allocated buffers with ``numel`` elements (a symbolic size counts too: it scales with the input)."""
    def size(shape: list) -> int | None:
        n = 1
        for d in shape:
            if not isinstance(d, int):
                return None
            n *= d
        return n

    return [s for s in buffers(code) if size(s) in (numel, None)]


def extern_calls(code: str) -> list[str]:
    """Library calls (GEMM and other ops Inductor does not generate itself)."""
    return re.findall(r"extern_kernels\.(\w+)\(", call_body(code))


def loop_nests(code: str) -> int:
    """Outermost loops in the generated C++: each is one pass over its data.

    Counted by the outermost loop variable ``x0``, which Inductor names the same whether or not
    it wraps the loop in an OpenMP pragma (it does not with one thread).
    """
    return len(re.findall(r"^\s*for\(int64_t x0=", code, re.M))
