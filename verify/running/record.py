"""Record this machine's evidence into ``evidence/<device>.json``, for other builds to show.

Meant for a GPU machine that has torch (2.11 or later) and nothing else of the project's
dependencies: it needs only the standard library and torch, and no network::

    python -m verify.running.record              # every claim
    python -m verify.running.record --only-cuda  # only the claims that need CUDA (a GPU loan)

Each claim's record is written as soon as it exists, so a run cut short keeps what it did.
It carries on past failures and names them at the end; ``--deadline S`` starts no claim after S
seconds and stops the ones still running (they get no record, and are listed). It exits non-zero
when a claim failed or the deadline left claims unrun, after writing what it recorded.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from verify.core.ledger import Ledger
from verify.core.records import Evidence, Machine
from verify.core.registry import ClaimSpec
from verify.running import engine
from verify.settings import Settings
from verify.storage import recorded
from verify.storage.fs import copy_into


class Writer:
    """Implements :class:`verify.running.engine.Progress`: each finished claim is written at once."""

    def __init__(self, settings: Settings, machine: Machine, also: Path | None = None,
                 echo: Callable[[str], None] = print):
        self.settings, self.machine, self.also, self.echo = settings, machine, also, echo
        self.records: dict[str, Evidence] = {}
        self.path = settings.evidence_dir / f"{machine.device_key}.json"

    def start(self, specs: list[ClaimSpec]) -> None:
        self.echo(f"recording {len(specs)} claim(s) on {self.machine.device_name} into {self.path.name}")

    def waiting(self, message: str) -> None:
        self.echo(message)

    def done(self, claim_id: str, record: Evidence) -> None:
        self.records[claim_id] = record
        self.path = recorded.write(self.settings, self.machine.device_key, self.records, self.machine.recorded())
        if self.also is not None:  # a copy where the loan's files come back from, kept current
            copy_into(self.path, self.also)
        self.echo(f"  {record.outcome.value:7} {claim_id} ({record.duration_s or 0:.1f} s)"
                  + (f": {record.message[:200]}" if record.bad else ""))


def record(settings: Settings, only_cuda: bool = False, jobs: int | None = None, deadline: float | None = None,
           also: Path | None = None, echo: Callable[[str], None] = print) -> tuple[Path, Ledger]:
    from verify.running.probe import probe  # noqa: PLC0415

    select = (lambda spec: "cuda" in spec.needs) if only_cuda else None
    writer = Writer(settings, probe(settings), also, echo)
    out = engine.verify(settings, select=select, jobs=jobs, force=True, progress=writer, deadline=deadline)
    # the skipped ones (a need not met) were never run, so the writer has not seen them
    path = recorded.write(settings, out.probe.device_key, out.local, out.probe.recorded())
    if also is not None:
        copy_into(path, also)
    return path, out


def summary(path: Path, out: Ledger, seconds: float) -> str:
    counts: dict[str, int] = {}
    for rec in out.local.values():
        counts[rec.outcome.value] = counts.get(rec.outcome.value, 0) + 1
    text = (f"wrote {path}: {len(out.local)} claims on {out.probe.device_name} (torch {out.probe.torch}) "
            f"in {seconds:.0f}s: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if out.left:
        text += f"; not run before the deadline: {len(out.left)} ({', '.join(out.left)})"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=None,
                        help="the checkout (default: the nearest mkdocs.yml upwards from here)")
    parser.add_argument("--only-cuda", action="store_true", help="record only the claims that need CUDA")
    parser.add_argument("--jobs", type=int, default=None, help="parallel workers for ordinary claims")
    parser.add_argument("--deadline", type=float, default=None, help="seconds after which no claim runs")
    args = parser.parse_args(argv)
    return run(Settings.for_command(args.root), args.only_cuda, args.jobs, args.deadline)


def run(settings: Settings, only_cuda: bool = False, jobs: int | None = None, deadline_s: float | None = None) -> int:
    """Record, print the summary and each failure; the exit status (``verify record``, ``main``)."""
    start = time.monotonic()
    deadline = start + deadline_s if deadline_s else None
    path, out = record(settings, only_cuda, jobs, deadline)
    print(summary(path, out, time.monotonic() - start))
    for failure in out.failures:
        print("  - " + failure.line(), file=sys.stderr)
    return 1 if out.failures or out.left else 0


if __name__ == "__main__":
    sys.exit(main())
