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
    statement="每个算子在 dispatcher 里有一张“dispatch key → kernel”的表：aten::add.Tensor 的 CPU 列是专门的 CPU kernel，"
    "AutogradCPU 列是生成的 autograd kernel，ADInplaceOrView 与 AutocastCPU 列是直接跳过的 fallthrough；"
    "整个进程里已注册的算子有数千个。",
    expect={
        "add_table": {
            "CPU": "kernel",
            "AutogradCPU": "autograd kernel",
            "ADInplaceOrView": "fallthrough backend fallback",
            "AutocastCPU": "fallthrough backend fallback",
        },
        "registered_ops": {">=": 2000},
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
    "AutocastCPU；requires_grad=True 不改变这个集合（是否求导由 Autograd kernel 运行时判断）；"
    "inference_mode 里新建的 tensor 则不带 autograd 相关的键，调用时直接落到 CPU kernel。",
    expect={
        "plain": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
        "requires_grad": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
        "inference_mode_new": ["CPU", "AutocastCPU"],
        "inference_mode_old": ["CPU", "ADInplaceOrView", "AutogradCPU", "AutocastCPU"],
        "inference_out_has_grad_fn": False,
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
    statement="在 CUDA 版 PyTorch 上，CUDA tensor 的 keyset 是 CUDA、ADInplaceOrView、AutogradCUDA、AutocastCUDA，"
    "aten::add.Tensor 的 CUDA 列是专门的 CUDA kernel；同一个 Python 调用按 tensor 的 key 选中不同的列。",
    expect={
        "cuda_keys": ["CUDA", "ADInplaceOrView", "AutogradCUDA", "AutocastCUDA"],
        "add_cuda_column": "kernel",
        "add_autograd_cuda_column": "autograd kernel",
    },
    needs=["cuda"],
)
def _(ctx):
    t = torch.ones(3, device="cuda")
    table = table_kinds("aten::add.Tensor")
    return {
        "cuda_keys": keys_of(t),
        "add_cuda_column": table.get("CUDA"),
        "add_autograd_cuda_column": table.get("AutogradCUDA"),
        "cpu_build_would_say": "default backend kernel",
    }
