"""Judging: a worker's observation against what the claim expects, and what a reader is told.

Outcomes of a run are :class:`verify.core.records.Outcome`. What a reader sees (``status``) is
derived in :func:`status_of`.
"""

from __future__ import annotations

from dataclasses import replace

from verify import toolchain
from verify.core import matchers, states
from verify.core.records import Evidence, ExceptionInfo, Outcome, Provenance, WorkerResult
from verify.core.registry import ClaimSpec, Registry

# What a reader is told (verify.core.states holds each one's words, tone and meaning).
from verify.core.states import (  # noqa: F401
    FAILED,
    NEEDS_CUDA,
    NEEDS_TOOL,  # a need of the GPU toolchain (verify.toolchain) this machine's folder does not hold
    NOT_APPLICABLE,  # a declared need this machine lacks (MKL, g++, glibc, more cores)
    NOT_RUN,
    STALE,
    VERIFIED_ELSEWHERE,
    VERIFIED_HERE,
)


def judge(spec: ClaimSpec, raw: WorkerResult) -> tuple[Outcome, str]:
    """Outcome and a one-line message for one worker result."""
    if raw.outcome is not None:  # decided by the runner: a timeout or a crash
        return raw.outcome, raw.message
    exc = raw.exception
    if spec.kind == "error":
        want_type, fragment = spec.raises or ("", "")
        if not exc:
            return Outcome.FAIL, f"expected {want_type} containing {fragment!r}, but no exception was raised"
        if exc.type != want_type or fragment not in exc.message:
            return Outcome.FAIL, (f"expected {want_type} containing {fragment!r}, observed "
                                  f"{exc.type}: {exc.message[:300]}")
        problems = matchers.check(spec.expect, raw.observed) if spec.expect else []
        return (Outcome.FAIL, "; ".join(problems)) if problems else (Outcome.PASS, f"raised {exc.type} as expected")
    if exc:
        return Outcome.ERROR, f"{exc.type}: {exc.message[:500]}"
    problems = matchers.check(spec.expect, raw.observed)
    if problems:
        return Outcome.FAIL, "; ".join(problems)
    return Outcome.PASS, "every expectation holds"


def make(spec: ClaimSpec, snippet_hash: str, outcome: Outcome, message: str, provenance: Provenance,
         raw: WorkerResult | None = None) -> Evidence:
    """One evidence record: the claim, the verdict, the observations and where they came from."""
    raw = raw or WorkerResult(spec.id)
    exc = raw.exception
    observed = dict(raw.observed)
    if exc and spec.kind == "error":
        observed.setdefault("exception", f"{exc.type}: {exc.message}")
    return Evidence(
        id=spec.id, question=spec.question, statement=spec.statement, kind=spec.kind, snippet=spec.snippet,
        line=spec.line, snippet_hash=snippet_hash, expected=spec.expected_summary(), needs=tuple(spec.needs),
        outcome=outcome, message=message, observed=observed, output=raw.output,
        traceback=exc.traceback if exc and outcome.bad else "", duration_s=raw.duration_s, provenance=provenance,
        exception=exc,
    )


# Outcomes decided without judging (the runner saw a timeout or a crash; a need was not met).
_UNJUDGED = frozenset({Outcome.TIMEOUT, Outcome.CRASH, Outcome.SKIPPED})


def rejudge(spec: ClaimSpec, record: Evidence) -> Evidence:
    """The record judged again by the current claim's expectation and the current matchers.

    A stored verdict is never trusted: a cached or recorded ``pass`` whose observed values do not
    meet what the claim now expects becomes a ``fail``. Timeouts, crashes and skips stay as they are.
    """
    if record.outcome in _UNJUDGED:
        return record
    unmet = device_unmet(spec, record)
    if unmet:
        return replace(make(spec, record.snippet_hash, Outcome.FAIL, unmet, record.provenance, record.as_result()),
                       origin=record.origin)
    if record.kind == "error" and record.exception is None and "exception" in record.observed:
        # a record written before exceptions were kept: the type and message were joined in observed
        etype, _, emsg = str(record.observed["exception"]).partition(": ")
        record = replace(record, exception=ExceptionInfo(etype, emsg))
    outcome, message = judge(spec, record.as_result())
    judged = make(spec, record.snippet_hash, outcome, message, record.provenance, record.as_result())
    return replace(judged, origin=record.origin)


def device_unmet(spec: ClaimSpec, record: Evidence) -> str | None:
    """Why ``record`` cannot have been judged on a device that meets the claim's needs, or ``None``.

    A record carries the device it ran on (its provenance): a claim that needs CUDA passes only on
    a CUDA device, whatever a file says its outcome was.
    """
    if "cuda" in spec.needs and record.provenance.device != "cuda":
        ran_on = record.provenance.device or "an unnamed device"
        return f"recorded on {ran_on}, not a CUDA device: a claim that needs CUDA cannot be judged there"
    return None


def is_current(reg: Registry, record: Evidence) -> bool:
    """Whether the record was made from the snippet as it is now (a declared claim, the same hash)."""
    spec = reg.claims.get(record.id)
    return spec is not None and record.snippet_hash == reg.key(spec.id)


def rejudge_stored(reg: Registry, record: Evidence) -> Evidence:
    """A stored record judged again by its current claim; a record of a changed snippet stays as it was (stale)."""
    return rejudge(reg.claims[record.id], record) if is_current(reg, record) else record


_TOOL_REASONS = tuple(f"needs {tool}:" for tool in toolchain.TOOLS)


def status_of(record: Evidence | None, current_hash: str, local: bool) -> str:
    """What the reader is told about one piece of evidence."""
    if record is None:
        return NOT_RUN
    if record.outcome is Outcome.SKIPPED:
        if "cuda" in record.needs:
            return NEEDS_CUDA
        return NEEDS_TOOL if record.message.startswith(_TOOL_REASONS) else NOT_APPLICABLE
    if record.snippet_hash != current_hash:
        return STALE
    if record.outcome is Outcome.PASS:
        return states.of_pass(record, local)
    return FAILED
