"""``verify bench``: run the benchmarks, show stored results, compare two result files."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated

import typer

from verify.bench import compare as cmp
from verify.bench import run as bench_run
from verify.bench import store
from verify.cli.common import RootOpt, settings_for
from verify.core.units import fmt_rate, fmt_time

bench_app = typer.Typer(help="Benchmarks: run them, show stored results, compare two result files.",
                        no_args_is_help=True, add_completion=False)


def _resolve(bench_dir: Path, name: str) -> Path:
    """A result file given as a path or as a device key under ``benchmarks/``."""
    path = Path(name)
    if not path.suffix:
        path = bench_dir / f"{name}.json"
    if not path.is_file():
        raise typer.BadParameter(f"no benchmark results at {name!r}")
    return path


@bench_app.command("run")
def run_cmd(
    root: RootOpt = None,
    force: Annotated[bool, typer.Option(help="re-run every benchmark file, stale or not")] = False,
    file: Annotated[list[str], typer.Option("--file", help="only these benchmark files (name or glob)")] = [],  # noqa: B006
    threads: Annotated[int, typer.Option(help="torch CPU threads (0: torch's default)")] = 0,
    out: Annotated[str, typer.Option(help="write here instead of benchmarks/<device>.json")] = "",
    keep_going: Annotated[bool, typer.Option(help="exit 0 when a benchmark fails: report it and go on "
                                                  "(what make site and make serve do)")] = False,
) -> None:
    """Run the benchmarks whose results are missing or stale on this device, and store them."""
    settings = settings_for(root)
    path, rc, ran = bench_run.run(settings, force=force, files=file, threads=threads or None,
                                  out=Path(out) if out else None)
    if not ran:
        shown = path.relative_to(settings.root) if path.is_relative_to(settings.root) else path
        typer.echo(f"{shown}: every benchmark is current")
    else:
        typer.echo(f"stored {len(ran)} benchmark file(s) in {path}")
    if rc and keep_going:
        typer.echo(f"benchmarks failed (pytest exit {rc}): their results stay marked stale and the site is built "
                   "anyway; `verify bench run` alone shows the failure", err=True)
    elif rc:
        raise typer.Exit(rc)


@bench_app.command("show")
def show_cmd(device: Annotated[str, typer.Option(help="device key (default: every stored device)")] = "",
             root: RootOpt = None) -> None:
    """Print stored results with their freshness, without running anything."""
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    settings = settings_for(root)
    console = Console()
    for key, data in store.load_all(settings).items():
        if device and key != device:
            continue
        state = store.freshness(settings, data)
        console.print(f"[bold]{key}[/]: {cmp.machine_line(data)}")
        console.print("  " + ", ".join(f"{Path(f).name}: {s}" for f, s in state.items()))
        table = Table("group", "benchmark", "median", "spread", "achieved", "of limit")
        for b in data.benchmarks:
            e = b.info
            table.add_row(b.group or "", b.name, fmt_time(b.per_call), f"{e.get('spread', 0):.0%}",
                          fmt_rate(e), f"{e['fraction']:.0%}" if "fraction" in e else "")
        console.print(table)


@bench_app.command("compare")
def compare_cmd(
    a: Annotated[str, typer.Argument(help="baseline: result file or device key")],
    b: Annotated[str, typer.Argument(help="candidate: result file or device key")],
    threshold: Annotated[float, typer.Option(help="relative slow-down that counts as a regression")] = 0.1,
    group: Annotated[str, typer.Option(help="only benchmarks of this group (glob)")] = "*",
    root: RootOpt = None,
) -> None:
    """Compare two result files; exit 1 when the candidate regresses past the threshold."""
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    bench_dir = settings_for(root).bench_dir
    da, db = store.load(_resolve(bench_dir, a)), store.load(_resolve(bench_dir, b))
    if da is None or db is None:
        raise typer.BadParameter("not a benchmark result file")
    rows = [r for r in cmp.compare(da, db, threshold) if fnmatch.fnmatchcase(r.group or "", group)]
    console = Console()
    console.print(f"A: {cmp.machine_line(da)}\nB: {cmp.machine_line(db)}")
    table = Table("group", "benchmark", "A", "B", "B / A", "verdict")
    for r in rows:
        colour = {"regressed": "red", "improved": "green"}.get(r.verdict, "white")
        table.add_row(r.group or "", r.name, fmt_time(r.a_s), fmt_time(r.b_s), f"{r.ratio:.2f}",
                      f"[{colour}]{r.verdict}[/]")
    console.print(table)
    bad = [r for r in rows if r.verdict == "regressed"]
    console.print(f"{len(rows)} compared, {len(bad)} regressed past {threshold:.0%}")
    if not rows:
        raise typer.Exit(2)
    if bad:
        raise typer.Exit(1)
