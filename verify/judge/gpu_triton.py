"""The compiled GPU section of a triton problem: the candidate's kernels and the reference solution's, compiled
for sm_80 and sm_90a by the pinned Triton, with no GPU.

The candidate's file runs only in the judge's child (:mod:`verify.judge.sandbox`), in its compile mode
(:func:`verify.judge.child._triton_report`): it is called on one case (the largest, so that the kernel is
specialised as for real work) with each launch recorded instead of run, and each kernel is compiled for each
target as that launch would specialise it. What comes back is numbers, read here as untrusted data.

The reference solution (the problem's first file under ``solutions/``) is compiled the same way, once: its
numbers are cached under the project's cache folder, keyed by the file's hash, the case, the toolchain pins and
this module's and the child's code.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from verify import toolchain
from verify.judge import child, sandbox
from verify.judge.gpu import Row, Section
from verify.judge.problem import Problem

#: a target's name -> the compute capability Triton's GPUTarget takes (90: sm_90a)
TARGETS = {"sm_80": 80, "sm_90a": 90}
NOTE = ("按评测用例「{case}」的启动参数编译（指针对齐、整数能否被 16 整除、constexpr、num_warps 与 GPU 上一样特化）；"
        "寄存器、溢出读自 cuobjdump，共享内存是 Triton 启动时申请的动态共享内存。")


def sections(problem: Problem, candidate: Path, prepared: Any) -> list[Section]:
    if not problem.solutions():
        return []
    i = _largest_case(prepared.args)
    mine = compiled(problem, candidate, prepared.args[i])
    theirs = _reference(problem, prepared.args[i])
    version = str(mine.get("triton") or theirs.get("triton") or toolchain.PINS["triton"])
    return [_section(target, version, mine, theirs, prepared.names[i] if k == 0 else "") for k, target in enumerate(TARGETS)]


def _largest_case(args: list[tuple[Any, ...]]) -> int:
    """The case whose tensors hold the most elements (the first of equals)."""
    sizes = [sum(int(a.numel()) for a in case if hasattr(a, "numel")) for case in args]
    return max(range(len(sizes)), key=lambda k: (sizes[k], -k)) if sizes else 0


def compiled(problem: Problem, path: Path, case: tuple[Any, ...]) -> dict[str, Any]:
    """``path``'s kernels compiled for each target, in a sandboxed child: per target, per kernel, its numbers."""
    with tempfile.TemporaryDirectory(prefix="judge-gpu-") as tmp:
        work = Path(tmp)
        cases, result, spec = work / "cases.bin", work / "result.json", work / "spec.json"
        child.save(cases, [case], problem.language)
        spec.write_text(json.dumps({
            "language": problem.language, "entry": problem.entry, "imports": problem.imports,
            "forbidden_calls": problem.forbidden_calls, "cases": str(cases), "tools": str(toolchain.folder()),
            "runs": [{"candidate": str(path), "result": str(result)}], "compile": TARGETS}), encoding="utf-8")
        ran = sandbox.run(spec, work, path.parent, max(problem.timeout_s, 120.0))
        if ran.timed_out:
            return {"error": "编译超时"}
        try:
            data = json.loads(result.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"error": f"编译子进程没有留下结果（退出码 {ran.returncode}）：{ran.stdout[-300:]}"}
    return data if isinstance(data, dict) else {"error": "编译子进程的结果不是一个对象"}


def _reference(problem: Problem, case: tuple[Any, ...]) -> dict[str, Any]:
    """The reference solution's numbers, from the cache when its file, the case and the tools are unchanged."""
    from verify.settings import Settings  # noqa: PLC0415

    path = problem.solutions()[0].resolve()
    key = hashlib.sha256()
    for part in (path.read_bytes(), _case_key(case), json.dumps(toolchain.PINS, sort_keys=True).encode(),
                 Path(__file__).read_bytes(), Path(child.__file__).with_name("launches.py").read_bytes()):
        key.update(hashlib.sha256(part).digest())
    cache = Settings.for_root(toolchain.ROOT).cache_dir / "judge-gpu" / f"{problem.id}-{key.hexdigest()[:24]}.json"
    if cache.is_file():
        return dict(json.loads(cache.read_text(encoding="utf-8")))
    data = compiled(problem, path, case)
    if "error" not in data and not data.get("import_error") and not data.get("case_error"):
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(data), encoding="utf-8")
    return data


def _case_key(case: tuple[Any, ...]) -> bytes:
    """What a launch specialises on: each tensor's shape, strides, dtype, and every other value."""
    parts = [(tuple(a.shape), tuple(a.stride()), str(a.dtype)) if hasattr(a, "stride") else repr(a) for a in case]
    return repr(parts).encode()


def _kernels(data: dict[str, Any], target: str) -> tuple[list[dict[str, Any]], str]:
    """The kernels compiled for ``target`` and why there are none (or some failed), from untrusted data."""
    if "error" in data:
        return [], str(data["error"])[:300]
    for field in ("import_error", "case_error"):
        if data.get(field):
            return [], f"运行解答时出错：{str(data[field])[:300]}"
    found = data.get("targets", {}).get(target, []) if isinstance(data.get("targets"), dict) else []
    kernels = [k for k in found if isinstance(k, dict)] if isinstance(found, list) else []
    if not kernels:
        return [], "没有记录到核函数启动"
    failed = [f"{k.get('kernel')}：{' '.join(str(k['error']).split())[:300]}" for k in kernels if "error" in k]
    return [k for k in kernels if "error" not in k], ("编译失败：" + "；".join(failed)) if failed else ""


def _number(kernels: list[dict[str, Any]], field: str, combine: Any) -> str:
    values = [k.get(field) for k in kernels]
    return str(combine(values)) if values and all(isinstance(v, int) for v in values) else "—"


def _widest(kernels: list[dict[str, Any]]) -> str:
    loads = [(k.get("widest_bits"), str(k.get("widest_load", ""))[:40]) for k in kernels]
    loads = [(bits, op) for bits, op in loads if isinstance(bits, int) and bits > 0]
    if not loads:
        return "—" if not kernels else "没有全局读取"
    bits, op = max(loads)
    return f"{op}（{bits} 位）"


def _rows(kernels: list[dict[str, Any]]) -> list[str]:
    return [_number(kernels, "registers", max), _number(kernels, "shared", max), _number(kernels, "stack", max),
            _widest(kernels), _number(kernels, "mma", sum)]


NAMES = ["每线程寄存器", "共享内存（字节/块）", "溢出到栈帧（字节/线程）", "最宽的全局读取", "张量核指令（HMMA/HGMMA 条数）"]


def _section(target: str, version: str, mine: dict[str, Any], theirs: dict[str, Any], case: str) -> Section:
    """One target's rows; ``case`` names the case the kernels were specialised for (the first section says it)."""
    my_kernels, my_why = _kernels(mine, target)
    their_kernels, their_why = _kernels(theirs, target)
    rows = [Row(name, a, b) for name, a, b in zip(NAMES, _rows(my_kernels), _rows(their_kernels))]
    names = "、".join(str(k.get("kernel", "?"))[:60] for k in my_kernels) or "—"
    their_names = "、".join(str(k.get("kernel", "?"))[:60] for k in their_kernels) or "—"
    note = (NOTE.format(case=case) + f"核函数：你的 {names}；参考解 {their_names}（多个核函数时取最大值，张量核指令取总数）。"
            if case else "")
    if my_why:
        note += f"你的解答：{my_why}。"
    if their_why:
        note += f"参考解：{their_why}。"
    return Section(f"编译：Triton {version}，{target}（没有在 GPU 上运行）", rows, note)
