"""Verify claims: take what the cache holds, run the rest, judge, and collect every failure.

This is the one entry point that the site, the CLI and pytest share, so all three see the same
evidence for the same snippet hash.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from verify.core import binding, evidence
from verify.core.errors import Failure
from verify.core.records import Evidence, Outcome, Provenance, WorkerResult
from verify.core.registry import ClaimSpec, Registry
from verify.running import guard, runner
from verify.running.probe import git_commit, now, probe
from verify.settings import Settings
from verify.storage import recorded, scan
from verify.storage.cache import EvidenceCache

log = logging.getLogger("mkdocs.verify")


@dataclass
class Verification:
    """What one verification found: every claim's evidence here, and what other machines recorded."""

    settings: Settings
    registry: Registry
    probe: dict[str, Any]
    local: dict[str, Evidence]
    remote: dict[str, dict[str, Evidence]]
    failures: list[Failure] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    seconds: float = 0.0
    _sentences: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def status(self, claim_id: str) -> str:
        return evidence.status_of(self.local.get(claim_id), self.registry.files[self.registry.claims[claim_id].snippet],
                                  local=True)

    def value(self, ref: binding.Ref) -> tuple[str, str, str]:
        """(text, status, where) of one bound value: from this machine's evidence, else from a current
        record of another device (or from the device ``ref`` names). ``"—"`` while nothing observed it;
        :class:`binding.BindError` when the claim or the key does not exist.
        """
        spec = self.registry.claims.get(ref.claim)
        if spec is None:
            raise binding.BindError(f"no snippet declares claim {ref.claim!r}")
        current = self.registry.files[spec.snippet]
        if ref.device and ref.device != self.probe["device_key"]:
            if ref.device not in self.remote:
                raise binding.BindError(f"no evidence is recorded for device {ref.device!r} "
                                        f"(recorded: {', '.join(sorted(self.remote)) or 'none'})")
            record = self.remote[ref.device].get(ref.claim)
            if record is None:
                raise binding.BindError(f"{ref.device} has no record of claim {ref.claim!r}")
            status = evidence.status_of(record, current, local=False)
            return binding.resolve(record.observed, ref.key, ref.spec), status, where(record)
        local = self.local.get(ref.claim)
        status = self.status(ref.claim)
        if local is not None and local.observed and status not in (evidence.STALE, evidence.NOT_RUN):
            return binding.resolve(local.observed, ref.key, ref.spec), status, where(local)
        for _dev, records in sorted(self.remote.items()):  # not observed here: a current record elsewhere
            other = records.get(ref.claim)
            if other is not None and evidence.status_of(other, current, local=False) == evidence.VERIFIED_ELSEWHERE:
                return binding.resolve(other.observed, ref.key, ref.spec), evidence.VERIFIED_ELSEWHERE, where(other)
        return "—", status, ""

    def sentence(self, claim_id: str) -> str:
        """The claim's statement as plain text with its values filled in (the ledger, quiz and cards)."""
        if claim_id not in self._sentences:  # asked by the ledger, the evidence lists, the quiz and the cards
            spec = self.registry.claims[claim_id]
            self._sentences[claim_id] = binding.fill(
                spec.statement, lambda key, fmt: self.value(binding.Ref(claim_id, key, fmt))[0])
        return self._sentences[claim_id]

    def sentences(self) -> dict[str, str]:
        return {cid: self.sentence(cid) for cid in sorted(self.registry.claims)}


def where(record: Evidence) -> str:
    """`` · device · torch · date`` of a record, for a marker's title."""
    prov = record.provenance
    parts = [prov.device_name, f"torch {prov.torch}" if prov.torch else None, (prov.date or "")[:10]]
    return " · " + " · ".join(p for p in parts if p)


def _version_tuple(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split("+")[0].split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


@functools.cache
def _libc() -> str:
    return platform.libc_ver()[0]


def unmet_need(spec: ClaimSpec, info: dict[str, Any]) -> str | None:
    """Why this claim cannot run on this machine, or ``None`` when it can."""
    for need in spec.needs:
        if need == "cuda" and info["device"] != "cuda":
            return "needs CUDA; no GPU on this machine"
        if need in ("g++", "nvcc") and not info["compilers"].get(need):
            return f"needs {need}, which is not on PATH"
        if need == "multicore" and info["cpu_count"] < 2:
            return "needs at least two CPU cores"
        if need == "glibc" and _libc() != "glibc":
            return f"needs glibc's malloc; this Python runs on {_libc() or 'another C library'}"
    if spec.min_torch and _version_tuple(info["torch"]) < _version_tuple(spec.min_torch):
        return f"needs torch >= {spec.min_torch}; this is {info['torch']}"
    return None


def provenance(info: dict[str, Any], commit: str, threads: int | None = None) -> Provenance:
    extra: dict[str, Any] = {"git_commit": commit, "date": now()}
    if threads is not None:
        extra["threads"] = threads
    return Provenance.of_machine(info, **extra)


def _rejudged(reg: Registry, remote: dict[str, dict[str, Evidence]]) -> dict[str, dict[str, Evidence]]:
    """Recorded evidence judged again by the current claims; records of a changed snippet stay stale."""
    out: dict[str, dict[str, Evidence]] = {}
    for dev, records in remote.items():
        out[dev] = {}
        for cid, record in records.items():
            spec = reg.claims.get(cid)
            current = spec is not None and record.snippet_hash == reg.files[spec.snippet]
            out[dev][cid] = evidence.rejudge(spec, record) if current and spec else record
    return out


def verify(
    settings: Settings,
    *,
    select: Callable[[ClaimSpec], bool] | None = None,
    jobs: int | None = None,
    force: bool = False,
    run: bool = True,
    progress: Callable[[str, Evidence], None] | None = None,
) -> Verification:
    """Evidence for every selected claim; failures collected, never raised one by one."""
    start = time.monotonic()
    reg = scan.load_registry(settings)
    info = probe(settings)
    cache = EvidenceCache(settings.cache_dir, info)
    commit = git_commit(settings.root)
    local: dict[str, Evidence] = {}
    to_run: dict[str, list[ClaimSpec]] = {}
    problems: list[Failure] = []
    watch: guard.Guard | None = None
    for spec in reg.claims.values():
        if select and not select(spec):
            continue
        shash = reg.files[spec.snippet]
        reason = unmet_need(spec, info)
        if reason:
            local[spec.id] = evidence.make(spec, shash, Outcome.SKIPPED, reason, provenance(info, commit))
            continue
        cached = None if force else cache.get(spec.id, shash)
        if cached is not None:
            cached = evidence.rejudge(spec, cached)
            if cached.outcome is not Outcome.PASS:  # a cached pass the current judge rejects: run it again
                cached = None
        if cached is not None:
            local[spec.id] = cached
        elif run:
            to_run.setdefault(spec.snippet, []).append(spec)

    def done(snippet: str, raws: dict[str, WorkerResult]) -> None:
        for spec in to_run[snippet]:
            if spec.id not in raws:  # run in the other batch (ordinary or performance) of this file
                continue
            raw = raws[spec.id]
            outcome, message = evidence.judge(spec, raw)
            prov = provenance(info, commit, raw.threads)
            record = evidence.make(spec, reg.files[snippet], outcome, message, prov, raw)
            local[spec.id] = record
            written = cache.put(record)
            if written and watch is not None:
                watch.wrote(written)
            if progress:
                progress(spec.id, record)

    if to_run:
        count = sum(len(v) for v in to_run.values())
        log.info("verify: running %d claim(s) from %d snippet file(s) on %s", count, len(to_run), info["device_name"])

        def make_env(threads: int | None) -> runner.WorkerEnv:
            return runner.WorkerEnv(settings=settings, device=info["device"], threads=threads)

        jobs = jobs or settings.jobs or max(1, min(4, os.cpu_count() or 1))
        with guard.exclusive(settings):
            watch = guard.Guard(settings)
            runner.run_many(to_run, make_env, jobs=jobs, on_done=done)
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
        if record.bad:
            failures.append(Failure(cid, record.snippet, f"{record.outcome}: {record.message}", snippet=record.snippet))
    remote = _rejudged(reg, recorded.load_all(settings, exclude=info["device_key"]))
    for dev, records in sorted(remote.items()):
        for cid, record in sorted(records.items()):
            declared = reg.claims.get(cid)
            if declared and record.bad and record.snippet_hash == reg.files[declared.snippet]:
                failures.append(Failure(cid, f"evidence/{dev}.json", f"recorded on {record.provenance.device_name or dev}: "
                                        f"{record.outcome}: {record.message}", snippet=declared.snippet))
    ran = [s.id for specs in to_run.values() for s in specs]
    return Verification(settings, reg, info, local, remote, failures, ran, time.monotonic() - start)
