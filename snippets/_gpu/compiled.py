"""Compile a kernel for a named GPU architecture with no GPU, and read what the compiler made of it.

- :func:`triton_kernel`: a Triton kernel (a plain Python function in Triton's language) compiled
  by ``triton.compile`` for a :class:`GPUTarget` (no driver is asked). A launch specialises what
  it is given: pointers to 16-byte-aligned tensors and integers divisible by 16 get
  ``tt.divisibility=16``, which decides vector loads and ``cp.async`` pipelining. By default none
  is assumed (the compile of an unknown launch); ``divisible=`` names the arguments a launch with
  aligned tensors and round sizes would mark, ``divisible="pointers"`` every pointer.
- :func:`cuda_source`: CUDA C++ compiled by the pinned nvcc (``-cubin`` with ``-Xptxas -v``, keeping its PTX).

Both return a :class:`Compiled`: the PTX, the SASS (``cuobjdump -sass`` of the cubin), instruction
counts, and the resource use that decides occupancy (registers per thread, shared memory, local
memory and spills). Nothing here runs the kernel: no time, no race, no result.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snippets._gpu.note import note
from verify import toolchain

#: a target's name -> (compute capability for Triton's GPUTarget, nvcc's -arch)
TARGETS = {"sm_80": (80, "sm_80"), "sm_90a": (90, "sm_90a")}

_SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
_PTX_LINE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_.:]*)[\s;]", re.MULTILINE)
_RES = re.compile(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")
_PTXAS = {
    "registers": re.compile(r"Used (\d+) registers"),
    "smem": re.compile(r"(\d+) bytes smem"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
}


def _mnemonic_count(ops: collections.Counter[str], name: str) -> int:
    """Instructions whose opcode is ``name`` or ``name.<modifiers>`` (``SHFL`` counts ``SHFL.DOWN``)."""
    return sum(n for op, n in ops.items() if op == name or op.startswith(name + "."))


@dataclass
class Compiled:
    target: str
    ptx: str
    cubin: Path  # disassembled on first use of ``sass``: a large kernel's SASS takes a third of a second
    registers: int  # per thread, from the cubin's resource usage
    shared: int  # bytes of shared memory a block asks for (ptxas' static smem, or Triton's dynamic), without what the system reserves
    #: the cubin's LOCAL bytes per thread; spills and stack arrays show in ``stack`` (and, from
    #: nvcc, ``info["spill_stores"]`` / ``info["spill_loads"]``), so read those for spills
    local: int
    info: dict[str, Any] = field(default_factory=dict)  # ptxas -v's lines (nvcc) or Triton's metadata
    stack: int = 0  # bytes of stack frame per thread (where spills and local arrays go)

    @functools.cached_property
    def sass(self) -> str:
        """``cuobjdump -sass`` of the cubin."""
        return _cuobjdump(self.cubin, "-sass")

    @property
    def sass_ops(self) -> collections.Counter[str]:
        return collections.Counter(m.group(1) for m in map(_SASS_LINE.search, self.sass.splitlines()) if m)

    @property
    def ptx_ops(self) -> collections.Counter[str]:
        body = self.ptx.split("{", 1)[-1]  # past the module's directives
        return collections.Counter(m.group(1) for m in _PTX_LINE.finditer(body) if not m.group(1).startswith("$"))

    def sass_count(self, name: str) -> int:
        return _mnemonic_count(self.sass_ops, name)

    def ptx_count(self, name: str) -> int:
        return _mnemonic_count(self.ptx_ops, name)

    def sass_lines(self, name: str) -> list[str]:
        """The SASS instructions of one mnemonic, without addresses and encodings (to show on a page)."""
        out = []
        for line in self.sass.splitlines():
            m = _SASS_LINE.search(line)
            if m and (m.group(1) == name or m.group(1).startswith(name + ".")):
                out.append(line[m.start(1):].split(";")[0].strip())
        return out

    @property
    def ptx_target(self) -> str:
        m = re.search(r"^\.target\s+(\S+)", self.ptx, re.MULTILINE)
        return m.group(1) if m else ""


def _cuobjdump(cubin: Path, flag: str) -> str:
    out = subprocess.run([str(toolchain.binary("cuobjdump")), flag, str(cubin)], capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"cuobjdump {flag} {cubin.name}: {out.stderr.strip()[:500]}")
    return out.stdout


def _resources(cubin: Path) -> dict[str, int]:
    text = _cuobjdump(cubin, "-res-usage")
    functions = re.findall(r"^\s*Function (\S+):", text, re.MULTILINE)
    if len(functions) != 1:
        raise RuntimeError(f"{cubin.name} holds {len(functions)} kernels ({', '.join(functions)}): compile one per "
                           "call (select it with -D flags), so that its resources are its own")
    m = _RES.search(text)
    if not m:
        raise RuntimeError(f"cuobjdump -res-usage {cubin.name}: no REG/SHARED line")
    return dict(zip(("registers", "stack", "shared", "local"), map(int, m.groups())))


def triton_kernel(ctx: Any, fn: Any, signature: dict[str, str], constexprs: dict[str, Any] | None = None, *,
                  target: str = "sm_90a", num_warps: int = 4, num_stages: int = 3,
                  divisible: str | tuple[str, ...] = ()) -> Compiled:
    """``fn`` (a plain function in Triton's language) compiled for ``target`` by the pinned Triton.

    ``divisible``: the arguments a launch would mark ``tt.divisibility=16`` (``"pointers"``: every pointer).
    """
    toolchain.activate()
    import triton  # noqa: PLC0415
    from triton.backends.compiler import GPUTarget  # noqa: PLC0415
    from triton.compiler import ASTSource  # noqa: PLC0415

    cc, _ = TARGETS[target]
    jit = fn if hasattr(fn, "arg_names") else triton.jit(fn)
    constexprs = constexprs or {}
    sig = {**signature, **{k: "constexpr" for k in constexprs}}
    marked = [k for k, t in signature.items() if t.startswith("*")] if divisible == "pointers" else list(divisible)
    unknown = [k for k in marked if k not in signature]
    if unknown:
        raise KeyError(f"divisible names {unknown}, which are not in the signature of {jit.__name__}")
    attrs = {(jit.arg_names.index(k),): [["tt.divisibility", 16]] for k in marked}
    kernel = triton.compile(ASTSource(jit, sig, constexprs, attrs), target=GPUTarget("cuda", cc, 32),
                            options={"num_warps": num_warps, "num_stages": num_stages})
    variant = hashlib.sha256(repr((sorted(constexprs.items()), marked)).encode()).hexdigest()[:8]
    cubin = ctx.path(f"{jit.__name__}-{target}-w{num_warps}-s{num_stages}-{variant}.cubin")
    cubin.write_bytes(kernel.asm["cubin"])
    res = _resources(cubin)
    note(ctx, "compiled", targets=(target,), tools={"triton": triton.__version__})
    # Triton's shared memory is dynamic (asked for at launch): the metadata says how much. The cubin's
    # SHARED also counts what the system reserves per block on some targets; it is kept beside.
    return Compiled(target, kernel.asm["ptx"], cubin, res["registers"],
                    int(kernel.metadata.shared), res["local"],
                    {"num_warps": num_warps, "num_stages": num_stages, "cubin_shared": res["shared"], "divisible": marked},
                    stack=res["stack"])


def cuda_source(ctx: Any, source: str, *, target: str = "sm_90a", name: str = "kernel", flags: tuple[str, ...] = ()) -> Compiled:
    """CUDA C++ ``source`` compiled for ``target`` by the pinned nvcc (device code only; nothing is linked)."""
    _, arch = TARGETS[target]
    nvcc = toolchain.binary("nvcc")
    cu = ctx.path(f"{name}.cu")
    cu.write_text(source)
    cubin, kept = cu.with_suffix(f".{target}.cubin"), cu.with_suffix(f".{target}.keep")
    kept.mkdir(exist_ok=True)
    # one compile: --keep leaves the PTX that ptxas assembled into the cubin (the same text `nvcc -ptx` writes)
    out = subprocess.run([str(nvcc), f"-arch={arch}", "-O3", *flags, "-cubin", "-Xptxas", "-v", "--keep",
                          "--keep-dir", str(kept), "-o", str(cubin), str(cu)], capture_output=True, text=True,
                         timeout=300, cwd=ctx.workdir)
    if out.returncode != 0:
        raise RuntimeError(f"nvcc {cu.name} for {target}:\n{out.stderr.strip()[:2000]}")
    verbose = out.stderr
    info: dict[str, Any] = {key: int(m.group(1)) for key, rx in _PTXAS.items() if (m := rx.search(verbose))}
    res = _resources(cubin)
    info["cubin_shared"] = res["shared"]
    note(ctx, "compiled", targets=(target,), tools={"nvcc": _nvcc_version(str(nvcc))})
    return Compiled(target, (kept / f"{name}.ptx").read_text(), cubin, res["registers"],
                    info.get("smem", res["shared"]), res["local"], info, stack=res["stack"])


@functools.cache
def _nvcc_version(nvcc: str) -> str:
    version = re.search(r"V(\d+\.\d+\.\d+)", subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                                                               timeout=60).stdout)
    return version.group(1) if version else toolchain.PINS["nvidia-cuda-nvcc"]
