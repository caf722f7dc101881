"""Run measured claims under the stress matrix (``verify.core.stress``) on this machine.

Each row of the matrix is checked first: a child process with the row's variables reports which
kernels it gets (ATen's capability, the ISA oneDNN dispatches to, MKL's reproducibility branch and
the bits of one matmul, its thread count). A row whose check sees the same as the base row changes
nothing here and is dropped, with what was seen. Then every kept row runs the claims under each
seed: ordinary claims one worker per core, each with the row's thread count, then every perf claim
alone, with the machine's timing lock held for the whole run so that nothing of ours measures beside it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from verify.core import evidence, measuring
from verify.core import stress as core
from verify.core.records import JsonObject, Machine, WorkerResult
from verify.core.registry import ClaimSpec, Registry
from verify.running import quiet, runner
from verify.running.probe import now
from verify.settings import Settings
from verify.storage.stress import Entry

# What a row changes, as a child process with its variables sees it. oneDNN names the ISA it
# dispatches to in its verbose output when it creates its first primitive (a convolution big
# enough to take oneDNN's path); MKL's branch and one matmul's bits show its code path.
_CHECK = r"""
import ctypes, hashlib, json, os, torch
out = {"aten": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads()}
g = torch.Generator().manual_seed(0)
a = torch.rand(257, 263, generator=g, dtype=torch.float64).float()
b = torch.rand(263, 131, generator=g, dtype=torch.float64).float()
out["matmul"] = hashlib.sha256((a @ b).numpy().tobytes()).hexdigest()[:12]
try:
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    out["mkl_branch"] = int(lib.mkl_serv_cbwr_get(1))
except (OSError, AttributeError):
    out["mkl_branch"] = None
if torch.backends.mkldnn.is_available():
    torch.nn.functional.conv2d(torch.ones(4, 64, 28, 28), torch.ones(64, 64, 3, 3))
print("\n" + json.dumps(out), flush=True)
"""
# what each check compares with the base row
_FIELDS = {"threads": ("threads",), "aten": ("aten",), "onednn": ("onednn",), "mkl": ("mkl_branch", "matmul")}


@dataclass(frozen=True)
class RowCheck:
    row: core.Row
    kept: bool
    saw: str  # what the check saw, in a few words


def _claim_texts(settings: Settings, specs: list[ClaimSpec]) -> dict[str, str]:
    """Each claim's measuring text (its function and the snippet's other code), to match Row.unfaithful against."""
    out: dict[str, str] = {}
    for snippet in {s.snippet for s in specs}:
        text = (settings.root / snippet).read_text(encoding="utf-8")
        tree = ast.parse(text)
        kinds = {s.id: s.kind for s in specs if s.snippet == snippet}
        out.update(measuring.claim_texts(text, tree, kinds))
    return out


def _environ(settings: Settings, row: core.Row, machine: Machine) -> runner.WorkerEnv:
    threads = 1 if row.threads == "1" else machine.cpu_count
    variables = row.variables
    if variables:  # Inductor's compiled code and precompiled headers follow the kernel path: a cache of its own
        variables += (("TORCHINDUCTOR_CACHE_DIR", str(settings.cache_dir / "stress" / row.name / "inductor")),)
    return runner.WorkerEnv(settings=settings, device="cpu", threads=threads, variables=variables)


def _look(wenv: runner.WorkerEnv) -> JsonObject:
    env = wenv.environ()
    env["ONEDNN_VERBOSE"] = "1"
    out = subprocess.run([sys.executable, "-c", _CHECK], env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    seen: JsonObject = json.loads(out.stdout.strip().splitlines()[-1])
    isa = [line.split("isa:", 1)[1].strip() for line in out.stdout.splitlines() if ",isa:" in line]
    seen["onednn"] = isa[0] if isa else None
    return seen


def check_rows(settings: Settings, machine: Machine, rows: tuple[core.Row, ...] = core.ROWS) -> list[RowCheck]:
    """Which rows change what runs on this machine, by what a child process with their variables sees."""
    base = _look(_environ(settings, core.ROWS[0], machine))
    out = []
    for row in rows:
        if row.name == core.ROWS[0].name:
            out.append(RowCheck(row, True, _describe(base, ("aten", "onednn", "threads"))))
            continue
        if row.check == "busy":
            out.append(RowCheck(row, machine.cpu_count > 1, "a second process spins on one core" if machine.cpu_count > 1
                                else "one core only: nothing to keep busy beside the claim"))
            continue
        seen = _look(_environ(settings, row, machine))
        fields = _FIELDS[row.check]
        if "error" in seen:
            out.append(RowCheck(row, False, f"its check failed: {seen['error']}"))
        elif all(seen.get(f) == base.get(f) for f in fields):
            out.append(RowCheck(row, False, f"changes nothing here: {_describe(seen, fields)}, as without it"))
        else:
            out.append(RowCheck(row, True, f"{_describe(base, fields)} → {_describe(seen, fields)}"))
    return out


def _describe(seen: JsonObject, fields: tuple[str, ...]) -> str:
    return ", ".join(f"{f} {seen.get(f)}" for f in fields)


class _Spinner:
    """A second process that keeps one core busy, and how much CPU it got."""

    def __enter__(self) -> _Spinner:
        self.began = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        return self

    def cpu_seconds(self) -> float:
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __exit__(self, *exc: object) -> None:
        self.used = self.cpu_seconds()
        self.wall = time.monotonic() - self.began
        self.proc.kill()
        self.proc.wait()


Progress = Callable[[str], None]


def _run_variant(settings: Settings, machine: Machine, row: core.Row, seed: int, specs: list[ClaimSpec],
                 say: Progress) -> dict[str, WorkerResult]:
    wenv = replace(_environ(settings, row, machine), seed_shift=seed)
    by_file: dict[str, list[ClaimSpec]] = {}
    for spec in specs:
        by_file.setdefault(spec.snippet, []).append(spec)
    ordinary = [(f, [s for s in ss if s.kind != "perf"]) for f, ss in sorted(by_file.items())]
    perf = [(f, [s for s in ss if s.kind == "perf"]) for f, ss in sorted(by_file.items())]
    ordinary = [(f, ss) for f, ss in ordinary if ss]
    perf = [(f, ss) for f, ss in perf if ss]
    results: dict[str, WorkerResult] = {}
    # Ordinary claims are not timed: one worker per core, each with the row's threads (all cores
    # oversubscribes them, which is one more schedule they must hold under).
    jobs = machine.cpu_count
    with runner.started(wenv, len(ordinary) > 1) as zyg, ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for out in pool.map(lambda item: runner.run_file(item[0], item[1], wenv, zyg=zyg), ordinary):
            results.update(out)
    with runner.started(wenv, len(perf) > 1) as timed_zyg:  # one at a time, alone, as in a run
        for snippet, ss in perf:
            results.update(runner.run_file(snippet, ss, wenv, zyg=timed_zyg))
    say(f"{core.variant_name(row, seed)}: {len(results)} claims")
    return results


def stress(settings: Settings, reg: Registry, machine: Machine, specs: list[ClaimSpec],
           seeds: tuple[int, ...] = core.SEEDS, rows: tuple[core.Row, ...] = core.ROWS,
           say: Progress = lambda _: None) -> tuple[dict[str, Entry], list[RowCheck]]:
    """Every claim of ``specs`` under every kept row and seed; its entries and the rows' checks."""
    checks = check_rows(settings, machine, rows)
    for c in checks:
        say(f"{c.row.name}: {'kept' if c.kept else 'dropped'}: {c.saw}")
    runs: dict[str, dict[str, core.Run]] = {s.id: {} for s in specs}
    texts = _claim_texts(settings, specs)
    with quiet.hold(True):
        for check in (c for c in checks if c.kept):
            row = check.row
            mine = [s for s in specs if core.applies(row, s)]
            skipped = [s for s in mine if core.unfaithful_for(row, texts[s.id])]
            for spec in skipped:
                say(f"{spec.id}: skipped under {row.name}: {row.unfaithful_why}")
                for seed in seeds:
                    runs[spec.id][core.variant_name(row, seed)] = core.Run(core.SKIPPED, {}, row.unfaithful_why)
            mine = [s for s in mine if s not in skipped]
            if not mine:
                continue
            for seed in seeds:
                if row.busy:
                    with _Spinner() as spin:
                        results = _run_variant(settings, machine, row, seed, mine, say)
                    say(f"  the spinner got {spin.used:.1f} s of CPU in {spin.wall:.1f} s")
                else:
                    results = _run_variant(settings, machine, row, seed, mine, say)
                for spec in mine:
                    raw = results.get(spec.id)
                    if raw is None:
                        runs[spec.id][core.variant_name(row, seed)] = core.Run("error", {}, "no result")
                        continue
                    outcome, message = evidence.judge(spec, raw)
                    runs[spec.id][core.variant_name(row, seed)] = core.Run(
                        outcome.value, core.numbers(raw.observed), message)
    date = now()
    entries = {s.id: Entry(reg.key(s.id), s.kind, machine.torch, date, runs[s.id]) for s in specs}
    return entries, checks
