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
from verify.shown import safe
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
        typer.echo(f"error: {safe(exc, 2000)}", err=True)
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


def _some(items: list[str], limit: int = 10) -> str:
    """The first ``limit`` items, escaped for the terminal, and how many more."""
    shown = ", ".join(safe(item, 80) for item in items[:limit])
    return shown + (f" … and {len(items) - limit:,} more" if len(items) > limit else "")


def merge(bundle_files: BundlesArg, root: RootOpt = None) -> None:
    """Combine bundles from any machines into evidence/<device>.json, judging every record again.

    Says, per claim, which record it kept and why; exits 1 while a current failure remains in the
    file of a device the bundles brought records of (written now or kept as it was), 2 when a bundle
    is refused (then nothing is written).
    """
    from verify.storage import bundles  # noqa: PLC0415

    settings = settings_for(root)
    report = _or_exit(lambda: bundles.merge(settings, bundle_files))

    def say(text: str, style: str | None = None) -> None:
        console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)

    for name, dev, count in report.bundles:
        say(f"read {safe(name)}: {count} record(s) of {dev}")
    by_bundle: dict[str, list[str]] = {}
    for cid, name in report.unknown:
        by_bundle.setdefault(name, []).append(cid)
    for name, cids in sorted(by_bundle.items()):
        say(f"left out {len(cids):,} record(s) of {safe(name)} that no snippet declares now: {_some(cids)}", "yellow")
    dropped: dict[tuple[str, str], list[str]] = {}
    for cid, dev, name in report.dropped:
        dropped.setdefault((name, dev), []).append(cid)
    for (name, dev), cids in sorted(dropped.items()):
        say(f"stale {len(cids)} record(s) of {safe(name)} on {dev}, made from an older snippet, not merged "
            f"(a current record is kept): {_some(sorted(cids), 5)}", "yellow")
    for cid, dev, why in report.decisions:
        say(f"{cid} on {dev}: {safe(why, 400)}", "yellow")
    if report.updated:
        say(f"{report.updated} record(s) already in evidence/ replaced by this merge's run, with the same outcome")
    for dev, path in sorted(report.written.items()):
        shown = path.relative_to(settings.root) if path.is_relative_to(settings.root) else path
        stale = sum(1 for _, d in report.stale if d == dev)
        failing = sum(1 for _, d, _ in report.failing if d == dev)
        say(f"wrote {shown}: {stale} stale (made from an older snippet), {failing} failing")
    for dev in report.unchanged:
        failing = sum(1 for _, d, _ in report.failing if d == dev)
        say(f"left evidence/{dev}.json as it was: it kept each of its records over the bundles' ({failing} failing)")
    if report.missing:
        say(f"no record of {len(report.missing)} claim(s) on any device: {_some(report.missing)} "
            "(a shard missing from the merge?)", "yellow")
    for cid, dev, message in report.failing:
        say(f"failing {cid} on {dev}: {safe(message, 400)}", "red")
    if report.failing:
        say(f"a failure remains: {len(report.failing)} current record(s) fail (exit 1)", "red")
        raise typer.Exit(1)
    if report.written or report.unchanged:
        say("no failure remains in the bundles' device files")


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
    from verify.storage import edge, rekey, schema  # noqa: PLC0415

    settings = settings_for(root)
    try:  # a regular file, capped while read: a FIFO or /dev/zero is refused, not waited on or read forever
        is_bench = "benchmarks" in json.loads(edge.read_bytes(file, str(file), schema.MAX_FILE_BYTES))
    except (OSError, ValueError, ClaimError) as exc:
        typer.echo(f"error: {safe(exc if isinstance(exc, ClaimError) else f'{file}: {exc}', 2000)}", err=True)
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
