"""GEMM epilogue fusion on the CPU: max-autotune and Inductor's CPP GEMM template.

Kept in a file of its own: max-autotune benchmarks its candidates while compiling, and these
compiles must be cold (no FX graph cache, no autotune cache) so that the candidates are really
listed and timed on every run.
"""

from __future__ import annotations

import re
import time
from unittest import mock

import torch
import torch._inductor.config as inductor_config
from torch._inductor import select_algorithm

from snippets._workloads.fusion import call_body, extern_calls, gemm_bias_relu, kernel_names
from verify.claim import claim

M, K, N = 64, 256, 256


class _LinearRelu(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(K, N)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x))


def _kernel_sources(code: str) -> list[str]:
    """The C++ source of every kernel the module compiles."""
    return re.findall(r"async_compile\.cpp(?:_pybinding)?\(.*?'''(.*?)'''", code, re.S)


def _compile(fn, args, patch: dict) -> dict:
    """Compile ``fn`` cold with ``patch``; the GEMM candidates autotuning saw, its timings, the code."""
    from torch._inductor.graph import GraphLowering  # noqa: PLC0415

    candidates: list[list[str]] = []
    timings: dict[str, float] = {}
    original = select_algorithm.AlgorithmSelectorCache.__call__

    def spy(self, name, choices, *a, **kw):
        candidates.append([getattr(c, "name", type(c).__name__) for c in choices])
        return original(self, name, choices, *a, **kw)

    def feedback(timing, *rest):
        timings.update({getattr(c, "name", str(c)): round(float(t), 4) for c, t in timing.items()})  # already ms

    saver = getattr(select_algorithm, "add_feedback_saver", None)
    if saver:
        saver(feedback)
    codes: list[str] = []
    torch._dynamo.reset()
    start = time.perf_counter()
    try:
        with torch.no_grad(), inductor_config.patch({"fx_graph_cache": False, "autotune_local_cache": False,
                                                    "max_autotune_gemm": True, **patch}), \
                mock.patch.object(select_algorithm.AlgorithmSelectorCache, "__call__", spy), \
                mock.patch.object(GraphLowering, "save_output_code", codes.append):
            out = torch.compile(fn)(*args)
    finally:
        if saver:
            select_algorithm.clear_feedback_savers()
    code = codes[-1]
    return {"candidates": candidates, "timings_ms": timings, "code": code, "out": out,
            "seconds": round(time.perf_counter() - start, 1)}


@claim(
    "gemm.cpp-template",
    question="graph-fusion",
    statement="CPU 上也能把 epilogue 融进 GEMM，但要满足 CPP 模板的条件。打开 max-autotune、候选后端设为 `CPP,ATEN` 时：权重是普通输入的 `relu(x @ w + b)` 只有库的 GEMM 作候选（{plain_candidates_shown}），候选里{plain_has_cpp_template:?有|没有} CPP 模板，因为 CPP 模板要求权重在编译时是常量；`torch._inductor.config.freezing` 把 `nn.Linear` 的权重冻结成常量后，候选变成 {frozen_candidates_shown}，这台机器上测得更快、被选中的是 {frozen_winner}。只留 `CPP` 后端时，整个函数只剩 {cpp_kernels} 个 kernel {cpp_kernel_shown}：模板里的 `kernel_micro_gemm` 每算完一块输出，就在这块上加 bias、做 relu（`clamp_min`），生成代码里不再有任何库调用；结果与 eager {cpp_matches_eager:?一致|不一致}。",
    # The winner among the frozen candidates is whichever benchmarked faster here: bound, not checked.
    expect={"plain_has_cpp_template": False, "plain_candidates_are_library": True,
            "frozen_has_cpp_template": True, "frozen_has_library_gemm": True,
            "cpp_kernels": 1, "cpp_template_kernel": True, "cpp_epilogue_in_template": True,
            "cpp_library_calls": [], "cpp_matches_eager": True},
    timeout=300,
)
def _(ctx):
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g), torch.randn(N, generator=g)
    plain = _compile(gemm_bias_relu, (x, w, b), {"max_autotune_gemm_backends": "CPP,ATEN"})

    model = _LinearRelu().eval()
    with torch.no_grad():
        ref = model(x)
    frozen = _compile(model, (x,), {"max_autotune_gemm_backends": "CPP,ATEN", "freezing": True})
    frozen_names = frozen["candidates"][0] if frozen["candidates"] else []
    frozen_code = call_body(frozen["code"])
    frozen_sources = "".join(_kernel_sources(frozen["code"]))
    if "kernel_micro_gemm" in frozen_sources:  # the template won: its micro-GEMM is in a kernel
        winner = next((n for n in frozen_names if n.startswith("cpp_")), None)
    else:  # a library call won: its name is called in the wrapper code
        winner = next((n for n in frozen_names if not n.startswith("cpp_") and n in frozen_code), None)

    cpp_model = _LinearRelu().eval()
    cpp_model.load_state_dict(model.state_dict())
    cpp = _compile(cpp_model, (x,), {"max_autotune_gemm_backends": "CPP", "freezing": True})
    sources = _kernel_sources(cpp["code"])
    template = [s for s in sources if "kernel_micro_gemm" in s]
    body = call_body(cpp["code"])
    return {
        "shapes": {"x": [M, K], "w": [K, N]},
        "threads": torch.get_num_threads(),
        "plain_candidates": plain["candidates"][0] if plain["candidates"] else [],
        "plain_extern_calls": extern_calls(plain["code"]),
        "plain_has_cpp_template": any(n.startswith("cpp_") for n in (plain["candidates"] or [[]])[0]),
        "plain_candidates_are_library": bool(plain["candidates"]) and all("addmm" in n for n in plain["candidates"][0]),
        "plain_candidates_shown": "、".join(plain["candidates"][0]) if plain["candidates"] else None,
        "frozen_candidates": frozen_names,
        "frozen_candidates_shown": " 和 ".join(frozen_names),
        "frozen_timings_ms": frozen["timings_ms"],
        "frozen_has_cpp_template": any(n.startswith("cpp_") for n in frozen_names),
        "frozen_has_library_gemm": any(not n.startswith("cpp_") for n in frozen_names),
        "frozen_winner": winner,
        "frozen_kernels": kernel_names(frozen["code"]),
        "frozen_call": [line.strip() for line in frozen_code.splitlines() if "(" in line and "assert" not in line],
        "cpp_candidates": cpp["candidates"][0] if cpp["candidates"] else [],
        "cpp_kernels": len(kernel_names(cpp["code"])),
        "cpp_kernel_names": kernel_names(cpp["code"]),
        "cpp_kernel_shown": "、".join(kernel_names(cpp["code"])),
        "cpp_template_kernel": len(template) == 1,
        "cpp_epilogue_in_template": bool(template) and "clamp_min" in template[0],
        "cpp_library_calls": extern_calls(cpp["code"]) + re.findall(r"torch\.ops\.(?!inductor\.)\w+\.\w+", body),
        "cpp_matches_eager": torch.allclose(cpp["out"], ref, rtol=1e-4, atol=1e-4),
        "compile_seconds": {"plain": plain["seconds"], "frozen": frozen["seconds"], "cpp": cpp["seconds"]},
    }
