"""The simulated GPU section of a numba problem: what the memory system would be asked for, from an address trace.

The candidate's kernels and the reference solution's (the first file under ``solutions/``) run on one case, the
first with at least :data:`TRACED` input elements (else the largest), in the judge's sandboxed child in its
sim-report mode (:func:`verify.judge.child._sim_report`): numba's CUDA simulator, the threads of a block one at a
time in order, every element access of a global or shared array recorded. This process turns the records into
requests as the site's simulated claims do (``snippets/_gpu/sim.py``; a request: the n-th access of one warp's
threads to one array):

- global memory: 32-byte sectors per request (4 for 32 consecutive floats, 32 for a stride of 32 floats);
- shared memory: the bank-conflict degree, the most distinct 4-byte words one bank serves in a request;
- idle lanes: of the 32 lanes of each global request, those that take no part (a branch, a tail, a short warp);
- out-of-bounds accesses: global float elements outside their array (read as NaN, written nowhere).

The child is untrusted: its records are checked for shape before use, and a record that does not fit gives no
numbers. The reference's numbers are cached under the project's cache folder, keyed by its file, the case, the
toolchain's pins and this module's and the child's code. Nothing runs on a GPU and no time is learned.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from verify import toolchain
from verify.judge import child, sandbox
from verify.judge.gpu import Row, Section
from verify.judge.problem import Problem

#: input elements a case needs to be the traced one (smaller cases show little of the access pattern)
TRACED = 256
WARP, SECTOR, BANKS, BANK_WIDTH = 32, 32, 32, 4


@dataclass(frozen=True)
class Numbers:
    """One file's simulated numbers on the traced case."""

    launches: int
    requests: int  # global memory requests
    sectors_mean: float
    sectors_max: int
    shared_requests: int
    conflict_max: int  # 0: no shared memory touched
    idle_lanes: float  # fraction of the lanes of the global requests
    outside: int
    capped: bool  # the child kept only its first rows


def traced_case(prepared: Any) -> int:
    """The index of the case to trace: the first with at least :data:`TRACED` input elements, else the largest."""
    sizes = [sum(int(a.numel()) for a in args if hasattr(a, "numel")) for args in prepared.args]
    return next((i for i, n in enumerate(sizes) if n >= TRACED), max(range(len(sizes)), key=sizes.__getitem__))


def numbers(record: Any) -> Numbers | None:
    """The numbers of one trace file's record, or ``None`` when it does not have the shape the child writes."""
    requests: dict[tuple[Any, ...], list[tuple[int, int, int]]] = defaultdict(list)
    try:
        for array, block, thread, seq, byte, size, _write in record["rows"]:
            b, t, n, size = tuple(int(x) for x in block), int(thread), int(seq), int(size)
            if len(b) != 3 or size not in (1, 2, 4, 8) or t < 0:
                return None
            requests[(str(array), b, t // WARP, n)].append((t, int(byte), size))
        launches, outside, capped = int(record["launches"]), int(record["outside"]), bool(record["capped"])
    except (TypeError, ValueError, KeyError):
        return None
    sectors, lanes, conflicts = [], [], []
    for (array, *_), req in requests.items():
        if ":global" in array:  # the distinct 32-byte sectors the request touches
            sectors.append(len({b // SECTOR for _, byte, size in req for b in range(byte, byte + size)}))
            lanes.append(len({t for t, _, _ in req}))
        elif ":shared" in array:  # the most distinct 4-byte words one bank serves (the same word is a broadcast)
            words: dict[int, set[int]] = defaultdict(set)
            for _, byte, _ in req:
                words[byte // BANK_WIDTH % BANKS].add(byte // BANK_WIDTH)
            conflicts.append(max(len(w) for w in words.values()))
    return Numbers(launches, len(sectors), sum(sectors) / len(sectors) if sectors else 0.0, max(sectors, default=0),
                   len(conflicts), max(conflicts, default=0),
                   1 - sum(lanes) / (WARP * len(lanes)) if lanes else 0.0, outside, capped)


def _traced(problem: Problem, files: list[Path], prepared: Any, i: int, work: Path) -> list[Numbers | None]:
    """Each file run on case ``i`` in one child in its sim-report mode, and the numbers of its record."""
    cases = work / "cases.bin"
    child.save(cases, [prepared.args[i]], problem.language)
    runs = [{"candidate": str(f), "result": str(work / f"result{k}.bin"), "trace": str(work / f"trace{k}.bin")}
            for k, f in enumerate(files)]
    spec = work / "spec.json"
    spec.write_text(json.dumps({"language": problem.language, "entry": problem.entry, "runs": runs,
                                "imports": problem.imports, "forbidden_calls": problem.forbidden_calls,
                                "cases": str(cases), "tools": str(toolchain.folder()), "trace": True}),
                    encoding="utf-8")
    ran = sandbox.run(spec, work, files[0].parent, problem.timeout_s)
    out: list[Numbers | None] = []
    for run in runs:
        path = Path(run["trace"])
        try:
            record = child.load(path, problem.language) if ran.returncode == 0 and path.is_file() else None
        except Exception:  # noqa: BLE001  (the child's file is untrusted: any failure to read it gives no numbers)
            record = None
        out.append(numbers(record) if isinstance(record, dict) else None)
    return out


def _cache_file(problem: Problem, reference: Path, prepared: Any, i: int) -> Path:
    from verify.settings import Settings  # noqa: PLC0415

    here = Path(__file__).resolve()
    key = hashlib.sha256()
    for part in (reference.read_bytes(), json.dumps(toolchain.PINS, sort_keys=True).encode(), here.read_bytes(),
                 here.with_name("launches.py").read_bytes(), here.with_name("child.py").read_bytes(),
                 f"{problem.id}|{prepared.names[i]}".encode()):
        key.update(hashlib.sha256(part).digest())
    for a in prepared.args[i]:
        if hasattr(a, "numpy"):
            key.update(a.detach().contiguous().numpy().tobytes())
    root = Path(problem.folder).resolve().parents[2]
    return Settings.for_root(root).cache_dir / "judge-gpu" / f"{problem.id}-{key.hexdigest()[:24]}.json"


def _cached(path: Path) -> Numbers | None:
    try:
        return Numbers(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def sections(problem: Problem, candidate: Path, prepared: Any) -> list[Section]:
    """The simulated section of ``candidate`` beside the reference solution's, on one traced case."""
    i = traced_case(prepared)
    reference = problem.solutions()[0].resolve()
    cache = _cache_file(problem, reference, prepared, i)
    theirs = _cached(cache)
    with tempfile.TemporaryDirectory(prefix="judge-gpu-") as tmp:
        got = _traced(problem, [candidate.resolve(), *([] if theirs else [reference])], prepared, i, Path(tmp))
    mine = got[0]
    if theirs is None and got[-1] is not None:
        theirs = got[-1]
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(asdict(theirs)), encoding="utf-8")
    version = toolchain.installed().get("numba", toolchain.PINS["numba"])
    note = (f"用例「{prepared.names[i]}」；一次请求 = 一个 warp 的线程对同一数组的第 n 次访问；扇区 32 字节，"
            f"32 个相邻 float 的请求是 4 个扇区；bank 冲突度 1 表示无冲突；线程按编号依次运行，不是 GPU 的调度")
    if (mine and mine.capped) or (theirs and theirs.capped):
        note += "；访问太多，记录只保留了前面一部分"
    return [Section(f"模拟：numba {version} 的 CUDA 模拟器（没有在 GPU 上运行）", _rows(mine, theirs), note)]


def _rows(mine: Numbers | None, theirs: Numbers | None) -> list[Row]:
    def cell(n: Numbers | None, what: str) -> str:
        if n is None:
            return "—（没有得到记录）"
        if what == "launches":
            return str(n.launches)
        if what == "sectors":
            return f"平均 {n.sectors_mean:.1f}，最多 {n.sectors_max}（{n.requests} 次请求）" if n.requests else "没有访问"
        if what == "conflicts":
            return f"{n.conflict_max}（{n.shared_requests} 次请求）" if n.shared_requests else "没有用共享内存"
        if what == "idle":
            return f"{n.idle_lanes:.0%}" if n.requests else "—"
        return f"{n.outside} 次" + ("（读到 NaN，写被丢弃）" if n.outside else "")

    names = {"launches": "核函数启动次数", "sectors": "全局内存：每次请求的扇区数",
             "conflicts": "共享内存：bank 冲突度（最坏）", "idle": "全局内存请求中闲置的 lane",
             "outside": "越界访问"}
    return [Row(name, cell(mine, what), cell(theirs, what)) for what, name in names.items()]
