"""SIMD on the CPU, compiled: the same scalar loop (``axpy.cpp``) built by g++ -O3 for AVX2 and for AVX-512,
and which vector registers its fused multiply-adds use. Nothing runs; the assembly is read."""

from __future__ import annotations

import re

from verify import cxx
from verify.claim import claim

Q = "cpu-vs-gpu"
TARGETS = {"avx2": ("-mavx2", "-mfma"), "avx512": ("-mavx512f", "-mfma", "-mprefer-vector-width=512")}
_FMA = re.compile(r"^\s*vfmadd\d{3}(ps|ss)\s+.*%([xyz]mm)\d+\s*$")
LANES = {"xmm": 4, "ymm": 8, "zmm": 16}  # fp32 per register


@claim(
    "cpu-gpu.simd-compiled",
    question=Q,
    needs=["g++", "x86-64"],
    statement="同一个标量写法的循环 `y[i] += a * x[i]`，g++ {gxx}（`-O3`）为 AVX2 编译，主循环里的 `vfmadd…ps` 作用在 "
              "`{avx2.widest}` 上，每条指令算 {avx2.lanes} 个 fp32；为 AVX-512 编译就换成 `{avx512.widest}`，{avx512.lanes} 个。"
              "凑不满一个向量的尾部，这个 g++ 先用更窄的向量指令（AVX2 版用 `{avx2.epilogue}`，AVX-512 版用 `{avx512.epilogue}`），"
              "余下的再用 {avx2.scalar} 条和 {avx512.scalar} 条标量 `vfmadd…ss`。向量宽度写在 CPU 的指令里，"
              "由编译器（或 ATen 手写的向量类）按指令集挑。",
    expect={"widest": ["ymm", "zmm"], "lanes": [8, 16]},
)
def _(ctx):
    """范围：g++ -O3，x86-64 的 AVX2 与 AVX-512 目标"""
    steps = [["-O3", *flags, "-S", "axpy.cpp", "-o", f"{name}.s"] for name, flags in TARGETS.items()]
    folder = cxx.build_steps({"axpy.cpp": ctx.snippet_dir() / "axpy.cpp"}, steps)
    out: dict = {"gxx": cxx.compiler_version().split()[-1]}
    for name in TARGETS:
        fmas = [m.groups() for m in map(_FMA.match, (folder / f"{name}.s").read_text().splitlines()) if m]
        packed = [reg for kind, reg in fmas if kind == "ps"]
        widest = max(packed, key=LANES.__getitem__)
        narrower = sorted({reg for reg in packed if LANES[reg] < LANES[widest]}, key=LANES.__getitem__, reverse=True)
        out[name] = {"widest": widest, "lanes": LANES[widest], "packed": len(packed),
                     "epilogue": "、".join(narrower) or "无", "scalar": sum(kind == "ss" for kind, _ in fmas)}
    out["widest"] = [out[name]["widest"] for name in TARGETS]
    out["lanes"] = [out[name]["lanes"] for name in TARGETS]
    return out
