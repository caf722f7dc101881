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
    statement="TorchDynamo 把 Python 函数里的 tensor 运算捕获成一张 FX Graph：每个节点是一个 torch 函数或运算符，"
              "Python 本身的语句不在图里。",
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
    statement="在 CPU 上 Inductor 生成的是 C++ 代码（经 g++ 编译后加载），mul、add、relu、sin 四个算子融合成一个 kernel。",
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
    statement="在 CUDA 上 Inductor 生成的是 Triton kernel，同样的四个算子融合成一个 @triton.jit 函数。",
    needs=["cuda"],
    expect={"triton_kernels": 1, "same_result": True},
)
def _(ctx):
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
    statement="torch.compile 的第一次调用要编译：空缓存时要若干秒；换一个新进程、磁盘上已有编译缓存时降到约一秒；"
              "同一进程里之后的调用只要几十微秒。",
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
    statement="CPU 上对 40 个连续的小算子，compile 把它们融成一次调用，明显快于 eager；但只有一个小算子时，"
              "编译后的调用反而比 eager 慢（守卫检查和包装代码本身就有几微秒到几十微秒的固定开销）。",
    kind="perf",
    expect={"chain_speedup": {">=": 1.5}, "one_op_compiled_over_eager": {">=": 1.2}},
)
def _(ctx):
    x = torch.randn(16)
    torch._dynamo.reset()
    chain_c = torch.compile(tiny_chain)
    one_c = torch.compile(one_op)
    chain_c(x), one_c(x)
    with single_thread():
        t = compare({"chain_eager": lambda: tiny_chain(x), "chain_compiled": lambda: chain_c(x),
                     "one_eager": lambda: one_op(x), "one_compiled": lambda: one_c(x)},
                    rounds=11, warmup=1, inner=100)
    us = {k: v["median_s"] * 1e6 for k, v in t.items()}
    return {
        "us": us,
        "eager_us_per_op": us["chain_eager"] / 40,
        "chain_speedup": ratio(t, "chain_eager", "chain_compiled"),
        "one_op_compiled_over_eager": us["one_compiled"] / us["one_eager"],
        "spread": {k: v["spread"] for k, v in t.items()},
    }


@claim(
    "torch-compile.graph-breaks",
    question=Q,
    statement="依赖 tensor 数值的 if 和 print 都会让 Dynamo 断图：一个函数被切成 3 张图、2 次 graph break，"
              "断点处退回 Python 执行；torch._dynamo.explain 会给出原因。",
    expect={"graph_count": 3, "graph_break_count": 2, "reasons_mention_print": True},
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
        "reasons_mention_print": any("print" in str(b.reason) for b in report.break_reasons),
    }


@claim(
    "torch-compile.cuda-tiny-chain",
    question=Q,
    statement="在 CUDA 上，40 个小算子 eager 要 launch 40 个 kernel，compile 后只 launch 1 个，调用明显更快。",
    needs=["cuda"],
    kind="perf",
    expect={"speedup": {">=": 2.0}},
)
def _(ctx):
    x = torch.randn(1024, device="cuda")
    torch._dynamo.reset()
    chain_c = torch.compile(tiny_chain)
    chain_c(x)
    t = compare({"eager": lambda: tiny_chain(x), "compiled": lambda: chain_c(x)}, rounds=11, inner=20, device="cuda")
    return {"eager_us": t["eager"]["median_s"] * 1e6, "compiled_us": t["compiled"]["median_s"] * 1e6,
            "speedup": ratio(t, "eager", "compiled")}
