"""Verify claims: take what the cache holds, run the rest, judge, and collect every failure.

This is the one entry point that the site, the CLI and pytest share, so all three see the same
evidence for the same snippet hash.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from verify.core import evidence, needs
from verify.errors import Failure
from verify.core.ledger import Ledger
from verify.core.records import Evidence, Machine, Outcome, Provenance, WorkerResult
from verify.core.registry import ClaimSpec, Registry
from verify.running import guard, runner
from verify.running.probe import now, probe
from verify.settings import Settings
from verify.storage import recorded, scan
from verify.storage.cache import EvidenceCache, env_key
from verify.storage.git import git_commit

log = logging.getLogger("mkdocs.verify")


def unmet_need(spec: ClaimSpec, machine: Machine) -> str | None:
    """Why this claim cannot run on this machine, or ``None`` when it can."""
    return needs.unmet(spec.needs, spec.min_torch, machine)


def provenance(machine: Machine, commit: str, threads: int | None = None) -> Provenance:
    """The machine's facts, this commit and now; ``threads``: what the claim ran with (else the probe's)."""
    prov = Provenance.of_machine(machine, git_commit=commit, date=now())
    return prov if threads is None else replace(prov, threads=threads)


def _recorded(settings: Settings, reg: Registry, info: Machine
              ) -> tuple[dict[str, Evidence], dict[str, dict[str, Evidence]]]:
    """(records of this very environment, records of other devices), all judged again.

    A record counts as this machine's when it was made on the same device key with the same
    torch, build and Python: the environment the evidence cache is keyed by.
    """
    here: dict[str, Evidence] = {}
    remote: dict[str, dict[str, Evidence]] = {}
    mine = env_key(info)
    for dev, records in recorded.load_all(settings).items():
        for cid, record in records.items():
            if dev == info.device_key and env_key(record.provenance) == mine:
                here[cid] = evidence.rejudge_stored(reg, record)
            else:
                remote.setdefault(dev, {})[cid] = evidence.rejudge_stored(reg, record)
    return here, remote


class Progress(Protocol):
    """What a command shows while claims run."""

    def start(self, specs: list[ClaimSpec]) -> None: ...

    def done(self, claim_id: str, record: Evidence) -> None: ...

    def waiting(self, message: str) -> None: ...


def verify(
    settings: Settings,
    *,
    select: Callable[[ClaimSpec], bool] | None = None,
    jobs: int | None = None,
    force: bool = False,
    run: bool = True,
    live: bool = False,
    progress: Progress | None = None,
    deadline: float | None = None,
) -> Ledger:
    """Evidence for every selected claim; failures collected, never raised one by one.

    A claim's evidence comes from the cache, else from running it; a build that runs nothing
    (``run=False``: the site job of a sharded run) takes what ``verify merge`` recorded under
    ``evidence/`` for this very environment, as it is: a pass, a failure, or stale. Running
    always wins over a record, so a build that may run claims shows what ran on it.

    ``deadline`` (``time.monotonic()``): no claim starts after it and running ones stop; those
    are listed in ``left`` with no record (``verify.running.record`` on a GPU loan).

    ``live`` (``verify serve`` and the builds of its server): this machine's own runs only. A claim
    whose current code last failed here keeps that failure (shown as 失败, not run again until its
    code changes, or ``force``), and no committed record counts as this machine's, even of the same
    environment: until a claim has run here, a page shows other machines' records, labelled with them.
    """
    start = time.monotonic()
    reg = scan.load_registry(settings)
    info = probe(settings)
    cache = EvidenceCache(settings.cache_dir, info)
    commit = git_commit(settings.root)
    here, remote = _recorded(settings, reg, info)
    if live:  # committed records of this environment are another machine's until this one ran them
        for cid, record in here.items():
            remote.setdefault(info.device_key, {})[cid] = record
        here = {}
    local: dict[str, Evidence] = {}
    to_run: dict[str, list[ClaimSpec]] = {}
    runnable: dict[str, int] = {}
    problems: list[Failure] = []
    watch: guard.Guard | None = None
    for spec in reg.claims.values():
        if select and not select(spec):
            continue
        shash = reg.key(spec.id)
        reason = unmet_need(spec, info)
        if reason == needs.NO_TORCH:  # a reader's install: nothing of its own, the committed records speak
            continue
        if reason:
            local[spec.id] = evidence.make(spec, shash, Outcome.SKIPPED, reason, provenance(info, commit))
            continue
        runnable[spec.snippet] = runnable.get(spec.snippet, 0) + 1
        cached = None if force else cache.get(spec.id, shash)
        if cached is not None:
            cached = evidence.rejudge(spec, cached)
            if cached.outcome is not Outcome.PASS:  # a cached pass the current judge rejects: run it again
                cached = None
        if cached is None and live and not force:
            cached = cache.get_failure(spec.id, shash)
            if cached is not None:
                cached = evidence.rejudge(spec, cached)
        if cached is not None:
            local[spec.id] = cached
        elif run:
            to_run.setdefault(spec.snippet, []).append(spec)
        elif spec.id in here:  # merged from bundles: a pass, a failure, or a record of an older snippet
            local[spec.id] = here[spec.id]
    file_seconds: dict[str, float] = {}

    def done(snippet: str, raws: dict[str, WorkerResult], seconds: float) -> None:
        file_seconds[snippet] = file_seconds.get(snippet, 0.0) + seconds
        for spec in to_run[snippet]:
            if spec.id not in raws:  # run in the other batch (ordinary or performance) of this file
                continue
            raw = raws[spec.id]
            outcome, message = evidence.judge(spec, raw)
            prov = provenance(info, commit, raw.threads)
            record = evidence.make(spec, reg.key(spec.id), outcome, message, prov, raw)
            local[spec.id] = record
            written = cache.put(record)
            if written and watch is not None:
                watch.wrote(written)
            if progress:
                progress.done(spec.id, record)

    if to_run:
        count = sum(len(v) for v in to_run.values())
        log.info("verify: running %d claim(s) from %d snippet file(s) on %s", count, len(to_run), info.device_name)

        def make_env(threads: int | None) -> runner.WorkerEnv:
            return runner.WorkerEnv(settings=settings, device=info.device, threads=threads)

        jobs = jobs or settings.jobs or max(1, min(4, os.cpu_count() or 1))
        if progress:
            progress.start([s for specs in to_run.values() for s in specs])
        with guard.exclusive(settings, on_wait=progress.waiting if progress else None):
            swept = runner.sweep_scratch(settings)
            if swept:
                log.info("verify: removed %d scratch folder(s) a killed run left behind", swept)
            watch = guard.Guard(settings)
            runner.run_many(to_run, make_env, jobs=jobs, on_done=done, deadline=deadline, compiling=reg.compiles)
            tampered, changed = watch.check()
        if tampered:
            problems.append(Failure("-", settings.cache_dir.as_posix(), "a claim changed the project cache while claims "
                                    f"ran ({', '.join(tampered[:8])}); those files were deleted and are computed "
                                    "again. Claims write only into ctx.workdir"))
        if changed:
            log.warning("verify: files of the checkout changed while claims ran: %s (a claim must write only into "
                        "ctx.workdir)", ", ".join(changed[:8]))
    failures = list(reg.problems) + problems
    for cid, record in sorted(local.items()):
        if record.bad and evidence.is_current(reg, record):
            failures.append(Failure(cid, record.snippet, f"{record.outcome}: {record.message}", snippet=record.snippet))
    for dev, records in sorted(remote.items()):
        for cid, record in sorted(records.items()):
            declared = reg.claims.get(cid)
            if declared and record.bad and record.snippet_hash == reg.key(cid):
                failures.append(Failure(cid, f"evidence/{dev}.json", f"recorded on {record.provenance.device_name or dev}: "
                                        f"{record.outcome}: {record.message}", snippet=declared.snippet))
    ran = [s.id for specs in to_run.values() for s in specs if s.id in local]
    left = sorted(s.id for specs in to_run.values() for s in specs if s.id not in local)  # cut by the deadline
    whole = {f: round(t, 2) for f, t in file_seconds.items()
             if len(to_run[f]) == runnable[f] and all(s.id in local for s in to_run[f])}
    return Ledger(settings, reg, info, local, remote, failures, ran, time.monotonic() - start, whole, left)
