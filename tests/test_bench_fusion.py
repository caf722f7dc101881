"""Element-wise chains eager against compiled, GEMM with its epilogue, SDPA against naive attention.

Achieved bandwidth of a chain counts the bytes a fused kernel needs at least (read the input
once, write the output once: 8 bytes per float32 element), for every variant: it is the
effective bandwidth, so the eager variants' extra round trips to memory show as a lower fraction.
"""

from __future__ import annotations

import pytest
import torch

from snippets._workloads import fusion
from verify.bench.plugin import device, measure

# Compiling imports torch.jit pieces that warn on import; these tests measure, they do not police warnings.
pytestmark = [pytest.mark.bench, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
DEV = device()
SIZES = [1 << 14, 1 << 18, 1 << 22] if DEV == "cpu" else [1 << 16, 1 << 20, 1 << 24, 1 << 27]


def _chain_variants(n: int, chain: str) -> dict:
    x = torch.randn(n, device=DEV)
    tmp, out = torch.empty_like(x), torch.empty_like(x)
    if chain == "cheap":
        fn = fusion.cheap_chain
        into, _ = fusion.compiled(fusion.cheap_chain_into, x, out)
        variants = {"eager fresh": lambda: fn(x), "eager preallocated": lambda: fusion.cheap_chain_out(x, tmp, out),
                    "compiled preallocated": lambda: into(x, out)}
    else:
        fn = fusion.transcendental_chain
        variants = {"eager fresh": lambda: fn(x)}
    cfn, _ = fusion.compiled(fn, x)
    variants["compiled fresh"] = lambda: cfn(x)
    return variants


@pytest.mark.benchmark(group="fusion-cheap-chain")
@pytest.mark.parametrize("variant", ["eager fresh", "eager preallocated", "compiled fresh", "compiled preallocated"])
@pytest.mark.parametrize("n", SIZES)
def test_cheap_chain(benchmark, limits, n, variant):
    fns = _chain_variants(n, "cheap")
    measure(benchmark, fns[variant], dev=DEV, others=[f for v, f in fns.items() if v != variant], rounds=11,
            bytes_moved=8 * n, limits=limits, size=n, variant=variant)


@pytest.mark.benchmark(group="fusion-transcendental-chain")
@pytest.mark.parametrize("variant", ["eager fresh", "compiled fresh"])
@pytest.mark.parametrize("n", SIZES)
def test_transcendental_chain(benchmark, limits, n, variant):
    fns = _chain_variants(n, "transcendental")
    measure(benchmark, fns[variant], dev=DEV, others=[f for v, f in fns.items() if v != variant], rounds=11,
            bytes_moved=8 * n, limits=limits, size=n, variant=variant)


@pytest.mark.benchmark(group="gemm-epilogue")
@pytest.mark.parametrize("variant", ["eager", "compiled"])
@pytest.mark.parametrize("n", [128, 256, 512] if DEV == "cpu" else [1024, 4096, 8192])
def test_gemm_epilogue(benchmark, limits, n, variant):
    # On the GPU the GEMM runs in bfloat16, the dtype GPU GEMMs are run in, and is read against the
    # bfloat16 matmul limit measured in this run. A float32 one would run on the FP32 cores, far
    # below the tensor cores this comparison is about, and Inductor warns when it compiles a float32
    # CUDA matmul with TF32 off (torch/_inductor/compile_fx.py, _warn_tf32_disabled); turning TF32 on
    # instead would change the numerics and leave the float32 limit (measured without TF32) meaningless.
    # The CPU runs float32 against the float32 limit, as before.
    dtype = torch.float32 if DEV == "cpu" else torch.bfloat16
    limit_key = "matmul_float32_GFLOPs" if DEV == "cpu" else "matmul_bfloat16_GFLOPs"
    x = torch.randn(n, n, device=DEV, dtype=dtype)
    w = torch.randn(n, n, device=DEV, dtype=dtype)
    b = torch.randn(n, device=DEV, dtype=dtype)
    cfn, _ = fusion.compiled(fusion.gemm_bias_relu, x, w, b)
    fns = {"eager": lambda: fusion.gemm_bias_relu(x, w, b), "compiled": lambda: cfn(x, w, b)}
    measure(benchmark, fns[variant], dev=DEV, others=[f for v, f in fns.items() if v != variant], rounds=9,
            flops=2 * n**3, limits=limits, flops_limit_key=limit_key, size=n, variant=variant)


@pytest.mark.benchmark(group="sdpa-vs-naive")
@pytest.mark.parametrize("variant", ["naive", "sdpa"])
@pytest.mark.parametrize("seq", [128, 256, 512, 1024] if DEV == "cpu" else [512, 1024, 2048, 4096])
def test_attention(benchmark, limits, seq, variant):
    heads, dim = 8, 64
    q, k, v = (torch.randn(1, heads, seq, dim, device=DEV) for _ in range(3))  # (B, H, N, D)
    fns = {"naive": lambda: fusion.naive_attention(q, k, v), "sdpa": lambda: fusion.sdpa_attention(q, k, v)}
    peak = None
    if DEV == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fns[variant]()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
    measure(benchmark, fns[variant], dev=DEV, others=[f for n, f in fns.items() if n != variant], rounds=7,
            flops=4 * heads * seq * seq * dim, limits=limits, size=seq, variant=variant,
            scores_bytes=heads * seq * seq * 4, peak_extra_bytes=peak)
