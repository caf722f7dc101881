"""What a GPU loan runs, how long it should take, and a rehearsal of it on a machine without a GPU.

A loan is one GPU for minutes, machine start-up included (``verify.loan`` spends it).
It records the claims that need CUDA, then the benchmark files that mean something on a GPU, in
:data:`GPU_BENCH` order, each part under a deadline. :func:`plan` estimates the run from a model
stated in :data:`MODEL` (none of these claims has run on a GPU yet, so no measured duration
exists): every figure of the printed plan comes from that model and the claims' own code.

``make gpu-dry-run`` (:func:`rehearse`) runs each CUDA claim's code here with ``device="cpu"``:
a claim that returns must return every key its statement, its expectation and the pages name;
one that raises must raise because there is no GPU (torch says so), not from a bug. Values are
not judged: a CPU's numbers say nothing of a GPU's.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from verify.core import binding
from verify.core.records import WorkerResult
from verify.core.registry import ClaimSpec, Registry
from verify.running import runner
from verify.settings import Settings
from verify.storage import scan

#: benchmark files a GPU measures, most telling first (the deadline may cut the tail): the copy and
#: matmul ceilings, launch overhead and CUDA graphs, fusion, tensor ops. Compile time and the C++
#: extension's call overhead are host-side costs the CPU machines already measure.
GPU_BENCH = ("test_bench_limits.py", "test_bench_overhead.py", "test_bench_fusion.py", "test_bench_tensors.py")

#: the estimate's model, in seconds on the GPU machine (16 cores; ordinary claims four at a time)
MODEL = {
    # snippets/durations.json, this project's CPUs: a snippet file's worker takes 2.1 s (median, start
    # and imports included); ordinary claims 1.0 s at the 90th percentile, timing claims 4.2 s
    "worker": 5.0,  # a worker's start: Python, torch, the snippet's imports, and about 3 s for the CUDA context
    "fact": 1.0, "error": 1.0, "perf": 5.0,  # a claim's own work, by kind
    # Inductor with a cold cache: 10-20 s to a first compiled function on this project's CPUs with
    # g++ (README: Measurements); Triton's GPU kernels compile in about the same time
    "compile": 15.0,  # more for a claim that compiles (torch.compile, Triton)
    "autotune": 60.0,  # more for one that autotunes: max-autotune compiles a dozen or so GEMM configs on 16 cores
    "build": 45.0,  # more for one that builds C++/CUDA: a torch extension's translation units under ninja
    "bench_file": 30.0,  # a benchmark file: pytest, its limits, its rounds (11 files took 5-7 min on the CPUs)
    "jobs": 4,
}
BUDGET_S = 420.0  # what the loan's run may take, start-up not included: with a start of about 3 minutes it leaves
#                   about 5 of a task's 15 device minutes for a warm rerun of what failed (raised from 360 s when the
#                   GPU pages brought 4 more CUDA claims)
CLAIMS_SHARE = 0.6  # of the budget, for the claims; the benchmarks have the rest

_COMPILES = re.compile(r"torch\.compile|triton\.jit|@triton|inductor")
_AUTOTUNES = re.compile(r"max-autotune|max_autotune")
_BUILDS = re.compile(r"cpp_extension|load_inline|nvcc|\bg\+\+|CUDAExtension|ninja")
#: what torch says when code asks for CUDA on a build or machine without it
NO_GPU = re.compile(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available|"
                    r"torch\._C' has no attribute '_cuda|Cannot get CUDA generator without ATen_cuda library")


def cuda_claims(reg: Registry) -> list[ClaimSpec]:
    return sorted((s for s in reg.claims.values() if "cuda" in s.needs), key=lambda s: (s.snippet, s.line))


def _source(root: Path, spec: ClaimSpec, cache: dict[str, tuple[str, ast.Module]]) -> str:
    """The text of the claim's function (decorator included) and of the snippet's own functions it calls."""
    if spec.snippet not in cache:
        text = (root / spec.snippet).read_text(encoding="utf-8")
        cache[spec.snippet] = (text, ast.parse(text))
    text, tree = cache[spec.snippet]
    lines = text.splitlines()
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def span(node: ast.AST) -> str:
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])  # type: ignore[attr-defined]
        return "\n".join(lines[first - 1:node.end_lineno])  # type: ignore[attr-defined]

    claim_fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.decorator_list and min(d.lineno for d in n.decorator_list) <= spec.line <= (n.end_lineno or 0)),
                    None)
    if claim_fn is None:
        return ""
    seen: set[str] = set()
    todo: list[ast.AST] = [claim_fn]
    parts = []
    while todo:
        node = todo.pop()
        parts.append(span(node))
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in defs \
                    and call.func.id not in seen:
                seen.add(call.func.id)
                todo.append(defs[call.func.id])
    return "\n".join(parts)


def claim_seconds(spec: ClaimSpec, source: str) -> float:
    seconds = MODEL.get(spec.kind, MODEL["fact"])
    seconds += MODEL["compile"] if _COMPILES.search(source) else 0.0
    seconds += MODEL["autotune"] if _AUTOTUNES.search(source) else 0.0
    seconds += MODEL["build"] if _BUILDS.search(source) else 0.0
    return seconds


@dataclass
class Plan:
    files: dict[str, list[tuple[ClaimSpec, float]]]  # snippet -> (claim, estimated seconds)
    claims_s: float  # the claims' wall time: ordinary ones four at a time, then timing ones alone
    bench_s: float
    bench: tuple[str, ...] = GPU_BENCH

    @property
    def total_s(self) -> float:
        return self.claims_s + self.bench_s


def plan(reg: Registry) -> Plan:
    cache: dict[str, tuple[str, ast.Module]] = {}
    files: dict[str, list[tuple[ClaimSpec, float]]] = {}
    for spec in cuda_claims(reg):
        files.setdefault(spec.snippet, []).append((spec, claim_seconds(spec, _source(reg.root, spec, cache))))
    ordinary = [MODEL["worker"] + sum(s for c, s in items if c.kind != "perf") for items in files.values()
                if any(c.kind != "perf" for c, _ in items)]
    timing = sum(MODEL["worker"] + sum(s for c, s in items if c.kind == "perf") for items in files.values()
                 if any(c.kind == "perf" for c, _ in items))
    claims_s = max(max(ordinary, default=0.0), sum(ordinary) / MODEL["jobs"]) + timing
    return Plan(files, claims_s, MODEL["bench_file"] * len(GPU_BENCH))


def describe(p: Plan, budget: float = BUDGET_S) -> str:
    rows = [f"GPU plan: {sum(len(v) for v in p.files.values())} CUDA claims in {len(p.files)} snippet files, "
            f"then {len(p.bench)} benchmark files"]
    for snippet, items in p.files.items():
        rows.append(f"  {snippet}: " + ", ".join(f"{c.id} ({c.kind}, ~{s:.0f} s)" for c, s in items))
    rows.append(f"  benchmarks: {', '.join(p.bench)} (~{MODEL['bench_file']:.0f} s each)")
    rows.append(f"estimate: claims ~{p.claims_s:.0f} s (deadline {budget * CLAIMS_SHARE:.0f} s), benchmarks "
                f"~{p.bench_s:.0f} s, total ~{p.total_s:.0f} s of a {budget:.0f} s budget (model: "
                + ", ".join(f"{k} {v:g}" for k, v in MODEL.items()) + ")")
    return "\n".join(rows)


# --- the rehearsal ---------------------------------------------------------------------------------

@dataclass
class Rehearsal:
    ran: list[str] = field(default_factory=list)  # ran on the CPU and returned every key
    no_gpu: dict[str, str] = field(default_factory=dict)  # claim -> what torch said about the missing GPU
    bugs: dict[str, str] = field(default_factory=dict)  # claim -> what is wrong before any GPU time is spent


def named_keys(spec: ClaimSpec, refs: dict[str, set[str]]) -> set[str]:
    """The observed keys a claim must return: its statement's, its expectation's, the pages'."""
    keys = {k for k, _ in binding.keys(spec.statement)} | set(spec.expect) | refs.get(spec.id, set())
    return {k for k in keys if k != "raises"}


def page_refs(settings: Settings) -> dict[str, set[str]]:
    from verify.storage import pages as page_store  # noqa: PLC0415  (Markdown: the rehearsal's, not the loan's)

    out: dict[str, set[str]] = {}
    for prose in page_store.read_all(settings.docs_dir, settings.cache_dir).values():
        for ref, _line in prose.refs:
            out.setdefault(ref.claim, set()).add(ref.key)
    return out


def judge(spec: ClaimSpec, raw: WorkerResult, refs: dict[str, set[str]]) -> tuple[str, str]:
    """("ran" | "no-gpu" | "bug", why) for one claim run on the CPU."""
    exc = raw.exception
    if raw.outcome is not None:  # a timeout or a crash
        return "bug", f"{raw.outcome}: {raw.message}"
    if exc is not None:
        text = f"{exc.type}: {exc.message}"
        if spec.kind == "error" and spec.raises and exc.type == spec.raises[0]:
            return "no-gpu", f"raised {exc.type} on the CPU too (the GPU's message is judged on the GPU)"
        return ("no-gpu", text[:200]) if NO_GPU.search(text) else ("bug", text[:400])
    missing = sorted(k for k in named_keys(spec, refs) if _absent(raw.observed, k))
    if missing:
        return "bug", f"returned no {', '.join(missing)} (named by its statement, expectation or a page)"
    return "ran", ""


def _absent(observed: dict, key: str) -> bool:
    try:
        binding.lookup(observed, key)
    except binding.BindError:
        return True
    return False


def torch_names(source: str) -> set[str]:
    """Every dotted ``torch.…`` name the code reads (``torch.cuda.Event``, ``torch._inductor.config``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id == "torch" and parts and parts[-1] not in ("ops", "classes"):
            names.add("torch." + ".".join(reversed(parts)))  # torch.ops.* exists once a library registers it
    return names


def missing_names(names: set[str]) -> list[str]:
    """The names this torch does not have: not an attribute, nor a module to import. The CPU build's
    missing CUDA bindings (``torch._C._cuda…``) are not counted."""
    import importlib  # noqa: PLC0415

    import torch  # noqa: PLC0415

    out = []
    for name in sorted(names):
        obj: object = torch
        path = "torch"
        for part in name.split(".")[1:]:
            path += "." + part
            if hasattr(obj, part):
                obj = getattr(obj, part)
                continue
            try:
                obj = importlib.import_module(path)
            except ImportError:
                if not path.startswith("torch._C._cuda"):
                    # a name only a longer chain makes (torch.x.y where x.y is an attribute set on
                    # use) still fails here: that is a real risk worth naming
                    out.append(name)
                break
    return sorted(set(out))


def rehearse(settings: Settings, jobs: int = 2) -> Rehearsal:
    reg = scan.load_registry(settings)
    refs = page_refs(settings)
    groups: dict[str, list[ClaimSpec]] = {}
    for spec in cuda_claims(reg):
        groups.setdefault(spec.snippet, []).append(spec)
    raws = runner.run_many(groups, lambda threads: runner.WorkerEnv(settings, "cpu", threads), jobs=jobs)
    out = Rehearsal()
    cache: dict[str, tuple[str, ast.Module]] = {}
    for spec in cuda_claims(reg):
        unknown = missing_names(torch_names(_source(reg.root, spec, cache)))
        if unknown:
            out.bugs[spec.id] = f"this torch has no {', '.join(unknown)}"
            continue
        verdict, why = judge(spec, raws[spec.id], refs)
        if verdict == "ran":
            out.ran.append(spec.id)
        else:
            (out.no_gpu if verdict == "no-gpu" else out.bugs)[spec.id] = why
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rehearse the GPU loan on this machine: run every CUDA claim's "
                                     "code on the CPU, check the keys it returns, and print the loan's plan.")
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds the loan's run may take")
    args = parser.parse_args(argv)
    settings = Settings.for_command(args.root)
    start = time.monotonic()
    result = rehearse(settings)
    for cid in result.ran:
        print(f"ran on the CPU   {cid}")
    for cid, why in sorted(result.no_gpu.items()):
        print(f"needs the GPU    {cid}: {why}")
    for cid, why in sorted(result.bugs.items()):
        print(f"BUG              {cid}: {why}", file=sys.stderr)
    p = plan(scan.load_registry(settings))
    print(describe(p, args.budget))
    print(f"rehearsal: {len(result.ran)} ran on the CPU, {len(result.no_gpu)} need the GPU to run, "
          f"{len(result.bugs)} bug(s), in {time.monotonic() - start:.0f} s")
    if p.total_s > args.budget:
        print(f"the plan's estimate ({p.total_s:.0f} s) is over the budget ({args.budget:.0f} s)", file=sys.stderr)
        return 1
    return 1 if result.bugs else 0


if __name__ == "__main__":
    sys.exit(main())
