"""The evidence a site build renders: one verification per build, shared by every fence.

Pages only render evidence; the session runs what is missing once, when the first fence asks.
It also reads every page for the claims it shows, so that an unknown claim on a page, a claim
on no page, and every failed claim are reported together in one summary that fails the build.
A change to any snippet, page or evidence file starts a fresh session (``mkdocs serve``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from verify import engine, evidence
from verify.errors import Failure, summary

log = logging.getLogger("mkdocs.verify")

FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*claim[ \t]*\n[ \t]*([^\s`~]+)", re.MULTILINE)

_lock = threading.Lock()
_current: Session | None = None
_checked_at = 0.0
RECHECK_S = 1.0


def _signature(root: Path) -> tuple[tuple[str, int, int], ...]:
    items = []
    for sub, pattern in (("snippets", "*"), ("docs", "*.md"), ("evidence", "*.json"), ("verify", "*.py")):
        for path in (root / sub).rglob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                st = path.stat()
                items.append((path.as_posix(), st.st_mtime_ns, st.st_size))
    return tuple(sorted(items))


def scan_pages(docs: Path) -> dict[str, list[str]]:
    """claim id -> pages (relative to docs/) whose ``claim`` fences show it."""
    shown: dict[str, list[str]] = {}
    for page in sorted(docs.rglob("*.md")):
        rel = page.relative_to(docs).as_posix()
        for match in FENCE.finditer(page.read_text(encoding="utf-8")):
            shown.setdefault(match.group(1), []).append(rel)
    return shown


class Session:
    def __init__(self, root: Path, run: bool = True):
        self.root = root
        self.signature = _signature(root)
        self.outcome = engine.verify(root, run=run)
        self.pages = scan_pages(root / "docs")
        self.failures = self._check()

    def _check(self) -> list[Failure]:
        claims = self.outcome.registry.claims
        failures: list[Failure] = []
        for f in self.outcome.failures:
            page = self.pages.get(f.claim, [f.where])[0]
            failures.append(Failure(f.claim, f"docs/{page}" if page != f.where else f.where, self._detail(f),
                                    snippet=f.snippet))
        for cid, pages in sorted(self.pages.items()):
            if cid not in claims:
                failures += [Failure(cid, f"docs/{p}", "the page shows a claim that no snippet declares") for p in pages]
        for cid, spec in sorted(claims.items()):
            if cid not in self.pages:
                failures.append(Failure(cid, spec.snippet, "no page shows this claim (add a ```claim fence)",
                                        snippet=spec.snippet))
        return failures

    def _detail(self, failure: Failure) -> str:
        record = self.outcome.local.get(failure.claim)
        if not record or record["outcome"] not in evidence.BAD:
            return failure.message
        return f"{failure.message} | expected {record['expected']}"

    def page_of(self, claim_id: str) -> str | None:
        pages = self.pages.get(claim_id)
        return pages[0] if pages else None

    def remote_statuses(self, claim_id: str) -> dict[str, str]:
        spec = self.outcome.registry.claims[claim_id]
        current = self.outcome.registry.files[spec.snippet]
        return {dev: evidence.status_of(records.get(claim_id), current, local=False)
                for dev, records in self.outcome.remote.items() if claim_id in records}

    def ledger(self) -> list[dict[str, Any]]:
        """Every claim with its status here and elsewhere: the content of ``evidence.json``."""
        rows = []
        for cid, spec in sorted(self.outcome.registry.claims.items()):
            record = self.outcome.local.get(cid) or {}
            prov = record.get("provenance", {})
            elsewhere = []
            for dev, st in self.remote_statuses(cid).items():
                other = self.outcome.remote[dev][cid]
                oprov = other.get("provenance", {})
                elsewhere.append({"device_key": dev, "status": st, "device": oprov.get("device_name"),
                                  "torch": oprov.get("torch"), "date": oprov.get("date"),
                                  "snippet_hash": other.get("snippet_hash"), "observed": other.get("observed"),
                                  "message": other.get("message")})
            rows.append({
                "id": cid, "question": spec.question, "statement": spec.statement, "kind": spec.kind,
                "page": self.page_of(cid), "snippet": spec.snippet, "needs": list(spec.needs),
                "status": self.outcome.status(cid), "outcome": record.get("outcome"),
                "message": record.get("message"), "expected": spec.expected_summary(),
                "observed": record.get("observed"), "device": prov.get("device_name"),
                "torch": prov.get("torch"), "torch_build": prov.get("torch_build"),
                "snippet_hash": self.outcome.registry.files[spec.snippet], "date": prov.get("date"),
                "duration_s": record.get("duration_s"), "elsewhere": elsewhere,
            })
        return rows


def project_root() -> Path:
    return Path(os.environ.get("VERIFY_ROOT") or Path.cwd())


def get() -> Session:
    """The session for the project being built, created (and verified) on first use.

    Sources are re-checked at most once per ``RECHECK_S`` seconds: a build renders its fences within
    moments of each other, while ``mkdocs serve`` rebuilds only after a file has changed.
    """
    global _current, _checked_at
    root = project_root().resolve()
    with _lock:
        now = time.monotonic()
        if _current is not None and _current.root == root and now - _checked_at < RECHECK_S:
            return _current
        _checked_at = now
        signature = _signature(root)
        if _current is None or _current.root != root or _current.signature != signature:
            if _current is not None and _current.root == root:
                changed = sorted({p for p, *_ in set(signature) ^ set(_current.signature)})
                log.info("verify: %d source file(s) changed since the last check (%s); verifying again",
                         len(changed), ", ".join(Path(p).name for p in changed[:5]))
            run = os.environ.get("VERIFY_NO_RUN", "") not in ("1", "true")
            _current = Session(root, run=run)
            if _current.failures:
                log.error("verify: %s", summary(_current.failures))
        return _current
