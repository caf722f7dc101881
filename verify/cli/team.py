"""Running it on more than one machine: ``verify merge``, ``verify shards``, ``verify durations``,
and the shard and bundle part of ``verify run``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from verify.cli.common import RootOpt, selector, settings_for
from verify.errors import ClaimError
from verify.core.registry import ClaimSpec
from verify.core.units import fmt_eta as fmt_time
from verify.running import shards
from verify.settings import Settings

if TYPE_CHECKING:
    from verify.core.ledger import Ledger

console = Console()
BundlesArg = Annotated[list[Path], typer.Argument(help="bundle files (verify run --bundle, or evidence/<device>.json)")]


T = TypeVar("T")


def _or_exit(action: Callable[[], T]) -> T:
    try:
        return action()
    except ClaimError as exc:  # a bad file: name it, change nothing
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def durations_or_exit(settings: Settings) -> shards.Durations:
    return _or_exit(lambda: shards.Durations.load(settings))


@dataclass(frozen=True)
class Part:
    """Shard K of N of one selection."""

    k: int
    n: int
    plan: shards.Plan
    select: Callable[[ClaimSpec], bool]


def _plan(settings: Settings, n: int, select: Callable[[ClaimSpec], bool] | None,
          durations: shards.Durations) -> tuple[shards.Plan, dict[str, float]]:
    from verify.storage import scan  # noqa: PLC0415

    weights = shards.weights(scan.load_registry(settings), durations, select)
    return shards.plan(weights, n), weights


def shard_selection(settings: Settings, text: str, select: Callable[[ClaimSpec], bool],
                    durations: shards.Durations, out: Console) -> Part:
    try:
        k, n = shards.parse(text)
    except ClaimError as exc:
        raise typer.BadParameter(str(exc), param_hint="--shard") from None
    plan, weights = _plan(settings, n, select, durations)
    files = plan.files(k)
    out.print(f"shard {k}/{n}: {len(files)} of {len(weights)} snippet files, expected to take about "
              f"{fmt_time(plan.loads[k - 1])} (the longest shard is {plan.balance:.2f}x the mean)", highlight=False)
    return Part(k, n, plan, lambda spec: select(spec) and spec.snippet in files)


def write_bundle(settings: Settings, verification: Ledger, part: Part | None, path: Path | None,
                 out: Console) -> Path:
    from verify.running.probe import now  # noqa: PLC0415
    from verify.storage.git import git_commit  # noqa: PLC0415
    from verify.storage import bundles  # noqa: PLC0415

    if path is None:
        assert part is not None
        path = settings.cache_dir / "bundles" / f"shard-{part.k}-of-{part.n}.json"
    bundles.write(path, verification.probe, verification.local, shard=(part.k, part.n) if part else None,
                  file_seconds=verification.file_seconds, wall_s=verification.seconds,
                  git_commit=git_commit(settings.root), created=now(), root=settings.root)
    out.print(f"bundle: {path} ({len(verification.local)} records)", highlight=False)
    return path


def merge(bundle_files: BundlesArg, root: RootOpt = None) -> None:
    """Combine bundles from any machines into evidence/<device>.json, judging every record again."""
    from verify.storage import bundles  # noqa: PLC0415

    settings = settings_for(root)
    report = _or_exit(lambda: bundles.merge(settings, bundle_files))
    for name, dev, count in report.bundles:
        console.print(f"read {name}: {count} record(s) of {dev}", highlight=False)
    for cid, name in report.unknown:
        console.print(f"[yellow]left out[/] {cid} (from {name}): no snippet declares it now", highlight=False)
    dropped: dict[tuple[str, str], list[str]] = {}
    for cid, dev, name in report.dropped:
        dropped.setdefault((name, dev), []).append(cid)
    for (name, dev), cids in sorted(dropped.items()):
        console.print(f"[yellow]stale[/] {len(cids)} record(s) of {name} on {dev}, made from an older snippet, not "
                      f"merged (a current record is kept): {', '.join(sorted(cids)[:5])}{' …' if len(cids) > 5 else ''}",
                      highlight=False, soft_wrap=True)
    for cid, dev, loser in report.replaced:
        console.print(f"[yellow]twice[/] {cid} on {dev}: kept the current record (of two current ones, the failure), not the one of {loser}",
                      highlight=False)
    for dev, path in sorted(report.written.items()):
        shown = path.relative_to(settings.root) if path.is_relative_to(settings.root) else path
        stale = sum(1 for _, d in report.stale if d == dev)
        failing = sum(1 for _, d, _ in report.failing if d == dev)
        console.print(f"wrote {shown}: {stale} stale (made from an older snippet), {failing} failing", highlight=False)
    if report.missing:
        console.print(f"[yellow]no record[/] of {len(report.missing)} claim(s) on any device: "
                      f"{', '.join(report.missing[:10])}{' …' if len(report.missing) > 10 else ''} "
                      "(a shard missing from the merge?)", highlight=False, soft_wrap=True)
    for cid, dev, message in report.failing:
        console.print(f"[red]failing[/] {cid} on {dev}: {message}", highlight=False, soft_wrap=True)
    if report.failing:
        raise typer.Exit(1)


def shards_cmd(count: Annotated[int, typer.Argument(min=1, help="how many shards")],
               device: Annotated[str, typer.Option(help="any | cpu | cuda, as for verify run")] = "any",
               root: RootOpt = None) -> None:
    """Show how `verify run --shard K/N` splits the claims: files, claims and expected time per shard."""
    from verify.storage import scan  # noqa: PLC0415

    settings = settings_for(root)
    durations = durations_or_exit(settings)
    select = selector([], None, device)
    plan, _ = _plan(settings, count, select, durations)
    reg = scan.load_registry(settings)
    table = Table("shard", "files", "claims", "expected time")
    for k, files in enumerate(plan.shards, 1):
        claims = sum(1 for s in reg.claims.values() if s.snippet in files and select(s))
        table.add_row(f"{k}/{count}", str(len(files)), str(claims), fmt_time(plan.loads[k - 1]))
    console.print(table)
    console.print(f"the longest shard is {plan.balance:.2f}x the mean; durations recorded on "
                  f"{durations.source or 'nothing yet (typical values)'}", highlight=False)


def durations_cmd(bundle_files: BundlesArg, root: RootOpt = None) -> None:
    """Rewrite snippets/durations.json from the claims and snippet files these bundles ran."""
    from verify.storage import recorded  # noqa: PLC0415

    settings = settings_for(root)
    read = _or_exit(lambda: [recorded.read(p, str(p)) for p in bundle_files])
    records = [r for f in read for r in f.claims.values()]
    files: dict[str, float] = {}
    for f in read:
        files.update(f.extra.get("files") or {})
    machine = read[0].machine if read else {}
    path = shards.record(settings, records, files, machine)
    console.print(f"wrote {path.relative_to(settings.root)}: {len(records)} claim(s), {len(files)} whole file(s)",
                  highlight=False)


def rekey_cmd(file: Annotated[Path, typer.Argument(help="a bundle, or benchmark results, keyed the old way")],
              at: Annotated[str, typer.Option("--at", help="the commit it ran at (a bundle's git_commit)")],
              out: Annotated[Path, typer.Option("--out", "-o", help="where to write the re-keyed file")],
              root: RootOpt = None) -> None:
    """Key an older bundle's records (or benchmark results) by their measuring code, at the commit they ran at."""
    import json  # noqa: PLC0415

    from verify.bench import store  # noqa: PLC0415
    from verify.storage import rekey  # noqa: PLC0415

    settings = settings_for(root)
    try:
        is_bench = "benchmarks" in json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {file}: {exc}", err=True)
        raise typer.Exit(2) from None
    if is_bench:
        moved, left = _or_exit(lambda: store.rekey(settings, file, at, out))
        what = "benchmark file(s)"
    else:
        moved, left = _or_exit(lambda: rekey.rekey(settings.root, file, at, out))
        what = "record(s)"
    console.print(f"wrote {out}: {moved} {what} re-keyed, {left} left as they were (stale, or never current)",
                  highlight=False)


def register(app: typer.Typer) -> None:
    app.command("merge")(merge)
    app.command("shards")(shards_cmd)
    app.command("durations")(durations_cmd)
    app.command("rekey")(rekey_cmd)
