"""Evidence: what running a claim showed, judged against what the claim expects.

Outcomes of a run (``outcome``): ``pass``, ``fail`` (ran, expectation false), ``error`` (an
unexpected exception), ``timeout``, ``crash`` (the process died), ``skipped`` (a need is not met
here, e.g. CUDA). What a reader sees (``status``) is derived in :func:`status_of`.
"""

from __future__ import annotations

from typing import Any

from verify import matchers
from verify.registry import ClaimSpec

OUTCOMES = ("pass", "fail", "error", "timeout", "crash", "skipped")
BAD = ("fail", "error", "timeout", "crash")

# Statuses shown on the site.
VERIFIED_HERE = "verified-here"
VERIFIED_ELSEWHERE = "verified-elsewhere"
STALE = "stale"
NEEDS_CUDA = "needs-cuda"
NOT_RUN = "not-run"
FAILED = "failed"

PROVENANCE_KEYS = ("torch", "torch_build", "device", "device_name", "device_key", "cpu_model", "cpu_count",
                   "gpu_capability", "python", "os", "threads")


def judge(spec: ClaimSpec, raw: dict[str, Any]) -> tuple[str, str]:
    """Outcome and a one-line message for one worker record."""
    exc = raw.get("exception")
    observed = raw.get("observed") or {}
    if spec.kind == "error":
        want_type, fragment = spec.raises or ("", "")
        if not exc:
            return "fail", f"expected {want_type} containing {fragment!r}, but no exception was raised"
        if exc["type"] != want_type or fragment not in exc["message"]:
            return "fail", (f"expected {want_type} containing {fragment!r}, observed "
                            f"{exc['type']}: {exc['message'][:300]}")
        problems = matchers.check(spec.expect, observed) if spec.expect else []
        return ("fail", "; ".join(problems)) if problems else ("pass", f"raised {exc['type']} as expected")
    if exc:
        return "error", f"{exc['type']}: {exc['message'][:500]}"
    problems = matchers.check(spec.expect, observed)
    if problems:
        return "fail", "; ".join(problems)
    return "pass", "every expectation holds"


def make(spec: ClaimSpec, snippet_hash: str, outcome: str, message: str, provenance: dict[str, Any],
         raw: dict[str, Any] | None = None) -> dict[str, Any]:
    """One evidence record: the claim, the verdict, the observations and where they came from."""
    raw = raw or {}
    exc = raw.get("exception")
    observed = dict(raw.get("observed") or {})
    if exc and spec.kind == "error":
        observed.setdefault("exception", f"{exc['type']}: {exc['message']}")
    return {
        "id": spec.id,
        "question": spec.question,
        "statement": spec.statement,
        "kind": spec.kind,
        "snippet": spec.snippet,
        "line": spec.line,
        "snippet_hash": snippet_hash,
        "expected": spec.expected_summary(),
        "needs": list(spec.needs),
        "outcome": outcome,
        "message": message,
        "observed": observed,
        "output": raw.get("output", ""),
        "traceback": (exc or {}).get("traceback", "") if outcome in BAD else "",
        "duration_s": raw.get("duration_s"),
        "provenance": provenance,
    }


def status_of(record: dict[str, Any] | None, current_hash: str, local: bool) -> str:
    """What the reader is told about one piece of evidence."""
    if record is None:
        return NOT_RUN
    if record["outcome"] == "skipped":
        return NEEDS_CUDA if "cuda" in record.get("needs", []) else NOT_RUN
    if record["snippet_hash"] != current_hash:
        return STALE
    if record["outcome"] == "pass":
        return VERIFIED_HERE if local else VERIFIED_ELSEWHERE
    return FAILED
