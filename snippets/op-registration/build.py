"""How PyTorch's own build does what this page describes: generated registrations, a wrapper library."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import torch

from snippets._workloads import native
from verify.claim import claim


def torchgen_dir() -> Path:
    """The torchgen package installed with torch (found without importing it)."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        raise RuntimeError("torchgen is not installed beside torch")
    return Path(spec.origin).parent


def dump_sites(op: str) -> tuple[str, dict[str, str]]:
    """(where the schema was registered, key -> where its kernel was registered) from the dispatcher's dump."""
    schema_site, kernels = "", {}
    for line in torch._C._dispatch_dump(op).splitlines():
        key, sep, rest = line.partition(": registered at ")
        if not sep:
            continue
        where = rest.split(" :: ")[0].strip()
        if key == "debug":
            schema_site = where
        elif "[" not in key and "(inactive)" not in key:
            kernels[key] = where
    return schema_site, kernels


def yaml_entry(text: str, func: str) -> tuple[str, list[str]]:
    """(the schema after ``- func:``, the keys of its ``dispatch:`` block) for one entry of native_functions.yaml."""
    m = re.search(rf"^- func: ({re.escape(func)}\(.*)$", text, re.M)
    if not m:
        return "", []
    block = text[m.end() : text.find("\n- func:", m.end())]
    keys: list[str] = []
    in_dispatch = False
    for line in block.splitlines():
        if line.startswith("  dispatch:"):
            in_dispatch = True
        elif in_dispatch and line.startswith("    ") and ":" in line:
            keys += [k.strip() for k in line.split(":")[0].split(",")]
        elif in_dispatch and not line.startswith("    "):
            in_dispatch = False
    return m.group(1).split("  #")[0].strip(), keys


@claim(
    "build.aten-codegen",
    question="op-registration",
    statement="ATen 自己的算子用的也是这套宏，只是注册代码由 torchgen 按 `native_functions.yaml` 生成："
    "`aten::add.Tensor` 的 schema 登记在 {schema_site}，CPU kernel 登记在 {cpu_site}，两个文件都在 PyTorch "
    "构建目录的 `build/aten/src/ATen/` 下；随包安装的模板 `RegisterSchema.cpp` 的同一行是 "
    "{template_line}，`torchgen/gen.py` 为每个键写出的是 `TORCH_LIBRARY_IMPL(命名空间, 键, m)` 块。"
    "包里附带的 `native_functions.yaml` 共 {n_funcs} 条 `- func:`，其中 `add.Tensor` 的 schema 与 dispatcher 里的"
    "一字不差；它的 `dispatch:` 段列出的键里，这个构建有的是 {yaml_keys_here}，每个都登记自对应的 "
    "`Register<键>_*.cpp`。",
    expect={
        "schema_file": "RegisterSchema.cpp",
        "generated_in_build_dir": True,
        "cpu_file_is_generated": True,
        "template_line": {"contains": "TORCH_LIBRARY(aten, m)"},
        "gen_writes_library_impl": True,
        "yaml_schema_matches": True,
        "yaml_keys_from_their_register_file": True,
        "n_yaml_keys_here": {">=": 1},
        "n_funcs": {">=": 2000},
    },
)
def _(ctx):
    schema_site, kernels = dump_sites("aten::add.Tensor")
    file_line = schema_site.rsplit("/", 1)[-1]
    schema_file, _, line = file_line.partition(":")
    tg = torchgen_dir()
    template = (tg / "packaged" / "ATen" / "templates" / schema_file).read_text().splitlines()
    yaml_text = (tg / "packaged" / "ATen" / "native" / "native_functions.yaml").read_text()
    yaml_schema, yaml_keys = yaml_entry(yaml_text, "add.Tensor")
    here = [k for k in yaml_keys if k in kernels]
    register_file = {k: kernels[k].rsplit("/", 1)[-1].split(":")[0] for k in here}
    cpu_site = kernels.get("CPU", "")
    return {
        "schema_site": file_line,
        "schema_file": schema_file,
        "generated_in_build_dir": "/build/aten/src/ATen/" in schema_site and "/build/aten/src/ATen/" in cpu_site,
        "cpu_site": cpu_site.rsplit("/", 1)[-1],
        "cpu_file_is_generated": bool(re.fullmatch(r"RegisterCPU(_\d+)?\.cpp", cpu_site.rsplit("/", 1)[-1].split(":")[0])),
        "template_line": template[int(line) - 1].strip() if line.isdigit() and int(line) <= len(template) else "",
        "gen_writes_library_impl": "TORCH_LIBRARY_IMPL({namespace}, {dispatch_key}, m)" in (tg / "gen.py").read_text(),
        "n_funcs": len(re.findall(r"^- func:", yaml_text, re.M)),
        "yaml_schema": yaml_schema,
        "yaml_schema_matches": "aten::" + yaml_schema == str(torch.ops.aten.add.Tensor._schema),
        "yaml_keys": yaml_keys,
        "yaml_keys_here": "、".join(here),
        "n_yaml_keys_here": len(here),
        "register_files": register_file,
        "yaml_keys_from_their_register_file": bool(here) and all(
            re.fullmatch(rf"Register{k}(_\d+)?\.cpp", f) for k, f in register_file.items()),
    }


def needed(path: Path) -> list[str]:
    out = native.sh("readelf", "-dW", str(path), cwd=path.parent)
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def defined_dynamic(path: Path) -> list[str]:
    out = native.sh("nm", "-D", "--defined-only", str(path), cwd=path.parent)
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


LINKER_SYMBOLS = {"__bss_start", "_edata", "_end", "_init", "_fini"}


@claim(
    "build.libtorch-wrapper",
    question="op-registration",
    statement="PyTorch 自己的构建就用了 `--no-as-needed` 这个修法：`libtorch.so` 只有 {size:bytes}，除了链接器生成的 "
    "{linker_only} 没有定义任何符号，它存在的意义只是 NEEDED 列表：{needed}。照它的样子把一个空的 .cpp 链接成 .so："
    "`-Wl,--as-needed` 下 NEEDED 里没有 libtorch_cpu.so（{as_needed}），`-Wl,--no-as-needed` 下才有（{no_as_needed}）。",
    expect={
        "needs_torch_cpu": True,
        "own_symbols": [],
        "as_needed_has_torch_cpu": False,
        "no_as_needed_has_torch_cpu": True,
    },
    needs=["g++"],
)
def _(ctx):
    lib_dir = Path(torch.__file__).resolve().parent / "lib"
    libtorch = lib_dir / "libtorch.so"
    symbols = defined_dynamic(libtorch)
    wd = ctx.workdir
    (wd / "empty.cpp").write_text("// nothing: the library exists for its NEEDED entries\n")
    results = {}
    for flag in ("--as-needed", "--no-as-needed"):
        out = wd / f"libwrap{flag.replace('-', '_')}.so"
        native.sh("g++", "-shared", "-fPIC", "empty.cpp", "-o", str(out), f"-L{lib_dir}", f"-Wl,{flag}", "-ltorch_cpu",
                  cwd=wd)
        results[flag] = [n for n in needed(out) if n.startswith("libtorch")]
    libs = needed(libtorch)
    return {
        "size": libtorch.stat().st_size,
        "needed": "、".join(libs),
        "needs_torch_cpu": "libtorch_cpu.so" in libs,
        "linker_only": "、".join(s for s in symbols if s in LINKER_SYMBOLS),
        "own_symbols": [s for s in symbols if s not in LINKER_SYMBOLS],
        "as_needed": "、".join(results["--as-needed"]) or "空",
        "no_as_needed": "、".join(results["--no-as-needed"]) or "空",
        "as_needed_has_torch_cpu": "libtorch_cpu.so" in results["--as-needed"],
        "no_as_needed_has_torch_cpu": "libtorch_cpu.so" in results["--no-as-needed"],
    }


@claim(
    "build.libtorch-cuda-wrapper",
    question="op-registration",
    statement="在 CUDA 版 PyTorch 里，`libtorch.so` 的 NEEDED 同时列出 libtorch_cpu.so 和 libtorch_cuda.so（{needed}），"
    "加载它就会加载 libtorch_cuda.so；`aten::add.Tensor` 的 CUDA 列登记自 {cuda_site}，也是生成的注册文件。",
    expect={"needs_torch_cpu": True, "needs_torch_cuda": True, "cuda_file_is_generated": True},
    needs=["cuda", "g++"],
)
def _(ctx):
    """CUDA 版 PyTorch 里 libtorch.so 的 NEEDED 列表，以及 aten::add.Tensor 的 CUDA 列登记自哪个文件。"""
    libs = needed(Path(torch.__file__).resolve().parent / "lib" / "libtorch.so")
    _, kernels = dump_sites("aten::add.Tensor")
    cuda_site = kernels.get("CUDA", "").rsplit("/", 1)[-1]
    return {"needed": "、".join(libs), "needs_torch_cpu": "libtorch_cpu.so" in libs,
            "needs_torch_cuda": "libtorch_cuda.so" in libs, "cuda_site": cuda_site,
            "cuda_file_is_generated": bool(re.fullmatch(r"RegisterCUDA(_\d+)?\.cpp", cuda_site.split(":")[0]))}
