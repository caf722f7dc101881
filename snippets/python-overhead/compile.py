"""torch.compile: what Dynamo captures, what Inductor generates, what the first call costs, and
what compiling does and does not remove from Python's overhead."""

from __future__ import annotations

import torch

from snippets._workloads.overhead import (
    branchy,
    compile_probe,
    count_cpp_kernels,
    count_triton_kernels,
    fused_chain,
    one_op,
    single_thread,
    tiny_chain,
)
from verify.claim import claim
from verify.timing import compare, ratio

Q = "python-overhead"


@claim(
    "torch-compile.fx-graph",
    question=Q,
    statement="第一步，TorchDynamo 把函数里的张量运算捕获成 {graph_count} 张 FX Graph：图里的节点依次是 `mul`、`add`、`relu`、`sin`，"
              "每个都是一个 torch 函数或运算符，Python 本身的语句不在图里。",
    expect={"graph_count": 1, "call_targets": ["mul", "add", "relu", "sin"]},
)
def _(ctx):
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward  # run the captured graph as is

    torch._dynamo.reset()
    x = torch.randn(8, device=ctx.device)
    out = torch.compile(fused_chain, backend=capture)(x)
    gm = graphs[0]
    calls = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    return {
        "graph_count": len(graphs),
        "call_targets": [getattr(n.target, "__name__", str(n.target)) for n in calls],
        "node_ops": [n.op for n in gm.graph.nodes],
        "same_result": bool(torch.allclose(out, fused_chain(x))),
        "graph_code": gm.code.strip(),
    }


@claim(
    "torch-compile.inductor-cpp",
    question=Q,
    statement="最后一步，TorchInductor 把图编译成代码：在 CPU 上生成的是 C++（编译成共享库后加载），上例的 {eager_ops} 个算子"
              "融合成了 {cpp_kernels} 个 kernel，一次遍历完成原来每个算子各遍历一次的工作。",
    expect={"cpp_kernels": 1, "has_extern_c": True, "same_result": True},
)
def _(ctx):
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(4096)
    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(fused_chain), x)
    code = "\n".join(codes)
    kernel_names = sorted({line.split("=")[0].strip() for line in code.splitlines()
                           if "async_compile.cpp_pybinding(" in line})
    return {
        "cpp_kernels": count_cpp_kernels(code),
        "kernel_names": kernel_names,
        "has_extern_c": 'extern "C"' in code,
        "eager_ops": 4,
        "same_result": bool(torch.allclose(out, fused_chain(x), atol=1e-6)),
    }


@claim(
    "torch-compile.inductor-triton",
    question=Q,
    statement="在 CUDA 上生成的是 Triton kernel，同样的 4 个算子融合成 {triton_kernels} 个 `@triton.jit` 函数。",
    needs=["cuda"],
    expect={"triton_kernels": 1, "same_result": True},
)
def _(ctx):
    """Inductor 为 4096 个元素上的 4 个逐点算子（mul、add、relu、sin）在 CUDA 上生成的 Triton kernel 个数与结果是否一致。"""
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(4096, device="cuda")
    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(fused_chain), x)
    code = "\n".join(codes)
    return {"triton_kernels": count_triton_kernels(code),
            "same_result": bool(torch.allclose(out, fused_chain(x), atol=1e-5))}


@claim(
    "torch-compile.cold-disk-warm",
    question=Q,
    statement="编译是有代价的，像 JIT 一样“第一次慢、之后快”，而且慢分三档：编译缓存为空时的第一次调用（FX 图缓存"
              "{cold_cache_miss:?未命中|命中}）是换一个新进程、磁盘上已有缓存时（缓存{disk_cache_hit:?命中|未命中}，但还要重新跑"
              " Dynamo、查缓存、加载编译产物）的 {cold_over_disk:x}，后者又是同一进程里之后每次调用的 {disk_over_warm:x}。",
    kind="perf",
    timeout=240,
    expect={"cold_over_disk": {">=": 2.0}, "disk_over_warm": {">=": 100}, "cold_cache_miss": True,
            "disk_cache_hit": True},
)
def _(ctx):
    cold = compile_probe(ctx.path("cache"), ctx.device)  # empty Inductor cache
    disk = compile_probe(ctx.path("cache"), ctx.device)  # new process, same cache on disk
    return {
        "cold_first_call_s": cold["calls_s"][0],
        "disk_first_call_s": disk["calls_s"][0],
        "second_call_ms": disk["calls_s"][1] * 1e3,
        "warm_call": disk["warm_s"],
        "warm_call_us": disk["warm_s"] * 1e6,
        "cold_over_disk": cold["calls_s"][0] / disk["calls_s"][0],
        "disk_over_warm": disk["calls_s"][0] / disk["warm_s"],
        "cold_cache_miss": cold["fx_cache"].get("fxgraph_cache_miss", 0) >= 1,
        "disk_cache_hit": disk["fx_cache"].get("fxgraph_cache_hit", 0) >= 1,
        "fx_cache": [cold["fx_cache"], disk["fx_cache"]],
        "import_s": [cold["import_s"], disk["import_s"]],
    }


@claim(
    "torch-compile.tiny-ops",
    question=Q,
    statement="在 CPU 上，一串 40 个小算子编译后融成 {chain_cpp_kernels} 个 kernel，一次调用从 eager 的 {times.chain_eager:time}"
              " 降到 {times.chain_compiled:time}，快 {chain_speedup:x}；但只有一个小算子时，编译后的调用要 {times.one_compiled:time}，"
              "反而是 eager（{times.one_eager:time}）的 {one_op_compiled_over_eager:x}。",
    kind="perf",
    expect={"chain_cpp_kernels": 1, "chain_speedup": {">=": 1.5}, "one_op_compiled_over_eager": {">=": 1.2}},
)
def _(ctx):
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(16)
    torch._dynamo.reset()
    chain_c = torch.compile(tiny_chain)
    one_c = torch.compile(one_op)
    _, codes = run_and_get_code(chain_c, x)  # the first call compiles; later calls reuse it
    one_c(x)
    with single_thread():
        t = compare({"chain_eager": lambda: tiny_chain(x), "chain_compiled": lambda: chain_c(x),
                     "one_eager": lambda: one_op(x), "one_compiled": lambda: one_c(x)},
                    rounds=11, warmup=1, inner=100)
    us = {k: v["median_s"] * 1e6 for k, v in t.items()}
    return {
        "chain_cpp_kernels": count_cpp_kernels("\n".join(codes)),
        "times": t,
        "us": us,
        "eager_us_per_op": us["chain_eager"] / 40,
        "chain_speedup": ratio(t, "chain_eager", "chain_compiled"),
        "one_op_compiled_over_eager": us["one_compiled"] / us["one_eager"],
        "spread": {k: v["spread"] for k, v in t.items()},
    }


@claim(
    "torch-compile.graph-breaks",
    question=Q,
    statement="遇到 Dynamo 处理不了的代码，图会断开：依赖张量数值的 `if` 和 `print` 各造成一次 graph break，一个函数被切成"
              " {graph_count} 张图、断开 {graph_break_count} 次，断点处退回 Python 解释执行；`torch._dynamo.explain` 会直接给出原因"
              "（`generic_jump`、无法追踪内建函数 `print`）。",
    expect={"graph_count": 3, "graph_break_count": 2, "reasons_mention_jump": True, "reasons_mention_print": True},
)
def _(ctx):
    torch._dynamo.reset()
    x = torch.ones(8, device=ctx.device)  # sin(1) > 0: the branch is taken, y * 2 sits between the breaks
    report = torch._dynamo.explain(branchy)(x)
    reasons = [str(b.reason).splitlines()[0][:160] for b in report.break_reasons]
    return {
        "graph_count": report.graph_count,
        "graph_break_count": report.graph_break_count,
        "op_count": report.op_count,
        "reasons": reasons,
        "reasons_mention_jump": any("generic_jump" in str(b.reason) for b in report.break_reasons),
        "reasons_mention_print": any("print" in str(b.reason) for b in report.break_reasons),
    }


@claim(
    "torch-compile.cuda-tiny-chain",
    question=Q,
    statement="融合之后，eager 要逐个分发、launch 的 40 个小算子，compile 后只剩 {triton_kernels} 个 Triton kernel，"
              "一次调用从 {eager:time} 降到 {compiled:time}，快 {speedup:x}。",
    needs=["cuda"],
    kind="perf",
    expect={"triton_kernels": 1, "speedup": {">=": 2.0}},
)
def _(ctx):
    """1024 个元素上 40 个小逐点算子在 CUDA 上 eager 与 torch.compile 之后的每次调用耗时，以及编译出的 Triton kernel 个数。"""
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(1024, device="cuda")
    torch._dynamo.reset()
    chain_c = torch.compile(tiny_chain)
    _, codes = run_and_get_code(chain_c, x)  # the first call compiles; later calls reuse it
    t = compare({"eager": lambda: tiny_chain(x), "compiled": lambda: chain_c(x)}, rounds=11, inner=20, device="cuda")
    return {"triton_kernels": count_triton_kernels("\n".join(codes)), "eager": t["eager"], "compiled": t["compiled"],
            "eager_us": t["eager"]["median_s"] * 1e6, "compiled_us": t["compiled"]["median_s"] * 1e6,
            "speedup": ratio(t, "eager", "compiled")}
