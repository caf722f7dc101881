"""Dynamo on the CPU: what it captures, what it guards, when it compiles again, and where it breaks the graph.

Every claim here compiles with a backend that only records the FX graphs Dynamo hands it (no Inductor, no g++),
so the counts are Dynamo's own.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from collections.abc import Iterator
from typing import Any

import torch

from verify.claim import claim

Q = "torch-compile-internals"


class Recorder:
    """A ``torch.compile`` backend that records every FX graph Dynamo captured and runs it as is (no Inductor)."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []
        self.calls = 0  # calls into any of the compiled graphs

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        self.graphs.append(gm)

        def run(*args: Any) -> Any:
            self.calls += 1
            return gm.forward(*args)
        return run

    def ops(self) -> list[list[str]]:
        """Per graph, the calls it holds (functions and methods), by name."""
        return [[getattr(n.target, "__name__", str(n.target)) for n in g.graph.nodes
                 if n.op in ("call_function", "call_method", "call_module")] for g in self.graphs]


def text_of(items: list[Any]) -> str:
    """A list as a reader reads it in a sentence: ``sin、mul``; nested lists (one per graph) joined by `` / ``."""
    return " / ".join(text_of(i) for i in items) if items and isinstance(items[0], list) else "、".join(map(str, items))


def recompile_reason(log: str) -> str:
    """The first guard failure the ``recompiles`` log names, without the source line after ``#``."""
    reason = re.search(r"guard failure\(s\):\s*\n\s*- \S+ (.*)", log)
    return reason.group(1).split("#")[0].strip() if reason else ""


def placeholders(gm: torch.fx.GraphModule) -> list[Any]:
    """The example value of each graph input: a tensor's shape (its sizes as text), or a SymInt's text."""
    out: list[Any] = []
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            v = n.meta.get("example_value")
            out.append([str(d) for d in v.shape] if isinstance(v, torch.Tensor) else f"SymInt {v}")
    return out


@contextlib.contextmanager
def dynamo_logs(**artifacts: bool) -> Iterator[io.StringIO]:
    """Capture Dynamo's log artifacts (e.g. ``guards=True, recompiles=True``) as text."""
    import torch._logging  # noqa: PLC0415

    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    torch._logging.set_logs(**artifacts)
    logger = logging.getLogger("torch._dynamo")  # guards and recompiles log under it; set_logs resets "torch"'s handlers
    logger.addHandler(handler)
    try:
        yield buf
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()


def fresh() -> None:
    """Forget every compiled frame and counter, so that a claim counts only its own compiles."""
    import torch._dynamo  # noqa: PLC0415
    from torch._dynamo.utils import counters  # noqa: PLC0415

    torch._dynamo.reset()
    counters.clear()


def _chain(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() + 1).relu()


@claim(
    "dynamo.guards",
    question=Q,
    statement="Dynamo 编译一帧时同时生成一组 guard，下次调用先检查它们：编译 `(x.sin() + 1).relu()` 后 `guards` 日志里的守卫种类有 {guard_kinds_text}；"
              "对张量 x 的 `TENSOR_MATCH` 一条核对 dtype（{dtype_checked}）、size [{size_checked}]、stride [{stride_checked}]，"
              "设备按 DispatchKeySet 核对；换成 requires_grad=True 的同形状输入再调用，重编译的原因是 “{grad_reason}”。",
    expect={"guard_kinds": {"contains": "TENSOR_MATCH"}, "global_state_guarded": True,
            "size_checked": "8", "stride_checked": "1", "dtype_checked": "torch.float32",
            "grad_reason": {"contains": "requires_grad mismatch"}, "grad_recompiled": True},
)
def _(ctx):
    """范围：guards 日志，torch 2.13"""
    fresh()
    rec = Recorder()
    fn = torch.compile(_chain, backend=rec, dynamic=False)
    with dynamo_logs(guards=True) as log:
        fn(torch.randn(8))
    text = log.getvalue()
    with dynamo_logs(recompiles=True) as grad_log:
        fn(torch.randn(8, requires_grad=True))
    match = re.search(r"TENSOR_MATCH: check_tensor\(L\['x'\],.*?(torch\.\w+), .*?size=\[([^\]]*)\], stride=\[([^\]]*)\]",
                      text)
    kinds = sorted(set(re.findall(r"\+- ([A-Z_]{4,}):", text)))
    return {
        "guard_kinds": kinds, "guard_kinds_text": text_of(kinds),
        "global_state_guarded": "GLOBAL_STATE" in kinds and "grad_mode" in text,
        "dtype_checked": match.group(1) if match else None,
        "size_checked": match.group(2).replace(" ", "") if match else None,
        "stride_checked": match.group(3).replace(" ", "") if match else None,
        "grad_reason": recompile_reason(grad_log.getvalue()), "grad_recompiled": len(rec.graphs) == 2,
        "tensor_match_line": next((ln.strip() for ln in text.splitlines() if "TENSOR_MATCH" in ln), "")[-300:],
    }


@claim(
    "dynamo.recompile-dtype",
    question=Q,
    statement="guard 一失败就重新编译，而不是沿用第一次的图：同一个函数先用 float32、再用 float64 的同形状张量调用，"
              "后端被调用了 {compiles} 次，`recompiles` 日志给出的原因是 “{reason}”；再用回 float32 时 {compiles_after_return} 次新编译，旧图还在缓存里"
              "（函数的代码对象上挂着 {cache_entries} 个缓存项，这个数不经过后端）。",
    expect={"compiles": 2, "reason": {"contains": "dtype mismatch"}, "compiles_after_return": 0, "results_match_eager": True,
            "cache_entries": 2},
)
def _(ctx):
    """范围：recompiles 日志与缓存项，torch 2.13"""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list  # noqa: PLC0415

    fresh()
    rec = Recorder()
    fn = torch.compile(_chain, backend=rec, dynamic=False)
    x32, x64 = torch.randn(8), torch.randn(8, dtype=torch.float64)
    with dynamo_logs(recompiles=True) as log:
        ok = torch.equal(fn(x32), _chain(x32)) and torch.equal(fn(x64), _chain(x64))
    compiles = len(rec.graphs)
    ok = ok and torch.equal(fn(x32), _chain(x32))
    return {"compiles": compiles, "compiles_after_return": len(rec.graphs) - compiles,
            "reason": recompile_reason(log.getvalue()) or log.getvalue()[-300:], "results_match_eager": ok,
            "cache_entries": len(_debug_get_cache_entry_list(_chain.__code__))}


def _scaled(x: torch.Tensor, k: int) -> torch.Tensor:
    return x * k


def _moded(x: torch.Tensor, mode: str) -> torch.Tensor:
    return x + 1 if mode == "a" else x - 1


class _Scale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = 2  # an int attribute of the module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.k


def _flagged(x: torch.Tensor, flag: bool) -> torch.Tensor:
    if flag:  # a Python value: Dynamo reads it while tracing and guards on it
        return x + 1
    return x - 1


@claim(
    "dynamo.python-constant",
    question=Q,
    statement="布尔参数上的分支不断图，而是被特化进图、再加一条 guard：`if flag:` 在 flag 为 True 和 False 时各编译一张图（{compiles} 张，重编译的原因是 “{reason}”，"
              "两张图里分别只有 {ops_text}），断图 {graph_breaks} 次，两种输入的结果{results_match_eager:?都与 eager 相同|与 eager 不同}；"
              "整数参数不同：`x * k` 用 k = {int_values} 调用只编译 {int_compiles} 次，第二张图里 k 是 SymInt 输入"
              "（{int_symbolic:?和形状一样转成了符号|仍是常数}），浮点参数取 4 个值编译 {float_compiles} 次；"
              "字符串参数取 4 个值编译 {str_compiles} 次，`nn.Module` 的整数属性取 4 个值编译 {attr_compiles} 次（每个值一张图）。",
    expect={"compiles": 2, "ops": [["add"], ["sub"]], "graph_breaks": 0, "results_match_eager": True,
            "reason": {"contains": "== True"}, "flag_in_reason": True, "int_compiles": 2, "int_symbolic": True,
            "float_compiles": 2, "str_compiles": 4, "attr_compiles": 4},
)
def _(ctx):
    """范围：Dynamo，torch 2.13"""
    from torch._dynamo.utils import counters  # noqa: PLC0415

    fresh()
    rec = Recorder()
    fn = torch.compile(_flagged, backend=rec)
    x = torch.randn(4)
    with dynamo_logs(recompiles=True) as log:
        ok = all(torch.equal(fn(x, f), _flagged(x, f)) for f in (True, False, True))
    reason = recompile_reason(log.getvalue())
    out = {"compiles": len(rec.graphs), "ops": rec.ops(), "ops_text": text_of(rec.ops()),
           "graph_breaks": sum(counters["graph_break"].values()), "reason": reason, "flag_in_reason": "flag" in reason,
           "results_match_eager": ok}
    fresh()
    ints = Recorder()
    fn_int = torch.compile(_scaled, backend=ints)
    values = (2, 3, 4, 5)
    ok_int = all(torch.equal(fn_int(x, k), _scaled(x, k)) for k in values)
    second = placeholders(ints.graphs[1]) if len(ints.graphs) > 1 else []
    counts = {}
    for name, make, args in (("float", lambda r: torch.compile(_scaled, backend=r), [(x, k + 0.5) for k in values]),
                             ("str", lambda r: torch.compile(_moded, backend=r), [(x, m) for m in "abcd"])):
        fresh()
        r = Recorder()
        f = make(r)
        for a in args:
            f(*a)
        counts[f"{name}_compiles"] = len(r.graphs)
    fresh()
    r, module = Recorder(), _Scale()
    compiled_module = torch.compile(module, backend=r)
    for k in values:
        module.k = k
        ok = ok and torch.equal(compiled_module(x), x * k)
    counts["attr_compiles"] = len(r.graphs)
    return out | counts | {"int_values": text_of(list(values)), "int_compiles": len(ints.graphs), "int_second_graph_inputs": second,
                  "int_symbolic": any(isinstance(p, str) and p.startswith("SymInt") for p in second),
                  "results_match_eager": ok and ok_int}


@claim(
    "dynamo.automatic-dynamic",
    question=Q,
    statement="形状的默认处理是“自动动态”：长度 8、16、32、64 依次调用，默认设置下编译 {default_compiles} 次，第二次的图多了一个 SymInt 输入，"
              "x 的形状是 [{second_graph_shape_text}]，guard 里长度不再核对具体值（`TENSOR_MATCH` 的 size 是 [{second_size_guard}]），只剩 `{symbolic_guard}`，之后的长度不再编译；`dynamic=False` 时编译 {static_compiles} 次（每个长度一次），`dynamic=True` 时 {dynamic_compiles} 次。",
    expect={"default_compiles": 2, "static_compiles": 4, "dynamic_compiles": 1, "first_graph_static": True,
            "second_size_guard": "None", "symbolic_guard": {"contains": "<= L['x'].size()[0]"},
            "second_graph_symbolic": True},
)
def _(ctx):
    """范围：Dynamo 默认配置，torch 2.13"""
    counts, recs, logs = {}, {}, {}
    for dynamic in (None, False, True):
        fresh()
        rec = Recorder()
        fn = torch.compile(_chain, backend=rec, dynamic=dynamic)
        with dynamo_logs(guards=True) as log:
            for n in (8, 16, 32, 64):
                fn(torch.randn(n))
        counts[dynamic], recs[dynamic], logs[dynamic] = len(rec.graphs), rec, log.getvalue()
    first, second = (placeholders(g) for g in recs[None].graphs[:2])
    sizes = re.findall(r"TENSOR_MATCH: check_tensor\(L\['x'\],.*?size=\[([^\]]*)\]", logs[None])
    relation = re.search(r"LAMBDA_GUARD: (\d+ <= L\['x'\]\.size\(\)\[0\])", logs[None])
    return {
        "size_guards": sizes, "second_size_guard": sizes[1] if len(sizes) > 1 else None,
        "symbolic_guard": relation.group(1) if relation else "",
        "default_compiles": counts[None], "static_compiles": counts[False], "dynamic_compiles": counts[True],
        "first_graph_inputs": first, "second_graph_inputs": second,
        "first_graph_static": first == [["8"]],
        "second_graph_symbolic": any(isinstance(p, str) and p.startswith("SymInt") for p in second)
        and any(isinstance(p, list) and not p[0].isdigit() for p in second),
        "second_graph_shape": next((p for p in second if isinstance(p, list)), None),
        "second_graph_shape_text": text_of(next((p for p in second if isinstance(p, list)), [])),
    }


@claim(
    "dynamo.recompile-limit",
    question=Q,
    statement="重编译有上限：`dynamic=False` 下用 {calls} 种长度调用，这一帧只编译出 {compiles} 张图（`recompile_limit` = {limit}，即一次编译加 {recompiles} 次重编译）；"
              "之后不再编译：和已有的图匹配的输入仍走编译好的图（再用一个编译过的长度调用，进图 {cached_reused} 次），"
              "新的长度不经 Dynamo 直接执行（进图 {new_entered_graph} 次），结果{results_match_eager:?仍然正确|出了错}；"
              "同样的调用加上 `fullgraph=True`，到上限时报错（{fullgraph_error}）。",
    expect={"compiles": 8, "limit": 8, "recompiles": 7, "calls": 12, "cached_reused": 1, "new_entered_graph": 0,
            "results_match_eager": True, "fullgraph_error": {"contains": "RecompileLimit"}},
)
def _(ctx):
    """fullgraph=True failing at the limit is recent Dynamo behaviour.

    范围：Dynamo 默认配置，torch 2.13
    """
    import torch._dynamo.config as dconfig  # noqa: PLC0415

    fresh()
    rec = Recorder()
    fn = torch.compile(_chain, backend=rec, dynamic=False)
    xs = [torch.randn(n) for n in range(1, 13)]
    ok = all(torch.equal(fn(x), _chain(x)) for x in xs)
    limit = getattr(dconfig, "recompile_limit", None) or dconfig.cache_size_limit  # its name before torch 2.6
    entered = []
    for x in (torch.randn(5), torch.randn(12)):  # length 5 has a graph; length 12 came after the limit
        before = rec.calls
        ok = ok and torch.equal(fn(x), _chain(x))
        entered.append(rec.calls - before)
    fresh()
    strict = torch.compile(_chain, backend=Recorder(), dynamic=False, fullgraph=True)
    try:
        for x in xs:
            strict(x)
        err = "no error"
    except Exception as e:  # noqa: BLE001
        err = type(e).__name__
    return {"compiles": len(rec.graphs), "limit": limit, "recompiles": len(rec.graphs) - 1, "calls": len(xs),
            "cached_reused": entered[0], "new_entered_graph": entered[1], "results_match_eager": ok,
            "fullgraph_error": err}


def _data_branch(x: torch.Tensor) -> torch.Tensor:
    y = x.sin() * 2
    if y.sum() > 0:  # depends on the data: Dynamo cannot decide it while tracing
        return y.cos() + 1
    return y.tan() - 1


@claim(
    "dynamo.break-keeps-graphs",
    question=Q,
    statement="断图不是“整个函数回到 eager”：`torch._dynamo.explain` 对一个在数据相关的 `if` 处断图的函数数出 {graph_count} 张图、"
              "{break_count} 次断图，两张图的算子分别是 {ops_text}：`if` 之前的 sin、乘、sum、比较在第一张图里，走到的分支在第二张图里，"
              "交回 Python 的只有那个布尔判断。",
    expect={"graph_count": 2, "break_count": 1, "ops_per_graph": [4, 2], "results_match_eager": True},
)
def _(ctx):
    """范围：Dynamo 的 explain，torch 2.13"""
    import torch._dynamo as dynamo  # noqa: PLC0415

    fresh()
    x = torch.randn(8, generator=torch.Generator().manual_seed(0))
    ex = dynamo.explain(_data_branch)(x)
    ops = [[n for n in g.graph.nodes if n.op in ("call_function", "call_method")] for g in ex.graphs]
    fn = torch.compile(_data_branch, backend="eager")
    ok = all(torch.equal(fn(v), _data_branch(v)) for v in (x.abs() + 0.1, -x.abs() - 0.1))
    return {"graph_count": ex.graph_count, "break_count": ex.graph_break_count,
            "ops_per_graph": [len(o) for o in ops], "ops": [[str(getattr(n.target, "__name__", n.target)) for n in o] for o in ops],
            "ops_text": text_of([[str(getattr(n.target, "__name__", n.target)) for n in o] for o in ops]),
            "reason": str(ex.break_reasons[0].reason)[:300] if ex.break_reasons else "",
            "results_match_eager": ok}


def _with_print(x: torch.Tensor) -> torch.Tensor:
    y = (x * 2).relu()
    print("mid")  # a Python side effect: Dynamo cannot put it in a graph
    return (y + 1).exp()


@claim(
    "dynamo.break-print",
    question=Q,
    statement="换一种断图原因再看一遍：函数中间一个 `print` 让 Dynamo 把它切成 {compiles} 张图交给后端，算子分别是 {ops_text}，"
              "`print` 前后的计算都编译了；同一个函数用 `fullgraph=True` 编译就直接报错（{fullgraph_error}），不会悄悄回到 eager。",
    expect={"compiles": 2, "ops": [["mul", "relu"], ["add", "exp"]], "fullgraph_error": {"contains": "Unsupported"},
            "results_match_eager": True},
)
def _(ctx):
    """范围：Dynamo，torch 2.13"""
    import contextlib as _cl  # noqa: PLC0415

    fresh()
    rec = Recorder()
    x = torch.randn(8)
    with _cl.redirect_stdout(io.StringIO()):
        ok = torch.equal(torch.compile(_with_print, backend=rec)(x), _with_print(x))
        fresh()
        try:
            torch.compile(_with_print, backend=Recorder(), fullgraph=True)(x)
            err = "no error"
        except Exception as e:  # noqa: BLE001
            err = type(e).__name__
    return {"compiles": len(rec.graphs), "ops": rec.ops(), "ops_text": text_of(rec.ops()), "fullgraph_error": err,
            "results_match_eager": ok}


@claim(
    "dynamo.bytecode",
    question=Q,
    statement="Dynamo 改写的是字节码：编译后函数自己的 `__code__` {original_unchanged:?没变|被换掉了}，缓存项里存的是一份新的字节码，"
              "它调用的名字里有 Dynamo 生成的图函数 `{compiled_fn}`；每个缓存项配一组 guard（{has_guards:?缓存项有 guard_manager|缓存项没有 guard}），这个函数现在有 {cache_entries} 个缓存项。",
    expect={"original_unchanged": True, "compiled_fn": {"contains": "__compiled_fn"}, "cache_entries": 1, "has_guards": True},
)
def _(ctx):
    """Read with torch._dynamo.eval_frame._debug_get_cache_entry_list.

    范围：Dynamo 的缓存项，torch 2.13
    """
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list  # noqa: PLC0415

    fresh()
    before = _chain.__code__
    torch.compile(_chain, backend=Recorder())(torch.randn(8))
    entries = _debug_get_cache_entry_list(_chain.__code__)
    names = list(entries[0].code.co_names) if entries else []
    return {"original_unchanged": _chain.__code__ is before, "cache_entries": len(entries),
            "has_guards": bool(entries) and entries[0].guard_manager is not None,
            "compiled_fn": "__compiled_fn" if any(n.startswith("__compiled_fn") for n in names) else "",
            "new_code_names": names[:12]}


def _length_from_shape(x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros(int(x.shape[0])) + 1  # int(): a Python number taken out of the shape


def _item_scaled(x: torch.Tensor) -> torch.Tensor:
    return x * x.sum().item()  # .item(): a Python number taken out of the data


def _sign_branch(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:  # depends on the data
        return x + 1
    return x - 1


@claim(
    "dynamo.jit-trace-contrast",
    question=Q,
    statement="对照 `torch.jit.trace`：它用长度 8 的输入跑一遍记下算子，逐元素链换成长度 16 的输入结果{shape_general:?仍然正确|出了错}（张量算子本身不绑定形状）；"
              "但 `int(x.shape[0])` 被记成常数，长度 5 的输入得到长度 {int_frozen_len} 的输出，`x.sum().item()` 也被记成追踪时的值（换输入后结果{item_frozen:?与 eager 不同|仍与 eager 相同}）；数据相关的 `if` 停在追踪时走的分支，"
              "换一个符号的输入结果{branch_frozen:?与 eager 不同|仍与 eager 相同}，调用时不检查这些假设；同一个分支函数用 `torch.compile`（只记录图的后端）"
              "两种输入都{compile_matches_eager:?与 eager 一致|与 eager 不同}。追踪时{deprecation_warned:?有|没有} DeprecationWarning（这台机器的 torch 版本）。",
    expect={"shape_general": True, "int_frozen_len": 8, "item_frozen": True, "branch_frozen": True, "compile_matches_eager": True},
)
def _(ctx):
    """范围：jit.trace 与 torch.compile，torch 2.13"""
    import warnings  # noqa: PLC0415

    x8, pos, neg = torch.randn(8), torch.ones(4), -torch.ones(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chain = torch.jit.trace(_chain, x8)
        length = torch.jit.trace(_length_from_shape, x8)
        branch = torch.jit.trace(_sign_branch, pos)
        item = torch.jit.trace(_item_scaled, pos)
    x16 = torch.randn(16)
    fresh()
    fn = torch.compile(_sign_branch, backend=Recorder())
    return {
        "shape_general": torch.allclose(chain(x16), _chain(x16)),
        "int_frozen_len": length(torch.randn(5)).shape[0],
        "branch_frozen": not torch.equal(branch(neg), _sign_branch(neg)),
        "item_frozen": not torch.equal(item(2 * pos), _item_scaled(2 * pos)),
        "compile_matches_eager": all(torch.equal(fn(v), _sign_branch(v)) for v in (pos, neg)),
        "warnings": sorted({type(w.message).__name__ for w in caught}),
        "deprecation_warned": any("deprecat" in str(w.message).lower() for w in caught),
    }
