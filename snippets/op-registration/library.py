"""An operator registered from C++ (TORCH_LIBRARY / TORCH_LIBRARY_IMPL) and from Python (torch.library)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

from verify.claim import claim

SOURCE = "demo_ops.cpp"
LIB_NAME = "opreg_demo_ext"
SHOWN = ("CPU", "CUDA", "Meta", "AutogradCPU", "AutogradCUDA", "CompositeImplicitAutograd")


def _source() -> Path:
    return Path(__file__).resolve().parent / SOURCE


@functools.cache
def build() -> dict:
    """Compile demo_ops.cpp once per source and torch version; later runs reuse the build directory."""
    from torch.utils import cpp_extension  # noqa: PLC0415

    src = _source()
    digest = hashlib.sha256(src.read_bytes() + torch.__version__.encode()).hexdigest()[:12]
    root = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or tempfile.gettempdir())
    build_dir = root / f"opreg_demo-{digest}"
    build_dir.mkdir(parents=True, exist_ok=True)
    so = build_dir / f"{LIB_NAME}.so"
    cold = not so.exists()
    start = time.perf_counter()
    # is_python_module=False: no pybind11 module; the .so is loaded with torch.ops.load_library,
    # and loading it is all the registration needs.
    cpp_extension.load(name=LIB_NAME, sources=[str(src)], build_directory=str(build_dir),
                       is_python_module=False, extra_cflags=["-O1"])
    return {"so": so, "obj": build_dir / "demo_ops.o", "build_s": round(time.perf_counter() - start, 2), "cold": cold,
            "build_dir": build_dir}


def table_kinds(op: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        key, _, rest = line.partition(":")
        if key in SHOWN and "[" in rest:
            out[key] = rest[rest.rfind("[") + 1 : rest.rfind("]")]
    return out


def registered_keys(op: str) -> list[str]:
    """Keys that have a registration of their own (not a fallback), from the dispatcher's dump."""
    keys = []
    for line in torch._C._dispatch_dump(op).splitlines():
        key, sep, rest = line.partition(": registered at")
        if sep and "::" not in key and key.strip() != "debug":
            keys.append(key.strip())
    return keys


@claim(
    "library.cpp-op-table",
    question="op-registration",
    statement="在 `TORCH_LIBRARY(opreg_demo, m)` 里用 `m.def` 定义 schema，再用 `TORCH_LIBRARY_IMPL(opreg_demo, CPU, m)` 和 "
    "`TORCH_LIBRARY_IMPL(opreg_demo, CUDA, m)` 各注册一个 kernel，编译加载后 `opreg_demo::twice` 的表里 CPU 列和 CUDA 列"
    "就是我们的 kernel，Meta 和 Autograd 列只有通用的 backend fallback；对 CPU tensor 的调用只进了 CPU kernel。",
    expect={
        "registered": ["CPU", "CUDA"],
        "table": {"CPU": "kernel", "CUDA": "kernel", "Meta": "backend fallback", "AutogradCPU": "backend fallback",
                  "AutogradCUDA": "backend fallback"},
        "result": [0.0, 2.0, 4.0, 6.0],
        "calls_delta": [1, 0],
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    info = build()
    before = list(torch.ops.opreg_demo.kernel_calls())
    result = torch.ops.opreg_demo.twice(torch.arange(4.0))
    after = list(torch.ops.opreg_demo.kernel_calls())
    return {
        "registered": registered_keys("opreg_demo::twice"),
        "table": table_kinds("opreg_demo::twice"),
        "result": result.tolist(),
        "calls_delta": [a - b for a, b in zip(after, before)],  # [cpu kernel, cuda kernel]
        "build_s": info["build_s"],
        "cold_build": info["cold"],
        "includes": "torch/library.h",
    }


@claim(
    "library.macro-is-static-object",
    question="op-registration",
    statement="用预处理器展开 `demo_ops.cpp` 就能看到答案：`TORCH_LIBRARY` 和两个 `TORCH_LIBRARY_IMPL` 这 {static_objects} 个宏"
    "各展开成一个 `static const torch::detail::TorchLibraryInit` 对象，注册写在它的构造函数里；编译器把这些构造集中到"
    "同一个初始化函数 `_GLOBAL__sub_I_demo_ops.cpp`，目标文件里随之多了一个 `.init_array` 段。",
    expect={
        "static_objects": 3,
        "def_object": {"contains": "TORCH_LIBRARY_static_init_opreg_demo"},
        "init_function": "_GLOBAL__sub_I_demo_ops.cpp",
        "has_init_array": True,
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    from torch.utils import cpp_extension  # noqa: PLC0415

    info = build()
    flags = [f"-I{p}" for p in cpp_extension.include_paths()]
    pre = subprocess.run(["g++", "-std=c++17", "-E", "-P", *flags, str(_source())], capture_output=True, text=True,
                         check=True).stdout
    # Our code is at the end of the preprocessed text; the static objects are one per macro.
    objects = re.findall(r"static const torch::detail::TorchLibraryInit (\w+)\(", pre)
    expansion = pre[pre.index("static void TORCH_LIBRARY_init_opreg_demo") :]
    expansion = expansion[: expansion.index("{")].replace(str(_source()), SOURCE)
    nm = subprocess.run(["nm", str(info["obj"])], capture_output=True, text=True, check=True).stdout
    init_fns = [line.split()[-1] for line in nm.splitlines() if "_GLOBAL__sub_I_" in line]
    sections = subprocess.run(["objdump", "-h", str(info["obj"])], capture_output=True, text=True, check=True).stdout
    return {
        "static_objects": len(objects),
        "object_names": objects,
        "def_object": objects[0] if objects else "",
        "expansion": " ".join(expansion.split()),
        "init_function": init_fns[0] if init_fns else "",
        "has_init_array": ".init_array" in sections,
    }


LOAD_SCRIPT = r"""
import ctypes, sys, torch
def present():
    try:
        torch._C._dispatch_find_schema_or_throw("opreg_demo::twice", "")
        return True
    except RuntimeError:
        return False
before = present()
ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)   # a plain dlopen, not torch's loader
after = present()
y = torch.ops.opreg_demo.twice(torch.ones(2)).tolist() if after else None
print(before, after, y)
"""


@claim(
    "library.registered-on-load",
    question="op-registration",
    statement="所以注册不需要任何人调用：在一个新进程里，加载 .so 之前 dispatcher 里没有 `opreg_demo::twice`；"
    "只用 `ctypes` 做一次普通的 dlopen（不调用任何注册函数），它就出现了，并且能调用。",
    expect={"before_load": False, "after_load": True, "result": [2.0, 2.0]},
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    so = build()["so"]
    out = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, str(so)], capture_output=True, text=True, check=True,
                         timeout=120).stdout.split(maxsplit=2)
    return {"before_load": out[0] == "True", "after_load": out[1] == "True",
            "result": eval(out[2]) if out[2].strip() != "None" else None}  # noqa: S307  (our own print)


@claim(
    "library.no-meta-kernel",
    question="op-registration",
    statement="对 Meta tensor 调用一个没有 Meta kernel、也没有 fake 实现的算子，抛出 `NotImplementedError`；"
    "`torch.compile` / `torch.export` 追踪形状时走的就是这一列，所以自定义算子要补 fake 实现。",
    raises=("NotImplementedError", "Meta"),
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    build()
    ctx.observe(meta_column=table_kinds("opreg_demo::twice").get("Meta"))
    try:
        torch.ops.opreg_demo.twice(torch.empty(3, device="meta"))
    except NotImplementedError as exc:
        ctx.observe(message=str(exc).split(". ")[0])
        raise


@claim(
    "library.no-autograd-kernel",
    question="op-registration",
    statement="没有注册 Autograd kernel 的 C++ 算子调用时不报错：前向没有任何警告，反向时只给 {backward_warnings} 条"
    "“an autograd kernel was not registered to the Autograd key(s)” 的警告，梯度却是 {grad_value:g}，正确值是 "
    "{correct_value:g}，因为 kernel 内部先 `clone` 再直接改写数据，autograd 只看见了那次 `clone`。",
    expect={
        "forward_warnings": 0,
        "backward_warnings": {">=": 1},
        "warning": {"contains": "an autograd kernel was not registered to the Autograd key(s)"},
        "grad": [1.0, 1.0, 1.0],
        "correct_grad": [2.0, 2.0, 2.0],
        "grad_value": 1.0,
        "correct_value": 2.0,
        "grad_fn": "CloneBackward0",
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    build()
    x = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch.ops.opreg_demo.twice(x)
        forward = len(caught)
        y.sum().backward()
        backward = len(caught) - forward
    msgs = [str(w.message) for w in caught]
    ref = torch.ones(3, requires_grad=True)  # the same function, 2 * x, through ops autograd knows
    (ref * 2).sum().backward()
    return {
        "forward_warnings": forward,
        "backward_warnings": backward,
        "warning": msgs[-1].split(". ")[0] if msgs else "",
        "grad_fn": type(y.grad_fn).__name__,
        "grad": x.grad.tolist(),
        "correct_grad": ref.grad.tolist(),
        "grad_value": x.grad[0].item(),
        "correct_value": ref.grad[0].item(),
        "autograd_fallback_mode": torch._C._get_autograd_fallback_mode(),
    }


@claim(
    "library.cuda-kernel",
    question="op-registration",
    statement="在 GPU 上，对 CUDA tensor 调用同一个算子，dispatcher 按 CUDA 键选中 `TORCH_LIBRARY_IMPL(…, CUDA, …)` "
    "注册的 kernel，CPU kernel 不被调用。",
    expect={"calls_delta": [0, 1], "result": [0.0, 2.0, 4.0, 6.0], "device": "cuda:0"},
    needs=["cuda", "g++"],
    timeout=240,
)
def _(ctx):
    """对 CUDA tensor 调用 opreg_demo::twice 时 CPU 与 CUDA 两个 kernel 各被调用几次，以及结果。"""
    build()
    before = list(torch.ops.opreg_demo.kernel_calls())
    y = torch.ops.opreg_demo.twice(torch.arange(4.0, device="cuda"))
    after = list(torch.ops.opreg_demo.kernel_calls())
    return {"calls_delta": [a - b for a, b in zip(after, before)], "result": y.cpu().tolist(),
            "device": str(y.device)}


# --- .init_array: where the platform keeps the constructors of static objects --------------------


def elf_section(path: Path, name: str) -> tuple[int, int, int] | None:
    """(address, file offset, size) of a section, from ``readelf -S``; None when absent."""
    out = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if name in fields:
            i = fields.index(name)
            addr, off, size = (int(v, 16) for v in fields[i + 2 : i + 5])
            return addr, off, size
    return None


def symbol_addresses(path: Path) -> dict[int, list[str]]:
    """Address -> names of the defined symbols (``nm``: the full symbol table, local ones included)."""
    out = subprocess.run(["nm", str(path)], capture_output=True, text=True, check=True).stdout
    table: dict[int, list[str]] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] not in "Uw":
            table.setdefault(int(parts[0], 16), []).append(parts[2])
    return table


def init_array_entries(path: Path) -> list[int]:
    """The function addresses in ``.init_array`` (ELF64, little endian).

    The linker writes them into the section; where it leaves zeros (some targets keep the
    value only in the R_*_RELATIVE relocation), the relocation addends are read instead.
    """
    sec = elf_section(path, ".init_array")
    if sec is None:
        return []
    addr, off, size = sec
    with open(path, "rb") as f:
        f.seek(off)
        raw = f.read(size)
    entries = [int.from_bytes(raw[i : i + 8], "little") for i in range(0, size, 8)]
    if all(entries):
        return entries
    relocs = subprocess.run(["readelf", "-rW", str(path)], capture_output=True, text=True, check=True).stdout
    by_offset = {}
    for line in relocs.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2].endswith("_RELATIVE"):
            by_offset[int(parts[0], 16)] = int(parts[-1], 16)
    return [by_offset.get(addr + i * 8, e) for i, e in enumerate(entries)]


def dynamic_tags(path: Path) -> dict[str, str]:
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    tags = {}
    for line in out.splitlines():
        m = re.match(r"\s*0x[0-9a-f]+\s+\((\w+)\)\s+(.*)", line)
        if m:
            tags.setdefault(m.group(1), m.group(2).strip())
    return tags


@claim(
    "library.init-array",
    question="op-registration",
    statement="“在 main 之前 / 加载时运行”靠的是平台：编译器把这个翻译单元里所有静态对象的构造集中进 "
    "`_GLOBAL__sub_I_demo_ops.cpp`，链接器把它的地址放进共享库的 `.init_array` 段（`readelf -S` 可见，"
    "{init_array_bytes:bytes}，{entries} 个函数指针：{entry_names}），并在动态段里写下 INIT_ARRAY 和 INIT_ARRAYSZ "
    "两个标记；动态加载器按这两个标记找到这张表，在 dlopen 返回前逐个调用。",
    expect={
        "has_init_array_section": True,
        "registration_init_in_init_array": True,
        "dynamic_has_init_array": True,
        "init_array_size_matches_tag": True,
        "elf_class": "ELF64",
    },
    needs=["g++"],
    timeout=240,
)
def _(ctx):
    so = build()["so"]
    sec = elf_section(so, ".init_array")
    entries = init_array_entries(so)
    symbols = symbol_addresses(so)
    entry_names = [next((n for n in symbols.get(a, []) if not n.startswith("__")), hex(a)) for a in entries]
    tags = dynamic_tags(so)
    header = subprocess.run(["readelf", "-hW", str(so)], capture_output=True, text=True, check=True).stdout
    return {
        "has_init_array_section": sec is not None,
        "init_array_bytes": sec[2] if sec else 0,
        "entries": len(entries),
        "entry_names": "、".join(entry_names),
        "registration_init_in_init_array": "_GLOBAL__sub_I_demo_ops.cpp" in entry_names,
        "dynamic_has_init_array": "INIT_ARRAY" in tags and "INIT_ARRAYSZ" in tags,
        "init_array_size_matches_tag": bool(sec) and tags.get("INIT_ARRAYSZ", "").startswith(f"{sec[2]} "),
        "elf_class": "ELF64" if "ELF64" in header else "other",
    }


def _torch_lib(name: str) -> Path:
    return Path(torch.__file__).resolve().parent / "lib" / name


def _generated_register_file(name: str) -> bool:
    """``Register<X>[_N].cpp`` written by torchgen: X is a dispatch key (template RegisterDispatchKey.cpp)
    or has a template of its own among the installed torchgen templates (RegisterSchema.cpp, ...)."""
    m = re.fullmatch(r"Register(\w+?)(_\d+)?\.cpp", name)
    if not m:
        return False
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.find_spec("torchgen")
    templates = Path(spec.origin).parent / "packaged" / "ATen" / "templates" if spec and spec.origin else None
    key = m.group(1)
    return torch._C._parse_dispatch_key(key) is not None or hasattr(torch._C.DispatchKey, key) or bool(templates and (templates / f"Register{key}.cpp").is_file())


@claim(
    "library.aten-initializers",
    question="op-registration",
    statement="PyTorch 自己的算子也是这样注册的：`libtorch_cpu.so` 的 `.init_array` 里有 {entries} 个函数指针，"
    "其中 {from_register_files} 个指向生成的 `Register*.cpp` 文件的初始化函数（例如 {examples}），"
    "还有 {from_variable_type} 个来自生成的 autograd 注册 `VariableType_*.cpp`：import torch 时加载这个库，"
    "这些函数就把 ATen 的 schema 和 kernel 写进 dispatcher。",
    expect={
        "has_register_schema": True,
        "has_register_cpu": True,
        "from_register_files": {">=": 2},
        "from_variable_type": {">=": 1},
    },
    needs=["g++"],
    timeout=120,
)
def _(ctx):
    lib = _torch_lib("libtorch_cpu.so")
    entries = init_array_entries(lib)
    symbols = symbol_addresses(lib)
    names = sorted({n for a in entries for n in symbols.get(a, []) if n.startswith("_GLOBAL__sub_I_")})
    files = [n.removeprefix("_GLOBAL__sub_I_") for n in names]
    register = [f for f in files if _generated_register_file(f)]
    variable_type = [f for f in files if re.fullmatch(r"VariableType(_\d+)?\.cpp", f)]
    return {
        "entries": len(entries),
        "named_initializers": len(names),
        "from_register_files": len(register),
        "from_variable_type": len(variable_type),
        "register_files": register,
        "other_register_named": [f for f in files if f.startswith("Register") and f not in register],
        "examples": "、".join(f for f in ("RegisterSchema.cpp", "RegisterCPU_0.cpp", "RegisterCPU.cpp") if f in register),
        "has_register_schema": "RegisterSchema.cpp" in register,
        "has_register_cpu": any(re.fullmatch(r"RegisterCPU(_\d+)?\.cpp", f) for f in register),
    }


@claim(
    "library.lazy-init",
    question="op-registration",
    statement="`torch/library.h` 还有一种延迟注册：只有同时定义了 `TORCH_LIBRARY_THREAD_UNSAFE_LAZY_INIT` 和 "
    "`C10_MOBILE`（移动端构建）时，`TorchLibraryInit` 的构造函数才只把自己放进 `torch_library_initializers` 列表，"
    "等 `torch::initialize_torch_libraries()` 被调用时再真正注册；头文件注明它不是线程安全的。"
    "其他情况下构造函数直接调用注册函数。这个桌面版 `libtorch_cpu.so` 的动态符号表里，名字含 "
    "`initialize_torch_libraries` 的符号有 {lazy_symbol_count} 个：它用的是加载时注册。",
    expect={
        "lazy_guard": "defined(TORCH_LIBRARY_THREAD_UNSAFE_LAZY_INIT) && defined(C10_MOBILE)",
        "lazy_ctor_only_queues": True,
        "eager_ctor_calls_fn": True,
        "header_says_not_thread_safe": True,
        "lazy_symbol_count": 0,
    },
    needs=["g++"],
)
def _(ctx):
    from torch.utils import cpp_extension  # noqa: PLC0415

    header = next(Path(p) / "torch" / "library.h" for p in cpp_extension.include_paths()
                  if (Path(p) / "torch" / "library.h").is_file()).read_text()
    guard = re.search(r"#if (defined\(TORCH_LIBRARY_THREAD_UNSAFE_LAZY_INIT\) && defined\(C10_MOBILE\))", header)
    start = header.index("namespace detail {", header.index("initialize_torch_libraries"))
    lazy, _, eager = header[start : header.index("} // namespace detail", start)].partition("#else")
    ctor = lambda text: text[text.index("TorchLibraryInit(") : text.index("}", text.index("TorchLibraryInit("))]  # noqa: E731
    symbols = subprocess.run(["nm", "-D", str(_torch_lib("libtorch_cpu.so"))], capture_output=True, text=True,
                             check=True).stdout
    return {
        "lazy_guard": guard.group(1) if guard else "",
        "lazy_ctor": " ".join(ctor(lazy).split())[-80:],
        "lazy_ctor_only_queues": "torch_library_initializers.push_back(this)" in ctor(lazy)
        and "fn(" not in ctor(lazy),
        "eager_ctor_calls_fn": "fn(lib_)" in eager,
        "header_says_not_thread_safe": "This is not thread safe" in lazy,
        "lazy_symbol_count": sum("initialize_torch_libraries" in line for line in symbols.splitlines()),
    }
