"""The Python route into the same dispatcher: torch.library.custom_op and torch.library.Library."""

from __future__ import annotations

import warnings

import torch

from verify.claim import claim


def registered_keys(op: str) -> list[str]:
    keys = []
    for line in torch._C._dispatch_dump(op).splitlines():
        key, sep, _ = line.partition(": registered at")
        if sep and "::" not in key and key.strip() != "debug":
            keys.append(key.strip())
    return keys


def _triple(name: str):
    @torch.library.custom_op(name, mutates_args=())
    def triple(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    return triple


@claim(
    "pylib.custom-op-same-table",
    question="op-registration",
    statement="`torch.library.custom_op` 注册进的是同一个 dispatcher，而且同样是执行代码的副作用：装饰器执行之前 "
    "`torch.ops` 下没有它，执行之后就能调用，表里登记了 CompositeExplicitAutograd（实现）、Autograd 和 Meta；"
    "但在 `register_fake` 之前对 Meta tensor 调用仍然报错，注册 fake 之后才能只推形状。",
    expect={
        "before_define": False,
        "registered": ["Autograd[alias]", "CompositeExplicitAutograd[alias]", "Meta"],
        "result": [3.0, 3.0],
        "meta_before_fake": {"contains": "no fake impl"},
        "meta_after_fake": [2],
    },
)
def _(ctx):
    before = hasattr(torch.ops.opreg_py, "triple")
    triple = _triple("opreg_py::triple")
    keys = sorted(registered_keys("opreg_py::triple"))
    result = torch.ops.opreg_py.triple(torch.ones(2)).tolist()
    try:
        torch.ops.opreg_py.triple(torch.empty(2, device="meta"))
        meta_before = "no error"
    except RuntimeError as exc:
        meta_before = str(exc).split(". ")[0]

    @triple.register_fake
    def _(x):
        return torch.empty_like(x)

    meta_after = list(torch.ops.opreg_py.triple(torch.empty(2, device="meta")).shape)
    return {"before_define": before, "registered": keys, "result": result, "meta_before_fake": meta_before,
            "meta_after_fake": meta_after}


@claim(
    "pylib.custom-op-no-autograd",
    question="op-registration",
    statement="和 C++ 路线不同，`custom_op` 没有 `register_autograd` 时，反向直接报错，不会给一条警告后悄悄算出错的梯度。",
    raises=("RuntimeError", "no autograd formula was registered"),
)
def _(ctx):
    _triple("opreg_py::triple_nograd")
    x = torch.ones(2, requires_grad=True)
    y = torch.ops.opreg_py.triple_nograd(x)
    ctx.observe(forward_ok=True, output_requires_grad=y.requires_grad)
    y.sum().backward()


@claim(
    "pylib.library-missing-backend",
    question="op-registration",
    statement="用 `torch.library.Library` 只为 CPU 注册 kernel 的算子，拿稀疏 tensor（SparseCPU 键，表里这一列没有 kernel）"
    "调用时，得到那条熟悉的“Could not run … with arguments from the 'SparseCPU' backend”，错误信息后面列出它能处理的键。",
    raises=("NotImplementedError", "with arguments from the 'SparseCPU' backend"),
)
def _(ctx):
    lib = torch.library.Library("opreg_py2", "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.impl("neg", lambda x: -x, "CPU")
    ctx.observe(registered=registered_keys("opreg_py2::neg"), cpu_result=torch.ops.opreg_py2.neg(torch.ones(2)).tolist())
    try:
        torch.ops.opreg_py2.neg(torch.eye(2).to_sparse())  # keys: SparseCPU, AutogradCPU, ...
    except NotImplementedError as exc:
        text = str(exc)
        ctx.observe(message=text.split(". ")[0],
                    available_for=text[text.find("only available for these backends"):].split(".")[0])
        raise
    finally:
        lib._destroy()


@claim(
    "pylib.dispatch-order",
    question="op-registration",
    statement="调用时先执行优先级最高的键：给一个算子在 AutogradCPU 和 CPU 两列各注册一个会记下名字的 kernel，"
    "普通 tensor 的调用（无论 `requires_grad`）先进 AutogradCPU，它在 autograd 之下重新分发，才进 CPU；"
    "`torch.inference_mode()` 里新建的 tensor 直接进 CPU。",
    expect={
        "plain": ["AutogradCPU", "CPU"],
        "requires_grad": ["AutogradCPU", "CPU"],
        "inference_mode": ["CPU"],
    },
)
def _(ctx):
    calls: list[str] = []
    lib = torch.library.Library("opreg_py3", "DEF")
    try:
        lib.define("trace(Tensor x) -> Tensor")

        def cpu_kernel(x):
            calls.append("CPU")
            return x.clone()

        def autograd_kernel(x):
            calls.append("AutogradCPU")
            with torch._C._AutoDispatchBelowAutograd():  # skip the autograd keys on the way down
                return torch.ops.opreg_py3.trace(x)

        lib.impl("trace", cpu_kernel, "CPU")
        lib.impl("trace", autograd_kernel, "AutogradCPU")
        seen = {}
        for name, make in (("plain", lambda: torch.ones(2)), ("requires_grad", lambda: torch.ones(2, requires_grad=True))):
            calls.clear()
            torch.ops.opreg_py3.trace(make())
            seen[name] = list(calls)
        with torch.inference_mode():
            calls.clear()
            torch.ops.opreg_py3.trace(torch.ones(2))
            seen["inference_mode"] = list(calls)
    finally:
        lib._destroy()
    return seen


def table_kinds(op: str, keys=("CPU", "CUDA", "Meta", "AutogradCPU", "AutogradCUDA")) -> dict[str, str]:
    """Key -> kind of the computed entry ('kernel', 'math kernel', 'default backend kernel', 'backend fallback')."""
    out = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        key, _, rest = line.partition(":")
        if key in keys and "[" in rest:
            out[key] = rest[rest.rfind("[") + 1 : rest.rfind("]")]
    return out


def debug_site(op: str) -> str:
    """Where the schema was registered ('debug: registered at FILE:LINE' in the dump), file name only."""
    for line in torch._C._dispatch_dump(op).splitlines():
        if line.startswith("debug: registered at "):
            where = line.removeprefix("debug: registered at ")
            return where.rsplit("/", 1)[-1]
    return ""


@claim(
    "pylib.one-def-per-namespace",
    question="op-registration",
    statement="一个命名空间只能有一个 `TORCH_LIBRARY`：Python 里第二次 `Library(ns, \"DEF\")` 时，dispatcher 抛出 "
    "“{error_head}”，并写出前后两次注册的位置；要把一个命名空间的定义分散到多处，用 `TORCH_LIBRARY_FRAGMENT`"
    "（Python 里是 `Library(ns, \"FRAGMENT\")`）：它往已有的命名空间里追加算子，两个算子各自记下注册位置（{sites}）。",
    expect={
        "error_head": "Only a single TORCH_LIBRARY can be used to register the namespace opreg_ns1",
        "error_names_both_sites": True,
        "defined": ["opreg_ns1::first", "opreg_ns1::second"],
        "sites_differ": True,
    },
)
def _(ctx):
    first = torch.library.Library("opreg_ns1", "DEF")
    first.define("first(Tensor x) -> Tensor")
    try:
        try:
            torch.library.Library("opreg_ns1", "DEF")
            error = ""
        except RuntimeError as exc:
            error = str(exc)
        fragment = torch.library.Library("opreg_ns1", "FRAGMENT")
        fragment.define("second(Tensor x) -> Tensor")
        defined = [op for op in ("opreg_ns1::first", "opreg_ns1::second") if debug_site(op)]
        sites = [debug_site("opreg_ns1::first"), debug_site("opreg_ns1::second")]
        fragment._destroy()
    finally:
        first._destroy()
    return {
        "error_head": error.split(";")[0],
        "error": error,
        "error_names_both_sites": "Previous registration of TORCH_LIBRARY was registered at" in error
        and "latest registration was registered at" in error,
        "defined": defined,
        "sites": " 和 ".join(sites),
        "sites_differ": len(set(sites)) == 2,
    }


def _keyset_kernel(seen: dict[str, list[str]], name: str):
    """A kernel registered with ``with_keyset=True``: it records the highest key of the keyset it was called with."""

    def kernel(keyset, x):
        seen.setdefault(name, []).append(str(keyset.highestPriorityTypeId()).rsplit(".", 1)[-1])
        return x * 2

    return kernel


def _backward_warnings(fn) -> tuple[str, list[float], int]:
    x = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = fn(x)
        y.sum().backward()
    return type(y.grad_fn).__name__, x.grad.tolist(), len(caught)


@claim(
    "pylib.alias-cia-vs-cea",
    question="op-registration",
    statement="CompositeImplicitAutograd 和 CompositeExplicitAutograd 是别名键，注册时展开到它覆盖的各列："
    "只注册 CompositeImplicitAutograd 的算子，CPU、Meta 和 AutogradCPU 列都是它（{cia.AutogradCPU}），"
    "对 `requires_grad` 的输入它就在 {cia_ran_at} 这一列运行，autograd 记录的是它内部的运算（`grad_fn` 是 "
    "{cia_grad_fn}），没有警告；只注册 CompositeExplicitAutograd 的算子，CPU 和 Meta 列是它（{cea.CPU}），"
    "AutogradCPU 列却只是 {cea.AutogradCPU}，它要到 {cea_ran_at} 才运行，反向时有 {cea_warnings} 条"
    "“没有注册 autograd kernel”的警告。",
    expect={
        "cia": {"CPU": "math kernel", "CUDA": "math kernel", "Meta": "math kernel", "AutogradCPU": "math kernel",
                "AutogradCUDA": "math kernel"},
        "cea": {"CPU": "default backend kernel", "CUDA": "default backend kernel", "Meta": "default backend kernel",
                "AutogradCPU": "backend fallback", "AutogradCUDA": "backend fallback"},
        "cia_ran_at": "AutogradCPU",
        "cea_ran_at": "CPU",
        "cia_grad_fn": "MulBackward0",
        "cia_warnings": 0,
        "cea_warnings": {">=": 1},
        "cea_warning": {"contains": "an autograd kernel was not registered to the Autograd key(s)"},
    },
)
def _(ctx):
    seen: dict[str, list[str]] = {}
    lib = torch.library.Library("opreg_alias1", "DEF")
    try:
        lib.define("cia(Tensor x) -> Tensor")
        lib.define("cea(Tensor x) -> Tensor")
        lib.impl("cia", _keyset_kernel(seen, "cia"), "CompositeImplicitAutograd", with_keyset=True)
        lib.impl("cea", _keyset_kernel(seen, "cea"), "CompositeExplicitAutograd", with_keyset=True)
        cia_fn, cia_grad, cia_warns = _backward_warnings(torch.ops.opreg_alias1.cia)
        x = torch.ones(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.ops.opreg_alias1.cea(x).sum().backward()
        return {
            "cia": table_kinds("opreg_alias1::cia"),
            "cea": table_kinds("opreg_alias1::cea"),
            "cia_ran_at": seen["cia"][0],
            "cea_ran_at": seen["cea"][0],
            "cia_grad_fn": cia_fn,
            "cia_grad": cia_grad,
            "cia_warnings": cia_warns,
            "cea_warnings": len(caught),
            "cea_warning": str(caught[-1].message).split(". ")[0] if caught else "",
        }
    finally:
        lib._destroy()


@claim(
    "pylib.alias-precedence",
    question="op-registration",
    statement="每一列按固定顺序取 kernel：直接注册到这一列的最优先，其次是 CompositeExplicitAutograd，再次是 "
    "CompositeImplicitAutograd，最后才是 backend fallback；而且 AutogradCPU 列只在 CPU 列没有自己的 kernel 时才用 "
    "CompositeImplicitAutograd。同时注册 CPU kernel 和 CompositeImplicitAutograd 的算子：CPU 列是 {both.CPU}，"
    "AutogradCPU 列变成 {both.AutogradCPU}，CUDA 和 AutogradCUDA 列仍是 {both.CUDA}；再加一个 "
    "CompositeExplicitAutograd 后，CUDA 列换成了 {with_cea.CUDA}。",
    expect={
        "both": {"CPU": "kernel", "CUDA": "math kernel", "Meta": "math kernel", "AutogradCPU": "backend fallback",
                 "AutogradCUDA": "math kernel"},
        "with_cea": {"CPU": "kernel", "CUDA": "default backend kernel", "Meta": "default backend kernel",
                     "AutogradCPU": "backend fallback", "AutogradCUDA": "backend fallback"},
        "cpu_call_ran": ["cpu"],
    },
)
def _(ctx):
    seen: dict[str, list[str]] = {}
    lib = torch.library.Library("opreg_alias2", "DEF")
    try:
        lib.define("both(Tensor x) -> Tensor")
        lib.impl("both", _keyset_kernel(seen, "cia"), "CompositeImplicitAutograd", with_keyset=True)
        lib.impl("both", _keyset_kernel(seen, "cpu"), "CPU", with_keyset=True)
        both = table_kinds("opreg_alias2::both")
        torch.ops.opreg_alias2.both(torch.ones(2))
        ran = sorted(seen)
        lib.impl("both", _keyset_kernel(seen, "cea"), "CompositeExplicitAutograd", with_keyset=True)
        with_cea = table_kinds("opreg_alias2::both")
        return {"both": both, "with_cea": with_cea, "cpu_call_ran": ran}
    finally:
        lib._destroy()


@claim(
    "pylib.fake-before-meta",
    question="op-registration",
    statement="`FakeTensorMode` 先查 `register_fake` 的注册表，查不到才运行 Meta 列的 kernel：一个算子既有 fake 实现、"
    "又有后注册而占住 Meta 列的 Meta kernel 时，直接对 meta tensor 调用进的是 {meta_call}，在 `FakeTensorMode` 里调用"
    "进的是 {fake_mode_call}；只有 Meta kernel 的算子，在 `FakeTensorMode` 里才进 {meta_only_fake_mode}。"
    "在这个 Meta kernel 里查线程局部 included 集合：经 `FakeTensorMode` 调用时{meta_in_tls_under_fake:?含 Meta|不含 Meta}，"
    "直接对 meta tensor 调用时{meta_in_tls_direct:?也含 Meta|不含 Meta}。FakeTensor 是把 Meta 放进 included 集合，把调用引到 Meta 列的。",
    expect={
        "meta_column_is_meta_kernel": True,
        "meta_call": "Meta kernel",
        "fake_mode_call": "register_fake",
        "fake_mode_shape": [6],
        "meta_only_fake_mode": "Meta kernel",
        "meta_in_tls_under_fake": True,
        "meta_in_tls_direct": False,
    },
)
def _(ctx):
    from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: PLC0415

    calls: list[str] = []
    meta_in_tls: list[bool] = []

    def fake(x):
        calls.append("register_fake")
        return x.new_empty(2 * x.shape[0])

    def meta(x):
        calls.append("Meta kernel")
        meta_in_tls.append(torch._C._dispatch_tls_is_dispatch_key_included(torch._C.DispatchKey.Meta))
        return x.new_empty(2 * x.shape[0])

    lib = torch.library.Library("opreg_fake1", "DEF")
    extra = torch.library.Library("opreg_fake1", "FRAGMENT")
    try:
        lib.define("grow(Tensor x) -> Tensor")
        lib.define("grow_meta_only(Tensor x) -> Tensor")
        for name in ("grow", "grow_meta_only"):
            lib.impl(name, lambda x: torch.cat([x, x]), "CPU")
        torch.library.register_fake("opreg_fake1::grow", fake, lib=lib)  # also fills the Meta column
        # A Meta kernel registered afterwards takes the Meta column over (the fake impl's entry goes inactive).
        extra.impl("grow", meta, "Meta", allow_override=True)
        lib.impl("grow_meta_only", meta, "Meta")
        dump = torch._C._dispatch_dump("opreg_fake1::grow")

        calls.clear()
        torch.ops.opreg_fake1.grow(torch.empty(3, device="meta"))
        meta_call = list(calls)
        calls.clear()
        with FakeTensorMode():
            shape = list(torch.ops.opreg_fake1.grow(torch.empty(3)).shape)
        fake_mode_call = list(calls)

        calls.clear()
        meta_in_tls.clear()
        torch.ops.opreg_fake1.grow_meta_only(torch.empty(3, device="meta"))
        direct_tls = list(meta_in_tls)
        calls.clear()
        meta_in_tls.clear()
        with FakeTensorMode():
            torch.ops.opreg_fake1.grow_meta_only(torch.empty(3))
        return {
            "meta_column_is_meta_kernel": "Meta (inactive)" in dump,
            "meta_call": " → ".join(meta_call),
            "fake_mode_call": " → ".join(fake_mode_call),
            "fake_mode_shape": shape,
            "meta_only_fake_mode": " → ".join(calls),
            "meta_in_tls_under_fake": meta_in_tls[0] if meta_in_tls else None,
            "meta_in_tls_direct": direct_tls[0] if direct_tls else None,
        }
    finally:
        extra._destroy()
        lib._destroy()


def _outcome(result) -> str:
    return result if isinstance(result, str) else f"{type(result).__name__}: {result}"


@claim(
    "pylib.opcheck",
    question="op-registration",
    statement="`torch.library.opcheck` 把一个自定义算子的各项注册放在一起检查：实现和 fake 都对的算子，{ok_tests} "
    "全部通过；fake 实现把输出多算了一行的算子，{bad_failed} 不通过，原因是“{bad_reason}”。",
    expect={
        "ok_all_pass": True,
        "ok_has_faketensor_test": True,
        "bad_failed_has_faketensor": True,
        "bad_reason": {"contains": "are not equal"},
        "real_shape": [3],
    },
)
def _(ctx):
    @torch.library.custom_op("opreg_chk1::scale", mutates_args=())
    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @scale.register_fake
    def _(x):
        return torch.empty_like(x)

    @torch.library.custom_op("opreg_chk1::scale_bad_fake", mutates_args=())
    def scale_bad(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @scale_bad.register_fake
    def _(x):
        return x.new_empty(x.shape[0] + 1)  # one row too many

    x = torch.randn(3)
    ok = torch.library.opcheck(scale, (x,))
    bad = torch.library.opcheck(scale_bad, (x,), raise_exception=False)
    failed = [name for name, result in bad.items() if result != "SUCCESS"]
    reason = _outcome(bad.get("test_faketensor", ""))
    return {
        "ok": {k: _outcome(v) for k, v in ok.items()},
        "ok_tests": "、".join(ok),
        "ok_all_pass": all(v == "SUCCESS" for v in ok.values()),
        "ok_has_faketensor_test": "test_faketensor" in ok,
        "bad": {k: _outcome(v) for k, v in bad.items()},
        "bad_failed": "、".join(failed),
        "bad_failed_has_faketensor": "test_faketensor" in failed,
        "bad_reason": reason[reason.find("Shapes"):] if "Shapes" in reason else reason,
        "real_shape": list(scale_bad(x).shape),
    }


@claim(
    "pylib.mutates-args",
    question="op-registration",
    statement="`mutates_args` 写进 schema 的别名注解：`custom_op(..., mutates_args=(\"out\",))` 生成的 schema 是 "
    "{fill_schema}，其中 `(a1!)` 表示 `out` 属于别名集合 a1 并且会被写；ATen 的原地算子也是这样写的："
    "{add_schema}，`self` 和返回值同在 `(a!)`，说明返回的就是被改写的输入。声明了 `mutates_args=()` "
    "却改写参数的算子，opcheck 的 `test_schema` 报“{sneaky_error}”。",
    expect={
        "fill_schema": "opreg_chk2::fill(Tensor x, Tensor(a1!) out) -> ()",
        "fill_out_is_write": True,
        "add_schema": "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
        "fill_opcheck_pass": True,
        "sneaky_error": {"contains": "is not defined as mutable but was mutated"},
    },
)
def _(ctx):
    @torch.library.custom_op("opreg_chk2::fill", mutates_args=("out",))
    def fill(x: torch.Tensor, out: torch.Tensor) -> None:
        out.copy_(x)

    @torch.library.custom_op("opreg_chk2::sneaky", mutates_args=())
    def sneaky(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        out.copy_(x)  # writes an argument the schema says is read-only
        return x.clone()

    @sneaky.register_fake
    def _(x, out):
        return torch.empty_like(x)

    schema = torch.ops.opreg_chk2.fill.default._schema
    out_arg = next(a for a in schema.arguments if a.name == "out")
    x = torch.randn(3)
    checked = torch.library.opcheck(fill, (x, torch.empty(3)))
    sneaky_result = torch.library.opcheck(sneaky, (x, torch.empty(3)), raise_exception=False)
    return {
        "fill_schema": str(schema),
        "fill_out_is_write": bool(out_arg.alias_info and out_arg.alias_info.is_write),
        "add_schema": str(torch.ops.aten.add_.Tensor._schema),
        "fill_opcheck_pass": all(v == "SUCCESS" for v in checked.values()),
        "sneaky": {k: _outcome(v) for k, v in sneaky_result.items()},
        "sneaky_error": _outcome(sneaky_result.get("test_schema", "")).split(": ", 1)[-1],
    }
