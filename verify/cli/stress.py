"""``verify stress``: measured claims under seeds, thread counts and kernel paths, and the room their bounds keep."""

from __future__ import annotations

import fnmatch
import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from verify.cli.common import RootOpt, settings_for

console = Console(soft_wrap=True)


def stress(
    ids: Annotated[list[str], typer.Argument(help="claim ids or globs (default: the measured claims whose stress "
                                             "record for this machine is missing or stale)")] = None,  # type: ignore[assignment]
    every: Annotated[bool, typer.Option("--all", help="every measured claim that can run here")] = False,
    seeds: Annotated[int, typer.Option(help="draws of each claim's random inputs (at least 3 for a record)")] = 3,
    rows: Annotated[list[str], typer.Option("--row", help="only these rows of the matrix (repeatable; base is "
                                            "always run)")] = [],  # noqa: B006
    write: Annotated[bool, typer.Option(help="merge the measured claims' records into "
                                        "evidence/stress/<device>.json")] = True,
    report: Annotated[Path | None, typer.Option(help="also write every finding here, as JSON")] = None,
    root: RootOpt = None,
) -> None:
    """Run measured claims under the stress matrix and report each bound's worst room; exit 1 below 25%."""
    from verify.core import room  # noqa: PLC0415
    from verify.core import stress as core  # noqa: PLC0415
    from verify.running import engine  # noqa: PLC0415
    from verify.running import stress as runs  # noqa: PLC0415
    from verify.running.probe import probe  # noqa: PLC0415
    from verify.storage import scan  # noqa: PLC0415
    from verify.storage import stress as store  # noqa: PLC0415

    settings = settings_for(root)
    reg = scan.load_registry(settings)
    machine = probe(settings)
    if machine.device != "cpu":
        typer.echo("error: verify stress varies CPU kernel paths; run it on a CPU build of torch", err=True)
        raise typer.Exit(2)
    known = {r.name for r in core.ROWS}
    bad_rows = [r for r in rows if r not in known]
    if bad_rows:
        raise typer.BadParameter(f"unknown row(s) {bad_rows}; rows: {', '.join(sorted(known))}", param_hint="--row")
    if seeds < 1:
        raise typer.BadParameter("at least one seed", param_hint="--seeds")
    ids = ids or []
    for pat in ids:
        if not any(fnmatch.fnmatchcase(cid, pat) for cid in reg.claims):
            raise typer.BadParameter(f"no claim matches {pat!r} (try `verify list`)", param_hint="IDS")
    candidates = {s.id: s for s in core.stressable(reg)}
    if ids:  # named claims: any with an inequality bound, measured or not (to find out whether it is)
        chosen = [s for s in reg.claims.values() if room.bounded(s.expect)
                  and any(fnmatch.fnmatchcase(s.id, p) for p in ids)]
    elif every:
        chosen = list(candidates.values())
    else:
        path = store.path_for(settings, machine.device_key)
        have = store.read(path, str(path)).claims if path.exists() else {}
        chosen = [s for s in candidates.values() if s.id not in have or have[s.id].key != reg.key(s.id)]
    skipped = {s.id: why for s in chosen if (why := engine.unmet_need(s, machine))}
    chosen = sorted((s for s in chosen if s.id not in skipped), key=lambda s: (s.snippet, s.line))
    for cid, why in sorted(skipped.items()):
        console.print(f"[dim]{cid}: not here ({why})[/dim]", highlight=False)
    if not chosen:
        console.print("nothing to stress: every measured claim has a current stress record for "
                      f"{machine.device_key}" if not (ids or every) else "no claim to stress here")
        return
    inherited = sorted(v for v in core.ROW_VARIABLES if v in settings.environ)
    if inherited:  # the base row would not be this machine's default
        console.print(f"[yellow]warning[/yellow]: {', '.join(inherited)} set in this shell: the base row runs with "
                      "it, and a row that sets it again changes nothing; unset it for a true base", highlight=False)
    selected = tuple(r for r in core.ROWS if not rows or r.name in rows or r.name == core.ROWS[0].name)
    began = time.monotonic()
    console.print(f"stressing {len(chosen)} claims on {machine.device_name} ({machine.device_key}), "
                  f"{len(selected)} rows × {seeds} seeds")
    entries, checks = runs.stress(settings, reg, machine, chosen, tuple(range(seeds)), selected,
                                  say=lambda line: console.print(line, highlight=False, markup=False))
    seconds = time.monotonic() - began
    findings = [f for s in chosen for f in core.judge(s, entries[s.id].runs)]
    worst = sorted(core.worst(findings).values(), key=lambda f: f.room)
    tight = [f for f in worst if f.tight]
    variants = len({v for e in entries.values() for v in e.runs})
    console.print(f"\n{len(chosen)} claims, {variants} variants, {seconds:.0f} s. "
                  f"Dropped rows: {', '.join(c.row.name for c in checks if not c.kept) or 'none'}.")
    console.print("The ten smallest margins:")
    for f in worst[:10]:
        console.print("  " + f.line(), highlight=False, markup=False)
    if write:
        after = scan.load_registry(settings)  # a claim edited while it ran: its record would name code that did not run
        edited = sorted(cid for cid, e in entries.items() if after.keys.get(cid) != e.key)
        if edited:
            console.print(f"[yellow]not written[/yellow] (their code changed during the run): {', '.join(edited)}")
        keep = {cid: e for cid, e in entries.items() if room.is_measured(reg.claims[cid].kind) and seeds >= 3
                and not rows and cid not in edited}
        if keep:
            rows_seen = {c.row.name: {"kept": c.kept, "saw": c.saw} for c in checks}
            path = store.write(settings, machine.device_key, machine.to_json(), rows_seen, keep)
            console.print(f"wrote {len(keep)} claims' stress records to {path.relative_to(settings.root)}")
    if report:
        report.write_text(json.dumps({"seconds": round(seconds, 1), "rows": {c.row.name: [c.kept, c.saw] for c in checks},
                                      "findings": [f.__dict__ for f in findings],
                                      "entries": {cid: e.to_json() for cid, e in entries.items()}},
                                     ensure_ascii=False, indent=1, default=str))
    if tight:
        console.print(f"\n[red]{len(tight)} bounds keep less than {room.ROOM:.0%} room under some variant:[/red]")
        for f in tight:
            console.print("  " + f.line(), highlight=False, markup=False)
        raise typer.Exit(1)
