"""TorchScript: the IR it compiles Python into, the archive it saves, and its status today."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
import zipfile

import torch

from verify.claim import claim

Q = "python-overhead"


def gate(x: torch.Tensor, t: float) -> torch.Tensor:
    if bool(x.sum() > t):
        return x * 2
    return x + 1


@claim(
    "torchscript.ir-save-load",
    question=Q,
    statement="`torch.jit.script` 把函数（连同 `if` 分支）编译成 TorchScript IR，里面是 `prim::If`、`aten::mul` 这样的节点；"
              "它能存成一个 zip 归档（里面是代码和常量），再用 `torch.jit.load` 载回执行，结果与 Python 版一致。",
    expect={"has_prim_if": True, "graph": {"contains": "aten::mul"}, "same_after_load": True,
            "archive_has_code": True},
)
def _(ctx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(gate)
    graph = re.sub(r"\s*#.*", "", str(scripted.graph))  # drop the source locations
    kinds = sorted({n.kind() for n in scripted.graph.nodes()})  # top level; the branches are blocks
    path = ctx.path("gate.pt")
    torch.jit.save(scripted, str(path))
    loaded = torch.jit.load(str(path))
    x = torch.ones(4)
    names = zipfile.ZipFile(path).namelist()
    return {
        "has_prim_if": "prim::If" in graph,
        "ir_ops": kinds,
        "graph": graph,
        "same_after_load": bool(torch.equal(loaded(x, 0.0), gate(x, 0.0)) and torch.equal(loaded(x, 9.0), gate(x, 9.0))),
        "archive_files": names,
        "archive_has_code": any("/code/" in n for n in names),
        "saved_code": loaded.code.strip(),
        "archive_bytes": path.stat().st_size,
    }


_PROBE = """
import torch
def f(x):
    return x * 2
torch.jit.script(f)
print("scripted")
"""


@claim(
    "torchscript.deprecated-quietly",
    question=Q,
    statement="本站运行的 torch（{torch}）里 `torch.jit.script` 仍然能用，但调用时会发出 `DeprecationWarning`，建议改用"
              " `torch.compile` 或 `torch.export`；这个警告由 torch 内部模块发出，Python 的默认过滤规则会把它吞掉：普通脚本"
              "的用户看不到，打开 `-W default` 才会显示。",
    expect={"category": "DeprecationWarning", "message": {"contains": "deprecated"}, "shown_by_default": False,
            "shown_with_W_default": True, "still_works": True},
)
def _(ctx):
    # What "-W default" does: show each warning once per location, DeprecationWarning included.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        scripted = torch.jit.script(lambda_free_double)
    hits = [w for w in caught if "jit" in str(w.message)]
    # A plain script in a fresh interpreter, with Python's default warning filters.
    script = ctx.path("probe_script.py")  # TorchScript needs the function's source file
    script.write_text(_PROBE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    quiet = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                           timeout=60, check=True)
    return {
        "torch": torch.__version__,
        "category": type(hits[0].message).__name__ if hits else None,
        "message": str(hits[0].message) if hits else "",
        "warned_from": hits[0].filename.replace("\\", "/").split("site-packages/")[-1] if hits else None,
        "shown_by_default": "deprecated" in quiet.stderr,
        "script_stdout": quiet.stdout.strip(),
        "shown_with_W_default": bool(hits),
        "still_works": bool(torch.equal(scripted(torch.ones(2)), torch.full((2,), 2.0))),
    }


def lambda_free_double(x: torch.Tensor) -> torch.Tensor:
    return x * 2
