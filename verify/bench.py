"""Benchmarks: run the pytest-benchmark suite, store its JSON per device, judge staleness, compare.

Storage is pytest-benchmark's own JSON (``--benchmark-json``), one file per device under
``benchmarks/<device_key>.json``, with two additions: ``sources`` (benchmark file -> hash of the
file and the project modules it imports, as for snippets) and ``runs`` (benchmark file -> the
date, commit and machine info of the run that produced its results). A benchmark file's results
are *stale* when its hash changed since; *missing* when it never ran on that device.

How results get made (the site never runs them unasked):

- ``verify bench run`` runs the benchmark files whose results are missing or stale on this
  device (``--force``: all of them) and merges them into the device's file. CI runs it before
  ``mkdocs build``; a GPU machine runs it and the file is committed.
- A ``bench`` fence renders what is stored. With ``VERIFY_BENCH=auto`` the first fence of a
  build runs what is missing or stale first; ``VERIFY_BENCH=force`` re-runs everything once.
  Unset (or ``off``), nothing runs and missing or stale results are marked as such, with the
  date and machine of what is shown.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from verify.store import CORRUPT, atomic_write_json, read_json
from verify.units import fmt_rate, fmt_time

FORMAT = 1
TEST_GLOB = "tests/test_bench_*.py"

bench_app = typer.Typer(help="Benchmarks: run them, show stored results, compare two result files.",
                        no_args_is_help=True, add_completion=False)


# --- storage ----------------------------------------------------------------------------------

def bench_dir(root: Path) -> Path:
    return root / "benchmarks"


# A benchmark file marks its whole module: ``pytestmark = pytest.mark.bench`` or a list holding it.
_MARKED = re.compile(r"^pytestmark\s*=.*\bpytest\.mark\.bench\b", re.MULTILINE)


def bench_files(root: Path) -> list[str]:
    """Benchmark test files (``tests/test_bench_*.py`` whose module is marked ``bench``), sorted.

    Unmarked files under the same glob (unit tests of this module) are not benchmarks: they have
    no results to store and would make a benchmark run fail for want of benchmarks.
    """
    return sorted(p.relative_to(root).as_posix() for p in root.glob(TEST_GLOB)
                  if _MARKED.search(p.read_text(encoding="utf-8")))


_HASHES: dict[tuple, dict[str, str]] = {}


# Of the project's own modules, only these change what a benchmark measures; the rest (storage,
# rendering, the CLI) can change without making the stored results stale.
MEASURING = ("verify/bench_plugin.py", "verify/timing.py")


def _measures(rel: str) -> bool:
    return not rel.startswith("verify/") or rel in MEASURING


def source_hash(root: Path, rel: str) -> str:
    """What a stored result is current for: the benchmark file, its workloads, the measuring code."""
    from verify.registry import snippet_hash  # noqa: PLC0415

    return snippet_hash(root / rel, root, follow=_measures)


def current_hashes(root: Path) -> dict[str, str]:
    """Benchmark file -> hash of it and what it imports; recomputed only when a source changed."""
    sig = tuple(sorted((p.as_posix(), p.stat().st_mtime_ns, p.stat().st_size)
                       for sub in ("tests", "snippets", "verify") for p in (root / sub).rglob("*.py")))
    if sig not in _HASHES:
        _HASHES.clear()
        _HASHES[sig] = {f: source_hash(root, f) for f in bench_files(root)}
    return dict(_HASHES[sig])


def load(path: Path) -> dict[str, Any] | None:
    data = read_json(path)
    if data is None or data is CORRUPT or not isinstance(data, dict) or "benchmarks" not in data:
        return None
    return data


_LOADED: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}


def load_all(root: Path) -> dict[str, dict[str, Any]]:
    """device key -> stored results, for every file under ``benchmarks/``; read again only when changed."""
    paths = sorted(bench_dir(root).glob("*.json"))
    key = tuple((p.as_posix(), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = {p.stem: data for p in paths if (data := load(p)) is not None}
    return dict(_LOADED[key])


def file_of(bench: dict[str, Any]) -> str:
    return bench["fullname"].split("::")[0]


def merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Results of the files that ran in ``new`` replace theirs in ``old``; the rest are kept."""
    ran = set(new.get("sources", {}))
    run_info = {"datetime": new.get("datetime"), "machine_info": new.get("machine_info"),
                "commit_info": {k: new.get("commit_info", {}).get(k) for k in ("id", "dirty", "branch")}}
    out = dict(new)
    out["format"] = FORMAT
    kept = [b for b in (old or {}).get("benchmarks", []) if file_of(b) not in ran]
    out["benchmarks"] = kept + list(new.get("benchmarks", []))
    out["sources"] = {**(old or {}).get("sources", {}), **new.get("sources", {})}
    out["runs"] = {**(old or {}).get("runs", {}), **{f: run_info for f in ran}}
    return out


def freshness(root: Path, data: dict[str, Any] | None) -> dict[str, str]:
    """Benchmark file -> ``current``, ``stale`` or ``missing`` for one device's results."""
    sources = (data or {}).get("sources", {})
    out = {}
    for f, h in current_hashes(root).items():
        out[f] = "missing" if f not in sources else ("current" if sources[f] == h else "stale")
    return out


# --- running ----------------------------------------------------------------------------------

def device_key(root: Path) -> str:
    from verify import engine, probe  # noqa: PLC0415

    return probe.probe(engine.cache_dir(root))["device_key"]


def run(root: Path, *, force: bool = False, files: list[str] | None = None, threads: int | None = None,
        out: Path | None = None, echo: Any = print) -> tuple[Path, int, list[str]]:
    """Run missing or stale benchmark files (all with ``force``) and merge them into storage.

    Returns:
        The result file, pytest's exit status (0 when nothing needed running) and the files run.
    """
    from verify import engine, runner  # noqa: PLC0415

    path = out or bench_dir(root) / f"{device_key(root)}.json"
    old = load(path)
    state = freshness(root, old)
    todo = [f for f in state if force or state[f] != "current"]
    if files:
        todo = [f for f in todo if any(fnmatch.fnmatchcase(f, p) or Path(f).name == p for p in files)]
    if not todo:
        return path, 0, []
    env = runner.WorkerEnv(root=root, cache_dir=engine.cache_dir(root), device="", threads=threads).environ()
    env.pop("VERIFY_DEVICE", None)  # the suite picks CUDA when present, unless the caller said otherwise
    if os.environ.get("VERIFY_DEVICE"):
        env["VERIFY_DEVICE"] = os.environ["VERIFY_DEVICE"]
    # One pytest process per file: a file's results are marked current only when all of it
    # passed, and every file measures the limits in its own run, next to its benchmarks.
    worst = 0
    for f in todo:
        with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
            raw = Path(tmp) / "out.json"
            cmd = [sys.executable, "-m", "pytest", "-m", "bench", "-p", "no:cacheprovider", "-q",
                   "--benchmark-json", str(raw), "--benchmark-columns=median,iqr,rounds", f]
            echo(f"running {f}")
            rc = subprocess.run(cmd, cwd=root, env=env).returncode
            new = load(raw)
        if new is None or not new.get("benchmarks"):
            worst = worst or rc or 1
            continue
        if rc:
            new["sources"] = {f: "failed"}  # keeps what did run, and stays stale until it passes
            worst = worst or rc
        old = merge(old, new)
        atomic_write_json(path, old)
    rc = worst
    return path, rc, todo


def ensure(root: Path) -> None:
    """What a build does before rendering, by ``VERIFY_BENCH``: nothing, run stale, or force."""
    mode = os.environ.get("VERIFY_BENCH", "off").lower()
    if mode in ("auto", "force"):
        import logging  # noqa: PLC0415

        log = logging.getLogger("mkdocs.verify")
        _, rc, ran = run(root, force=mode == "force", echo=log.info)
        if rc:
            log.warning("verify: benchmarks failed (pytest exit %d) in %s", rc, ", ".join(ran))


# --- comparing --------------------------------------------------------------------------------

def per_call(bench: dict[str, Any]) -> float:
    extra = bench.get("extra_info", {})
    if "median_s" in extra:
        return float(extra["median_s"])
    return float(bench["stats"]["median"]) / float(extra.get("inner", 1))


def compare(a: dict[str, Any], b: dict[str, Any], threshold: float = 0.1) -> list[dict[str, Any]]:
    """One row per benchmark in both: medians per call, ratio ``b / a``, and the verdict.

    A row *regresses* when ``b`` is slower than ``a`` by more than ``threshold`` (0.1: 10 %) and
    *improves* when faster by more than it.
    """
    bmap = {x["fullname"]: x for x in b.get("benchmarks", [])}
    rows = []
    for x in a.get("benchmarks", []):
        y = bmap.get(x["fullname"])
        if y is None:
            continue
        ta, tb = per_call(x), per_call(y)
        ratio = tb / ta if ta else float("inf")
        verdict = "regressed" if ratio > 1 + threshold else "improved" if ratio < 1 / (1 + threshold) else "same"
        rows.append({"group": x.get("group"), "name": x["name"], "a_s": ta, "b_s": tb, "ratio": ratio,
                     "verdict": verdict})
    return rows


def machine_line(data: dict[str, Any]) -> str:
    m = data.get("machine_info", {})
    dev = m.get("gpu_name") or m.get("cpu_model") or "?"
    return (f"{dev} · torch {m.get('torch', '?')} ({m.get('torch_build', '?')}) · {m.get('threads', '?')} threads · "
            f"{(data.get('datetime') or '')[:16]}")


# --- CLI --------------------------------------------------------------------------------------

def _root() -> Path:
    from verify.paths import project_root  # noqa: PLC0415

    return project_root()


def _resolve(root: Path, name: str) -> Path:
    """A result file given as a path or as a device key under ``benchmarks/``."""
    path = Path(name)
    if not path.suffix:
        path = bench_dir(root) / f"{name}.json"
    if not path.is_file():
        raise typer.BadParameter(f"no benchmark results at {name!r}")
    return path


@bench_app.command("run")
def run_cmd(
    force: Annotated[bool, typer.Option(help="re-run every benchmark file, stale or not")] = False,
    file: Annotated[list[str], typer.Option("--file", help="only these benchmark files (name or glob)")] = [],  # noqa: B006
    threads: Annotated[int, typer.Option(help="torch CPU threads (0: torch's default)")] = 0,
    out: Annotated[str, typer.Option(help="write here instead of benchmarks/<device>.json")] = "",
) -> None:
    """Run the benchmarks whose results are missing or stale on this device, and store them."""
    root = _root()
    path, rc, ran = run(root, force=force, files=file, threads=threads or None, out=Path(out) if out else None)
    if not ran:
        typer.echo(f"{path.relative_to(root) if path.is_relative_to(root) else path}: every benchmark is current")
    else:
        typer.echo(f"stored {len(ran)} benchmark file(s) in {path}")
    if rc:
        raise typer.Exit(rc)


@bench_app.command("show")
def show_cmd(device: Annotated[str, typer.Option(help="device key (default: every stored device)")] = "") -> None:
    """Print stored results with their freshness, without running anything."""
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415


    root = _root()
    console = Console()
    for key, data in load_all(root).items():
        if device and key != device:
            continue
        state = freshness(root, data)
        console.print(f"[bold]{key}[/]: {machine_line(data)}")
        console.print("  " + ", ".join(f"{Path(f).name}: {s}" for f, s in state.items()))
        table = Table("group", "benchmark", "median", "spread", "achieved", "of limit")
        for b in data["benchmarks"]:
            e = b.get("extra_info", {})
            table.add_row(b.get("group") or "", b["name"], fmt_time(per_call(b)), f"{e.get('spread', 0):.0%}",
                          fmt_rate(e), f"{e['fraction']:.0%}" if "fraction" in e else "")
        console.print(table)


@bench_app.command("compare")
def compare_cmd(
    a: Annotated[str, typer.Argument(help="baseline: result file or device key")],
    b: Annotated[str, typer.Argument(help="candidate: result file or device key")],
    threshold: Annotated[float, typer.Option(help="relative slow-down that counts as a regression")] = 0.1,
    group: Annotated[str, typer.Option(help="only benchmarks of this group (glob)")] = "*",
) -> None:
    """Compare two result files; exit 1 when the candidate regresses past the threshold."""
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415


    root = _root()
    da, db = load(_resolve(root, a)), load(_resolve(root, b))
    if da is None or db is None:
        raise typer.BadParameter("not a benchmark result file")
    rows = [r for r in compare(da, db, threshold) if fnmatch.fnmatchcase(r["group"] or "", group)]
    console = Console()
    console.print(f"A: {machine_line(da)}\nB: {machine_line(db)}")
    table = Table("group", "benchmark", "A", "B", "B / A", "verdict")
    for r in rows:
        colour = {"regressed": "red", "improved": "green"}.get(r["verdict"], "white")
        table.add_row(r["group"] or "", r["name"], fmt_time(r["a_s"]), fmt_time(r["b_s"]), f"{r['ratio']:.2f}",
                      f"[{colour}]{r['verdict']}[/]")
    console.print(table)
    bad = [r for r in rows if r["verdict"] == "regressed"]
    console.print(f"{len(rows)} compared, {len(bad)} regressed past {threshold:.0%}")
    if not rows:
        raise typer.Exit(2)
    if bad:
        raise typer.Exit(1)
