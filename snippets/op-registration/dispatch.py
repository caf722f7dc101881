"""The dispatcher's table (operator -> one kernel per dispatch key) and the keys of tensors."""

from __future__ import annotations

import torch

from verify.claim import claim

# Columns of the table worth showing; the dump has one line per key, "Key: registered at <file> [kind]".
SHOWN_KEYS = ("CPU", "CUDA", "Meta", "AutogradCPU", "AutogradCUDA", "ADInplaceOrView", "AutocastCPU")


def table_kinds(op: str, keys: tuple[str, ...] = SHOWN_KEYS) -> dict[str, str]:
    """Key -> kind of entry ('kernel', 'autograd kernel', 'backend fallback', ...), sources left out."""
    out: dict[str, str] = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        key, _, rest = line.partition(":")
        if key in keys and "[" in rest:
            kind = rest[rest.rfind("[") + 1 : rest.rfind("]")]
            out[key] = ("fallthrough " if "fallthrough" in rest else "") + kind
    return out


def keys_of(t: torch.Tensor) -> list[str]:
    text = str(torch._C._dispatch_keys(t))  # "DispatchKeySet(CPU, ADInplaceOrView, ...)"
    return [k.strip() for k in text[text.index("(") + 1 : text.rindex(")")].split(",") if k.strip()]


@claim(
    "dispatch.aten-table",
    question="op-registration",
    statement="PyTorch 的 dispatcher 为每个算子保存一张“dispatch key → kernel”的表：`aten::add.Tensor` 在 CPU 列是专门的 "
    "CPU kernel，在 AutogradCPU 列是生成的 autograd kernel，在 ADInplaceOrView 和 AutocastCPU 列是直接跳过的 fallthrough；"
    "这个进程里一共注册了 {registered_ops} 个算子，其中 `aten::` 下的有 {aten_ops} 个。",
    expect={
        "add_table": {
            "CPU": "kernel",
            "AutogradCPU": "autograd kernel",
            "ADInplaceOrView": "fallthrough backend fallback",
            "AutocastCPU": "fallthrough backend fallback",
        },
        "registered_ops": {">=": 2000},
        "aten_ops": {">=": 2000},
    },
)
def _(ctx):
    table = table_kinds("aten::add.Tensor")
    names = torch._C._dispatch_get_all_op_names()
    return {
        "add_table": {k: table[k] for k in ("CPU", "AutogradCPU", "ADInplaceOrView", "AutocastCPU")},
        "add_other_columns": {k: v for k, v in table.items() if k in ("CUDA", "Meta", "AutogradCUDA")},
        "registered_ops": len(names),
        "aten_ops": sum(n.startswith("aten::") for n in names),
    }


@claim(
    "dispatch.tensor-keys",
    question="op-registration",
    statement="查表用的 key 来自 tensor 自带的 DispatchKeySet：普通 CPU tensor 带 CPU、ADInplaceOrView、AutogradCPU、"
    "AutocastCPU 这几个键，`requires_grad=True` 的 tensor 一个不多；只有在 `torch.inference_mode()` 里产生的 tensor"
    "（新建的，或由 `requires_grad` 的旧 tensor 算出的）只剩 CPU 和 AutocastCPU，也没有 `grad_fn`。",
    expect={
        "plain": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
        "requires_grad": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
        "inference_mode_new": ["CPU", "AutocastCPU"],
        "inference_mode_old": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
        "inference_out_has_grad_fn": False,
        "inference_out_keys": ["CPU", "AutocastCPU"],
    },
)
def _(ctx):
    plain = torch.ones(3)
    grad = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        new = torch.ones(3)
        out = grad * 2  # an old tensor that requires grad, used inside inference mode
    return {
        "plain": keys_of(plain),
        "requires_grad": keys_of(grad),
        "inference_mode_new": keys_of(new),
        "inference_mode_old": keys_of(grad),
        "inference_out_has_grad_fn": out.grad_fn is not None,
        "inference_out_keys": keys_of(out),
    }


@claim(
    "dispatch.cuda-table",
    question="op-registration",
    statement="在 GPU 上，CUDA tensor 的 keyset 是 CUDA、ADInplaceOrView、AutogradCUDA、AutocastCUDA，"
    "`aten::add.Tensor` 在 CUDA 列是专门的 CUDA kernel：同一个 Python 调用因为 tensor 带的键不同而落到表的另一列。",
    expect={
        "cuda_keys": ["CUDA", "ADInplaceOrView", "AutogradCUDA", "AutocastCUDA"],
        "add_cuda_column": "kernel",
        "add_autograd_cuda_column": "autograd kernel",
    },
    needs=["cuda"],
)
def _(ctx):
    """CUDA tensor 的 dispatch keyset，以及 aten::add.Tensor 在 CUDA、AutogradCUDA 两列登记的 kernel 种类。"""
    t = torch.ones(3, device="cuda")
    table = table_kinds("aten::add.Tensor")
    return {
        "cuda_keys": keys_of(t),
        "add_cuda_column": table.get("CUDA"),
        "add_autograd_cuda_column": table.get("AutogradCUDA"),
        "cpu_build_would_say": "default backend kernel",
    }


# --- How the keyset of one call is computed ------------------------------------------------------
#
# ATen/core/dispatch/DispatchKeyExtractor.h: computeDispatchKeySet(ks, key_mask) returns
# ((ks | tls.included_) - tls.excluded_) & key_mask, where ks is the union of the key sets of all
# tensor arguments and key_mask drops the keys whose table entry is a fallthrough for this op.
# The helpers below compute the same thing from Python and compare it with what actually ran.

DK = torch._C.DispatchKey


def names(ks) -> list[str]:
    text = str(ks)  # "DispatchKeySet(CPU, AutogradCPU)"
    return [k.strip() for k in text[text.index("(") + 1 : text.rindex(")")].split(",") if k.strip()]


def fallthrough_keys(op: str) -> set[str]:
    return {line.split(":")[0] for line in torch._C._dispatch_dump_table(op).splitlines() if "fallthrough" in line}


def predict(op: str, *tensors: torch.Tensor) -> dict:
    """Every step of the formula, as key names; ``first`` is the key the dispatcher should pick."""
    args = torch._C._dispatch_keys(tensors[0])
    for t in tensors[1:]:
        args = args | torch._C._dispatch_keys(t)
    included = torch._C._dispatch_tls_local_include_set()
    excluded = torch._C._dispatch_tls_local_exclude_set()
    before_mask = (args | included) - excluded
    mask = torch._C._dispatch_keyset_full()
    for key in names(before_mask):
        if key in fallthrough_keys(op):
            mask = mask.remove(getattr(DK, key))
    final = before_mask & mask
    return {"args": names(args), "tls_in": names(included), "tls_ex": names(excluded),
            "before_mask": names(before_mask), "final": names(final),
            "first": str(final.highestPriorityTypeId()).rsplit(".", 1)[-1]}


class RecordingOp:
    """``ns::f(Tensor x, Tensor? y=None)`` with kernels that write their key into ``calls``.

    Backend kernels (CPU, SparseCPU, Meta) stop; AutogradCPU / AutogradMeta and AutocastCPU
    re-dispatch below themselves, the way the real autograd and autocast kernels do.
    """

    def __init__(self, ns: str):
        self.ns = ns
        self.op = f"{ns}::f"
        self.calls: list[str] = []
        self.lib = torch.library.Library(ns, "DEF")
        self.lib.define("f(Tensor x, Tensor? y=None) -> Tensor")
        for key in ("CPU", "SparseCPU", "Meta"):
            self.lib.impl("f", self._backend(key), key)
        for key in ("AutogradCPU", "AutogradMeta"):
            self.lib.impl("f", self._autograd(key), key)
        self.lib.impl("f", self._autocast, "AutocastCPU")

    def __call__(self, *tensors):
        return getattr(torch.ops, self.ns).f(*tensors)

    def _backend(self, key):
        def kernel(x, y=None):
            self.calls.append(key)
            return torch.empty(0, device="meta" if key == "Meta" else "cpu")
        return kernel

    def _autograd(self, key):
        def kernel(x, y=None):
            self.calls.append(key)
            with torch._C._AutoDispatchBelowAutograd():  # adds the autograd keys to the excluded set
                return self(x, y)
        return kernel

    def _autocast(self, x, y=None):
        self.calls.append("AutocastCPU")
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(DK.AutocastCPU)):
            return self(x, y)

    def run(self, *tensors) -> tuple[dict, list[str]]:
        """(the prediction made just before the call, the kernels that ran in order)."""
        p = predict(self.op, *tensors)
        self.calls.clear()
        self(*tensors)
        return p, list(self.calls)

    def close(self):
        self.lib._destroy()


def joined(keys: list[str]) -> str:
    return ", ".join(keys)


@claim(
    "dispatch.keyset-formula",
    question="op-registration",
    statement="一次调用查表用的 keyset = （所有 tensor 参数的 keyset 之并 | 线程局部 included）− 线程局部 excluded，"
    "再去掉这个算子表里是 fallthrough 的键。给一个算子在各列注册会记下名字的 kernel，在 Python 里按公式一步步算："
    "CPU tensor 带 {args}；并上默认 included 的 {tls_in}；减去默认 excluded（{tls_ex_count} 个 Autocast 键）后是 "
    "{before_mask}；BackendSelect 和 ADInplaceOrView 在这个算子的表里是 fallthrough，去掉后剩 {final}。"
    "最高优先级的 {predicted} 就是实际最先运行的 kernel，完整顺序是 {chain}。",
    expect={
        "args": "CPU, ADInplaceOrView, AutogradCPU, AutocastCPU",
        "tls_in": "BackendSelect, ADInplaceOrView",
        "tls_ex_only_autocast": True,
        "tls_ex_has_autocast_cpu": True,
        "before_mask": "CPU, BackendSelect, ADInplaceOrView, AutogradCPU",
        "fallthrough_in_op_table": ["ADInplaceOrView", "BackendSelect"],
        "final": "CPU, AutogradCPU",
        "predicted": "AutogradCPU",
        "chain": "AutogradCPU → CPU",
    },
)
def _(ctx):
    op = RecordingOp("opreg_ks1")
    try:
        p, chain = op.run(torch.ones(2))
        dropped = sorted(set(p["before_mask"]) - set(p["final"]))
        return {
            "args": joined(p["args"]),
            "tls_in": joined(p["tls_in"]),
            "tls_ex": joined(p["tls_ex"]),
            "tls_ex_count": len(p["tls_ex"]),
            "tls_ex_only_autocast": all(k.startswith("Autocast") for k in p["tls_ex"]),
            "tls_ex_has_autocast_cpu": "AutocastCPU" in p["tls_ex"],
            "before_mask": joined(p["before_mask"]),
            "fallthrough_in_op_table": dropped,
            "final": joined(p["final"]),
            "predicted": p["first"],
            "chain": " → ".join(chain),
        }
    finally:
        op.close()


@claim(
    "dispatch.keyset-tls",
    question="op-registration",
    statement="同一个公式解释了所有“换列”：和稀疏 tensor 一起传入时，并集里多了 SparseCPU，顺序变成 {cases.sparse_union}；"
    "`torch.autocast(\"cpu\")` 把 AutocastCPU 从 excluded 里拿掉，tensor 本来就带的这个键才生效：{cases.autocast}；"
    "`torch.inference_mode()` 和 `_ExcludeDispatchKeyGuard(AutogradCPU)` 把 Autograd 放进 excluded，"
    "即使 tensor 本身仍带 AutogradCPU，也直接进 {cases.inference_mode_old_tensor}；"
    "`_IncludeDispatchKeyGuard(Meta)` 让一个 CPU tensor 的调用落到 {cases.include_meta}。"
    "这 {n_cases} 种情形里，按公式算出的最高优先级键与实际最先运行的 kernel 相同的有 {n_match} 种。",
    expect={
        "cases": {
            "plain": "AutogradCPU → CPU",
            "sparse_union": "AutogradCPU → SparseCPU",
            "autocast": "AutocastCPU → AutogradCPU → CPU",
            "inference_mode_old_tensor": "CPU",
            "exclude_autograd_cpu": "CPU",
            "include_meta": "AutogradMeta → Meta",
        },
        "old_tensor_still_has_autograd_key": True,
        "n_cases": 6,
        "n_match": 6,
    },
)
def _(ctx):
    op = RecordingOp("opreg_ks2")
    x, sparse = torch.ones(2), torch.ones(2).to_sparse()
    results: dict[str, tuple[dict, list[str]]] = {}
    try:
        results["plain"] = op.run(x)
        results["sparse_union"] = op.run(x, sparse)
        with torch.autocast("cpu"):
            results["autocast"] = op.run(x)
        with torch.inference_mode():
            results["inference_mode_old_tensor"] = op.run(x)
            old_keys = names(torch._C._dispatch_keys(x))
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(DK.AutogradCPU)):
            results["exclude_autograd_cpu"] = op.run(x)
        with torch._C._IncludeDispatchKeyGuard(DK.Meta):
            results["include_meta"] = op.run(x)
    finally:
        op.close()
    return {
        "cases": {k: " → ".join(chain) for k, (_, chain) in results.items()},
        "predicted_first": {k: p["first"] for k, (p, _) in results.items()},
        "final_keysets": {k: joined(p["final"]) for k, (p, _) in results.items()},
        "old_tensor_still_has_autograd_key": "AutogradCPU" in old_keys,
        "n_cases": len(results),
        "n_match": sum(bool(chain) and p["first"] == chain[0] for p, chain in results.values()),
    }


@claim(
    "dispatch.exclude-functionality-bit",
    question="op-registration",
    statement="`inference_mode` 里打印线程局部的 excluded 集合，里面看不到 AutogradCPU，"
    "`_dispatch_tls_is_dispatch_key_excluded(AutogradCPU)` 也说它{is_excluded:?被排除了|没被排除}：它排除的是不带后端位的 Autograd “功能位”。"
    "DispatchKeySet 的减法只减功能位、保留后端位，所以 CPU tensor 的 keyset 减去它仍然去掉了 AutogradCPU，剩下 {remaining}。",
    expect={"printed_has_autograd_cpu": False, "is_excluded": False, "printed_has_autograd_other": True,
            "remaining": "CPU, ADInplaceOrView", "remaining_has_autograd_cpu": False},
)
def _(ctx):
    x = torch.ones(2)
    with torch.inference_mode():
        excluded = torch._C._dispatch_tls_local_exclude_set()
        is_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded(DK.AutogradCPU)
    printed = names(excluded)
    remaining = names(torch._C._dispatch_keys(x) - excluded)
    return {
        "excluded": joined(printed),
        "printed_has_autograd_cpu": "AutogradCPU" in printed,
        "printed_has_autograd_other": "AutogradOther" in printed,
        "is_excluded": is_excluded,
        "remaining": joined(remaining),
        "remaining_has_autograd_cpu": "AutogradCPU" in remaining,
    }
