"""The claim helpers of snippets/_gpu against what the tools are known to do, with the pinned toolchain.

`make setup` installs the toolchain (verify.toolchain); without it these tests fail and say so,
since the GPU pages' claims would then show 需要 <tool> on every machine that builds the site.
"""

from __future__ import annotations

import numpy as np
import pytest

from verify import toolchain
from verify.claim import Context

pytestmark = pytest.mark.slow
cuda = None  # numba's cuda module in simulator mode, set by the fixture: the simulator swaps it in a kernel's globals


@pytest.fixture(scope="module", autouse=True)
def tools():
    problems = [r for need in toolchain.TOOLS if (r := toolchain.missing(need))]
    assert not problems, "the GPU toolchain is not installed (make setup): " + "; ".join(problems)
    toolchain.activate()
    from snippets._gpu import sim

    global cuda
    cuda = sim.cuda()


@pytest.fixture
def ctx(tmp_path):
    return Context("cpu", tmp_path)


TILE_SRC = '''
import triton.language as tl

def tile(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))
'''


@pytest.fixture(scope="module")
def tile_fn(tmp_path_factory):
    """A Triton kernel from a file (Triton reads a kernel's source with inspect)."""
    import importlib.util

    path = tmp_path_factory.mktemp("k") / "tile_kernel.py"
    path.write_text(TILE_SRC)
    spec = importlib.util.spec_from_file_location("tile_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tile


def test_triton_compiles_a_dot_tile_to_each_architectures_tensor_core_instructions(ctx, tile_fn):
    from snippets._gpu import compiled

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    tiles = {"BM": 128, "BN": 128, "BK": 64}
    a80 = compiled.triton_kernel(ctx, tile_fn, sig, tiles, target="sm_80")
    h90 = compiled.triton_kernel(ctx, tile_fn, sig, tiles, target="sm_90a")
    assert (a80.ptx_target, h90.ptx_target) == ("sm_80", "sm_90a")
    # sm_80: warp-level mma.sync m16n8k16 fed by ldmatrix; 4 warps share 128x128x64 = 512 of them
    assert a80.ptx_count("mma.sync") == a80.sass_count("HMMA") == 128 and a80.sass_count("LDSM") > 0
    assert a80.sass_count("HGMMA") == 0
    # sm_90a: warpgroup wgmma, 64 rows x 128 columns x 16 deep each: 2 x 4 of them
    assert h90.ptx_count("wgmma.mma_async") == h90.sass_count("HGMMA") == 8 and h90.sass_count("HMMA") == 0
    assert all(line.startswith("HGMMA.64x128x16.F32") for line in h90.sass_lines("HGMMA"))
    # the A and B tiles in shared memory: (128x64 + 64x128) fp16
    assert a80.shared == (128 * 64 + 64 * 128) * 2
    assert 0 < a80.registers <= 255 and a80.local == 0
    ev = ctx.observed["evidence"]
    assert ev["kind"] == "compiled" and ev["targets"] == ["sm_80", "sm_90a"] and ev["tools"] == {"triton": "3.9.0"}


ROWSUM = r"""
__global__ void rowsum(const float4* __restrict__ x, float* out, int n4) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n4; i += blockDim.x) { float4 v = x[blockIdx.x * n4 + i]; s += v.x + v.y + v.z + v.w; }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  __shared__ float warp[32];
  if ((threadIdx.x & 31) == 0) warp[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int w = 0; w < blockDim.x / 32; ++w) t += warp[w]; atomicAdd(out, t); }
}
"""


def test_nvcc_shows_vector_loads_shuffles_and_a_reduction_atomic(ctx):
    from snippets._gpu import compiled

    c = compiled.cuda_source(ctx, ROWSUM, target="sm_90a", name="rowsum")
    assert c.sass_count("SHFL") == 5 and c.ptx_count("shfl.sync") == 5  # log2(32) steps
    assert c.sass_lines("LDG") and all(".128" in line for line in c.sass_lines("LDG"))
    assert c.ptx_count("ld.global.nc") == 1
    assert c.sass_count("REDG") == 1 and c.sass_count("ATOMG") == 0  # the atomic's result is unused
    assert c.shared == 32 * 4 and c.info["spill_stores"] == 0 and 0 < c.registers <= 255
    assert ctx.observed["evidence"]["tools"] == {"nvcc": toolchain.PINS["nvidia-cuda-nvcc"]}


def test_nvcc_reports_a_compile_error_with_its_message(ctx):
    from snippets._gpu import compiled

    with pytest.raises(RuntimeError, match="nvcc broken.cu for sm_80"):
        compiled.cuda_source(ctx, "__global__ void k() { undefined_name(); }", target="sm_80", name="broken")


ADD_SRC = '''
import triton.language as tl

def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)
'''


def test_the_interpreter_runs_a_masked_kernel_on_cpu_tensors(ctx, tmp_path):
    import importlib.util

    import torch

    from snippets._gpu import interp

    path = tmp_path / "add_kernel.py"
    path.write_text(ADD_SRC)
    spec = importlib.util.spec_from_file_location("add_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, y = torch.randn(1000), torch.randn(1000)
    out = torch.full((1024,), -1.0)
    interp.kernel(ctx, module.add)[(4,)](x, y, out, 1000, BLOCK=256)
    assert torch.equal(out[:1000], x + y) and torch.all(out[1000:] == -1)  # the mask kept the tail untouched
    assert ctx.observed["evidence"]["kind"] == "simulated"


def _strided(x, out, stride, start):
    i = cuda.threadIdx.x
    out[i] = x[start + i * stride]


def _transpose(a, out, pad):
    tile = cuda.shared.array((32, 33), dtype=np.float32) if pad else cuda.shared.array((32, 32), dtype=np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32
    tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    out[bx + ty, by + tx] = tile[tx, ty]


@pytest.mark.parametrize(("stride", "start", "sectors"), [(1, 0, 4), (1, 1, 5), (2, 0, 8), (32, 0, 32)])
def test_the_simulator_trace_counts_sectors_per_warp_request(ctx, stride, start, sectors):
    from snippets._gpu import sim

    x = np.arange(32 * 33, dtype=np.float32)
    trace, arrays = sim.traced(ctx, _strided, 1, 32, x=x, out=np.zeros(32, np.float32), stride=stride, start=start)
    assert np.array_equal(arrays["out"], x[start:start + 32 * stride:stride])
    assert trace.sectors("x") == [sectors] and trace.sectors("out") == [4]
    assert trace.bytes_requested("x") == [128]


@pytest.mark.parametrize(("pad", "worst"), [(False, 32), (True, 1)])
def test_the_simulator_trace_finds_the_transposes_bank_conflicts_and_padding_removes_them(ctx, pad, worst):
    from snippets._gpu import sim

    a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    trace, arrays = sim.traced(ctx, _transpose, (2, 2), (32, 32), a=a, out=np.zeros_like(a), pad=pad)
    assert np.array_equal(arrays["out"], a.T)
    conflicts = trace.conflicts("shared0")
    writes = [r[0].write for r in trace.requests("shared0")]
    assert len(conflicts) == 4 * 32 * 2  # 4 blocks x 32 warps x (one store, one load)
    assert max(c for c, w in zip(conflicts, writes) if w) == 1  # the row-wise store never conflicts
    assert max(c for c, w in zip(conflicts, writes) if not w) == worst
    assert set(trace.sectors("a")) == set(trace.sectors("out")) == {4}


def test_specs_name_their_document_and_a_claim_is_of_one_kind(ctx):
    from snippets._gpu import note, specs

    assert specs.get(ctx, "H100 SXM", "sms") == 132
    assert specs.get(ctx, "9.0", "registers_per_sm") == 65536
    assert ctx.observed["sources"]["H100 SXM sms"].startswith("NVIDIA H100 Tensor Core GPU Architecture whitepaper")
    assert ctx.observed["evidence"]["gpus"] == ["H100 SXM", "compute capability 9.0"]
    with pytest.raises(KeyError, match="'H100 SXM' has no 'fp64'"):
        specs.get(ctx, "H100 SXM", "fp64")
    note.note(ctx, "compiled", targets=("sm_80",))  # specs may feed a compiled claim: it stays compiled
    assert ctx.observed["evidence"]["kind"] == "compiled"
    with pytest.raises(ValueError, match="mixes compiled and simulated"):
        note.note(ctx, "simulated")
    assert all(row["source"] for row in specs.table())


def test_occupancy_follows_the_calculators_rules(ctx):
    from snippets._gpu import occupancy

    # 256 threads, 64 registers, 48 KiB shared on compute capability 9.0 (228 KiB per SM)
    occ = occupancy.blocks_per_sm(ctx, "9.0", 256, 64, 48 * 1024)
    assert occ["limits"] == {"threads": 8, "warps": 8, "blocks": 32, "registers": 4, "shared": 4}
    assert occ["blocks"] == 4 and occ["limiter"] == "registers" and occ["occupancy"] == 0.5
    # registers go out per warp in units of 256: 33 registers cost what 40 do
    assert occupancy.blocks_per_sm(ctx, "9.0", 128, 33, 0)["limits"]["registers"] == \
        occupancy.blocks_per_sm(ctx, "9.0", 128, 40, 0)["limits"]["registers"] == 65536 // (40 * 32) // 4
    # the 1 KiB the system reserves per block counts: 56 KiB + 1 KiB fills 228 KiB four times; half a KiB more, three
    assert occupancy.blocks_per_sm(ctx, "9.0", 128, 32, 56 * 1024)["limits"]["shared"] == 4
    assert occupancy.blocks_per_sm(ctx, "9.0", 128, 32, 57 * 1024 - 512)["limits"]["shared"] == 3
    with pytest.raises(ValueError, match="cannot launch"):
        occupancy.blocks_per_sm(ctx, "8.0", 256, 300, 0)
