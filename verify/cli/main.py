"""The project's one console script: ``verify``.

Heavy modules are imported inside the commands, so ``verify quiz`` starts without torch.
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from verify.cli.common import RootOpt, selector, settings_for
from verify.settings import Settings, SettingsError
from verify.shown import markup_safe, safe

app = typer.Typer(help="Run the knowledge base's claims, inspect their evidence, practise its questions.",
                  no_args_is_help=True, add_completion=False)
console = Console()

DeviceOpt = Annotated[str, typer.Option(help="any | cpu | cuda: keep claims that need (or do not need) CUDA")]


def _check_filters(settings: Settings, ids: list[str], question: str | None) -> None:
    from verify.storage import scan  # noqa: PLC0415

    reg = scan.load_registry(settings)
    for problem in reg.problems:
        console.print(problem.line(), style="red", markup=False, highlight=False, soft_wrap=True)
    for pat in ids:
        if not any(fnmatch.fnmatchcase(cid, pat) for cid in reg.claims):
            raise typer.BadParameter(f"no claim matches {pat!r} in {settings.root} (try `verify list`)",
                                     param_hint="--id")
    questions = sorted({s.question for s in reg.claims.values()})
    if question and question not in questions:
        raise typer.BadParameter(f"unknown question {question!r} in {settings.root}; known: "
                                 f"{', '.join(questions) or 'none'}", param_hint="--question")


@app.command()
def run(
    ids: Annotated[list[str], typer.Option("--id", help="claim id or glob (repeatable)")] = [],  # noqa: B006
    question: Annotated[str | None, typer.Option(help="only this question's claims")] = None,
    device: DeviceOpt = "any",
    force: Annotated[bool, typer.Option(help="run even when cached evidence matches")] = False,
    jobs: Annotated[int, typer.Option(help="parallel workers for ordinary claims (0: automatic)")] = 0,
    shard: Annotated[str | None, typer.Option(help="K/N: only shard K of N, balanced by snippets/durations.json; "
                                              "writes a bundle")] = None,
    bundle: Annotated[Path | None, typer.Option(help="write this run's evidence bundle here, for `verify merge` "
                                                "(default with --shard: .cache/bundles/shard-K-of-N.json)")] = None,
    root: RootOpt = None,
) -> None:
    """Run claims (cached ones are reused) and print a verdict for each."""
    from verify.cli import team  # noqa: PLC0415
    from verify.cli.progress import RunProgress  # noqa: PLC0415
    from verify import errors  # noqa: PLC0415
    from verify.running import engine  # noqa: PLC0415
    from verify.storage import scan  # noqa: PLC0415

    settings = settings_for(root)
    _check_filters(settings, ids, question)
    select = selector(ids, question, device)
    durations = team.durations_or_exit(settings)
    part = team.shard_selection(settings, shard, select, durations, console) if shard else None
    show = RunProgress(console, durations, scan.load_registry(settings))
    try:
        out = engine.verify(settings, select=part.select if part else select, jobs=jobs or None, force=force,
                            progress=show)
    finally:
        show.close()
    counts: dict[str, int] = {}
    for record in out.local.values():
        counts[record.outcome.value] = counts.get(record.outcome.value, 0) + 1
    console.print(f"{len(out.local)} claim(s), {len(out.ran)} run now, {len(out.local) - len(out.ran)} from "
                  f"cache or skipped, in {out.seconds:.1f}s: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if part or bundle:
        team.write_bundle(settings, out, part, bundle, console)
    if out.failures:
        console.print(errors.summary(out.failures), style="red", markup=False, highlight=False, soft_wrap=True)
        for cid, record in sorted(out.local.items()):
            if record.bad and record.traceback:  # an unexpected exception: where in the snippet it came from
                lines = (safe(line, 2000) for line in record.traceback.rstrip().splitlines())  # a file's text
                console.print(f"\n{cid}:\n" + "\n".join(lines), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


@app.command("list")
def list_claims(question: Annotated[str | None, typer.Option(help="only this question's claims")] = None,
                root: RootOpt = None) -> None:
    """List every claim with its question, kind and needs (reads sources only, no torch)."""
    from verify.storage import scan  # noqa: PLC0415

    reg = scan.load_registry(settings_for(root))
    table = Table("id", "question", "kind", "needs", "snippet")
    for spec in sorted(reg.claims.values(), key=lambda s: s.id):
        if question and spec.question != question:
            continue
        table.add_row(spec.id, spec.question, spec.kind, ",".join(spec.needs) or "any", f"{spec.snippet}:{spec.line}")
    console.print(table)
    for problem in reg.problems:
        console.print(problem.line(), style="red", markup=False)
    if reg.problems:
        raise typer.Exit(1)


@app.command()
def status(question: Annotated[str | None, typer.Option(help="only this question's claims")] = None,
           root: RootOpt = None) -> None:
    """Show what each claim's evidence says now, without running anything."""
    from verify.core import states  # noqa: PLC0415
    from verify.running import engine  # noqa: PLC0415

    settings = settings_for(root)
    _check_filters(settings, [], question)
    ledger = engine.verify(settings, run=False)
    table = Table("id", "status here", "elsewhere", "observed / reason")
    for spec in sorted(ledger.registry.claims.values(), key=lambda s: s.id):
        if question and spec.question != question:
            continue
        record = ledger.local.get(spec.id)
        here = ledger.status(spec.id)
        others = ", ".join(f"{dev}: {st}" for dev, st in ledger.remote_statuses(spec.id).items()) or "-"
        detail = record.message if record else "not run yet (verify run)"
        colour = states.get(here).colour
        table.add_row(spec.id, f"[{colour}]{here}[/]", others, markup_safe(detail, 80))  # a file's text: no markup
    console.print(table)


@app.command()
def clear(ids: Annotated[list[str], typer.Option("--id", help="only these claims (globs)")] = [],  # noqa: B006
          all_caches: Annotated[bool, typer.Option("--all", help="empty the whole cache folder: rendered pages, "
                                                   "plots, parse, probe and compiler caches too")] = False,
          root: RootOpt = None) -> None:
    """Delete cached evidence, so the next run executes the claims again (--all: every cache)."""
    from verify.storage import cache, scan  # noqa: PLC0415

    settings = settings_for(root)
    if all_caches:
        _clear_all(settings, ids)
        return
    targets = None
    if ids:
        _check_filters(settings, ids, None)
        targets = [c for c in scan.load_registry(settings).claims if any(fnmatch.fnmatchcase(c, p) for p in ids)]
    removed = cache.clear(settings.cache_dir, targets)
    console.print(f"removed {removed} cached evidence file(s)")


def _clear_all(settings: Settings, ids: list[str]) -> None:
    from verify.running import guard  # noqa: PLC0415
    from verify.storage import cache  # noqa: PLC0415

    if ids:
        raise typer.BadParameter("--all empties every cache: it takes no --id", param_hint="--all")
    try:
        cache.clearable(settings)
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    removed = 0
    if settings.cache_dir.is_dir():
        with guard.exclusive(settings, on_wait=console.print):  # not under a running verification; its lock stays
            removed = cache.clear_all(settings, {guard.LOCK})
    console.print(f"removed {removed} cached file(s): {settings.cache_dir} holds no cache now",
                  markup=False, highlight=False)


@app.command()
def record(
    only_cuda: Annotated[bool, typer.Option(help="record only the claims that need CUDA")] = False,
    jobs: Annotated[int, typer.Option(help="parallel workers for ordinary claims (0: automatic)")] = 0,
    root: RootOpt = None,
) -> None:
    """Run claims here and write them to evidence/<device>.json, to commit for other builds."""
    from verify.running import record as rec  # noqa: PLC0415

    raise typer.Exit(rec.run(settings_for(root), only_cuda, jobs or None))


from verify.cli import serve as _serve  # noqa: E402  (serve, report)
from verify.cli import team as _team  # noqa: E402  (merge, shards, durations)
from verify.cli.bench import bench_app  # noqa: E402  (light: torch is imported only when a benchmark runs)
from verify.cli.stress import stress as _stress  # noqa: E402
from verify.cli.quiz import quiz_app  # noqa: E402  (light: typer and rich only; `verify quiz anki` exports Anki)
from verify.cli.judge import judge_app  # noqa: E402  (light: the judge and torch are imported when a command runs)

_team.register(app)
app.command("serve")(_serve.serve)
app.command("report")(_serve.report)
app.command("stress")(_stress)
app.add_typer(quiz_app, name="quiz")
app.add_typer(bench_app, name="bench")
app.add_typer(judge_app, name="judge")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
