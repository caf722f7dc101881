"""Workloads for the question "PyTorch 是 Python 写的，怎么解决慢的问题": the claims and the
benchmarks import these, so both measure the same code.

Run as a module (``python -m snippets._workloads.overhead compile-probe``) it measures the first
and later calls of a compiled function in a fresh process; the compile claims need a process
whose in-memory compiler state is empty.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

from snippets._workloads.child import run_json

# ---------------------------------------------------------------- eager dispatch


def tiny_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """One op on one-element tensors: almost all of its time is the trip Python -> C++ -> back."""
    return a + b


def add_sizes(max_pow: int = 22, step: int = 2) -> list[int]:
    """Element counts 1, 4, 16, ... up to 2**max_pow."""
    return [2**k for k in range(0, max_pow + 1, step)]


def first_size_above(times: dict[int, float], factor: float, base: float) -> int | None:
    """The smallest size whose time exceeds ``factor`` times ``base`` (the fixed per-call cost)."""
    for n in sorted(times):
        if times[n] > factor * base:
            return n
    return None


class single_thread:
    """Pin ATen to one thread for a measurement: on a shared two-core machine a second OpenMP
    thread that gets descheduled makes every parallel op wait for it (milliseconds)."""

    def __enter__(self) -> single_thread:
        self.saved = torch.get_num_threads()
        torch.set_num_threads(1)
        return self

    def __exit__(self, *exc: object) -> None:
        torch.set_num_threads(self.saved)


# ---------------------------------------------------------------- torch.compile


def fused_chain(x: torch.Tensor) -> torch.Tensor:
    """Four element-wise ops that Inductor can fuse into one loop."""
    return torch.relu(x * 2.0 + 1.0).sin()


def tiny_chain(x: torch.Tensor, steps: int = 20) -> torch.Tensor:
    """Many tiny element-wise ops: eager pays one dispatch per op (2 per step)."""
    for _ in range(steps):
        x = x * 1.01 + 0.01
    return x


def one_op(x: torch.Tensor) -> torch.Tensor:
    return x + 1.0


def branchy(x: torch.Tensor) -> torch.Tensor:
    """Data-dependent control flow and a print: both stop Dynamo's graph."""
    y = x.sin()
    if y.sum() > 0:  # the branch depends on tensor data
        y = y * 2
    print("side effect")
    return y.cos()


def count_cpp_kernels(code: str) -> int:
    """Kernels that Inductor's CPU backend defines in a generated module."""
    return code.count("async_compile.cpp_pybinding(")


def count_triton_kernels(code: str) -> int:
    return code.count("@triton.jit")


def _probe_main(device: str) -> None:
    """Child process: time the first three calls of ``torch.compile(fused_chain)``."""
    t0 = time.perf_counter()
    import torch._dynamo  # noqa: F401, PLC0415  (import cost kept out of the first call)
    import torch._inductor.compile_fx  # noqa: F401, PLC0415

    imported = time.perf_counter() - t0
    from verify.timing import compare  # noqa: PLC0415

    torch.set_num_threads(1)  # see single_thread: keeps the warm timing free of OpenMP stalls
    x = torch.randn(4096, device=device)
    compiled = torch.compile(fused_chain)
    calls = []
    for _ in range(3):
        start = time.perf_counter()
        compiled(x)
        if device == "cuda":
            torch.cuda.synchronize()
        calls.append(time.perf_counter() - start)
    warm = compare({"warm": lambda: compiled(x)}, rounds=7, inner=50, device=device)["warm"]
    from torch._dynamo.utils import counters  # noqa: PLC0415

    print(json.dumps({"import_s": imported, "calls_s": calls, "warm_s": warm["median_s"],
                      "fx_cache": {k: v for k, v in counters["inductor"].items() if k.startswith("fxgraph")}}))


def compile_probe(cache_dir: Path, device: str, timeout: float = 100.0) -> dict[str, Any]:
    """Run :func:`_probe_main` in a fresh Python with its own Inductor (and Triton) cache."""
    start = time.perf_counter()
    result = run_json("snippets._workloads.overhead", "compile-probe", device, timeout=timeout,
                      env={"TORCHINDUCTOR_CACHE_DIR": str(cache_dir / "inductor"),
                           "TRITON_CACHE_DIR": str(cache_dir / "triton")})
    result["process_s"] = time.perf_counter() - start
    return result


# ---------------------------------------------------------------- C++ extension


def decay_scan_python(values: list[float], decay: float) -> list[float]:
    """y[i] = decay * y[i-1] + x[i] as a plain Python loop: each step needs the previous one."""
    out = []
    acc = 0.0
    for v in values:
        acc = decay * acc + v
        out.append(acc)
    return out


def decay_scan_tensor_loop(x: torch.Tensor, decay: float) -> torch.Tensor:
    """The same scan written element by element on a tensor: one dispatch per element."""
    y = torch.empty_like(x)
    acc = torch.zeros((), dtype=x.dtype)
    for i in range(x.numel()):
        acc = decay * acc + x[i]
        y[i] = acc
    return y


def build_extension(source: Path) -> tuple[Any, float]:
    """Compile ``source`` into a library of dispatcher ops and load it; returns (ops, seconds).

    The build directory is keyed by the source hash, so an unchanged source is not rebuilt.
    Only ``torch/library.h`` is included: the full ``torch/extension.h`` (pybind11 and all of
    ATen) costs several times the compile time for nothing this op needs.
    """
    from torch.utils import cpp_extension  # noqa: PLC0415

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    name = f"po_ext_{digest}"
    base = Path(os.environ.get("TORCH_EXTENSIONS_DIR", Path.cwd() / ".cache" / "torch_extensions"))
    build = base / name
    build.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    cpp_extension.load(name=name, sources=[str(source)], build_directory=str(build),
                       extra_cflags=["-O2"], is_python_module=False, verbose=False)
    return torch.ops.po_ext, time.perf_counter() - start


# ---------------------------------------------------------------- DataLoader


def python_transform(i: int, steps: int = 40_000) -> int:
    """A CPU-heavy transform in pure Python (holds the GIL the whole time)."""
    acc = 0
    for k in range(steps):
        acc = (acc * 31 + k + i) % 1_000_003
    return acc


class HeavyDataset(Dataset):
    """Each item runs :func:`python_transform` and says which process made it."""

    def __init__(self, length: int = 64, steps: int = 40_000):
        self.length, self.steps = length, steps

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.tensor([python_transform(i, self.steps), os.getpid()])


def make_loader(workers: int, length: int = 64, steps: int = 40_000) -> DataLoader:
    return DataLoader(HeavyDataset(length, steps), batch_size=4, num_workers=workers,
                      persistent_workers=workers > 0)


def epoch(loader: DataLoader) -> torch.Tensor:
    return torch.cat(list(loader))


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "compile-probe":
    _probe_main(sys.argv[2] if len(sys.argv) > 2 else "cpu")
