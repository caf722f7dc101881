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
    t = torch.ones(3, device="cuda")
    table = table_kinds("aten::add.Tensor")
    return {
        "cuda_keys": keys_of(t),
        "add_cuda_column": table.get("CUDA"),
        "add_autograd_cuda_column": table.get("AutogradCUDA"),
        "cpu_build_would_say": "default backend kernel",
    }
