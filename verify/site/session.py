"""The evidence a site build renders: one verification per build, shared by every fence.

Pages only render evidence; the session runs what is missing once, when the first fence asks.
It also reads every page for the claims it shows, so that an unknown claim on a page, a claim
on no page, and every failed claim are reported together in one summary that fails the build.
A change to any snippet, page or evidence file starts a fresh session (``mkdocs serve``): the
hook calls :func:`recheck` as each build starts, and the content-addressed cache makes the fresh
session run only the claims of the snippet files that changed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from verify import settings as settings_mod
from verify.core import prose as prose_mod
from verify.core import states
from verify.errors import Failure, summary

from verify.core.prose import Prose
from verify.core.records import Evidence, JsonObject
from verify.core.ledger import Ledger
from verify.settings import Settings
from verify.storage import git
from verify.storage.fs import Stamp, stamp, tree_stamp

log = logging.getLogger("mkdocs.verify")

_lock = threading.Lock()
_current: Session | None = None
_checked_at = 0.0
RECHECK_S = 1.0
T = TypeVar("T")

#: Makes the ledger a build shows: ``(settings, run=..., live=...) -> Ledger``. The site only reads
#: it; :mod:`verify.hooks` (the build's entry) sets it to the engine, which runs what needs running.
Produce = Callable[..., Ledger]
produce: Produce | None = None


def use(producer: Produce) -> None:
    global produce
    produce = producer


WATCHED = (("snippets", "*"), ("docs", "*.md"), ("evidence", "*.json"), ("verify", "*.py"))


def _signature(settings: Settings) -> Stamp:
    """The sources' stamps; under ``verify serve`` also its stamp, touched as claims finish behind the server,
    and its note that this machine cannot run them."""
    sources = tree_stamp(settings.root, WATCHED)
    return sources + stamp([settings.live_stamp, settings.live_stopped]) if settings.live else sources


def live_mode(settings: Settings) -> str:
    """How a build shows a claim not run here (:mod:`verify.core.states`): ``""`` outside ``verify serve``;
    under it, whether its runner is running this machine's claims or has said it cannot."""
    if not settings.live:
        return ""
    return states.LIVE_STOPPED if settings.live_stopped.exists() else states.LIVE_RUNNING


def recheck() -> None:
    """Make the next :func:`get` compare the sources again: a new build has started.

    Without it a rebuild that ``mkdocs serve`` starts within ``RECHECK_S`` of the previous build's
    last fence (a snippet saved right after a page) would render the old session.
    """
    global _checked_at
    with _lock:
        _checked_at = float("-inf")


def scan_pages(docs: Path, cache_dir: Path | None = None) -> dict[str, Prose]:
    """Page (relative to docs/) -> what its prose shows: claims, bound values, typed numbers."""
    from verify.storage import pages as page_store  # noqa: PLC0415

    return page_store.read_all(docs, cache_dir)


class Session:
    def __init__(self, settings: Settings, run: bool = True):
        from verify.site import checks  # noqa: PLC0415

        self.settings = settings
        self.root = settings.root
        self.signature = _signature(settings)
        self.live_mode = live_mode(settings)
        if produce is None:
            raise RuntimeError("no ledger producer: import verify.hooks (MkDocs' hook) or call session.use() first")
        self.outcome: Ledger = produce(settings, run=run, live=settings.live)
        self.prose = scan_pages(settings.docs_dir, settings.cache_dir)
        self.pages = prose_mod.shown(self.prose)
        self.render_keys: dict[str, str] = {}  # claim id -> hash of what its HTML is made from
        self._made: dict[Hashable, Any] = {}
        self.failures = checks.check(self)

    def once(self, key: Hashable, make: Callable[[], T]) -> T:
        """What ``make`` returns, made once per session: the syllabus (on two pages), the quiz bank (its
        fence and ``quiz.json``) and the ledger (its fence and ``evidence.json``) are each made from the
        session's sources alone, and a change to any of them starts a new session."""
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    def detail(self, failure: Failure) -> str:
        record = self.outcome.local.get(failure.claim)
        if not record or not record.bad:
            return failure.message
        return f"{failure.message} | expected {record.expected}"

    def page_of(self, claim_id: str) -> str | None:
        pages = self.pages.get(claim_id)
        return pages[0] if pages else None

    def origin(self, record: Evidence | None) -> OriginNote | None:
        """Where a merged record came from (see :class:`OriginNote`); ``None`` for a record this checkout's
        runner made."""
        if record is None or record.origin is None:
            return None
        commit = record.origin.commit
        history = git.in_history(self.root, commit) if commit else None
        return OriginNote(record.origin.bundle, commit, record.origin.created, history)

    def remote_statuses(self, claim_id: str) -> dict[str, str]:
        return self.outcome.remote_statuses(claim_id)

    def ledger(self) -> list[LedgerRow]:
        """Every claim with its status here and elsewhere: the content of ``evidence.json``."""
        return self.once("ledger", self._ledger_rows)

    def _ledger_rows(self) -> list[LedgerRow]:
        rows = []
        for cid, spec in sorted(self.outcome.registry.claims.items()):
            record = self.outcome.local.get(cid)
            prov = record.provenance if record else None
            elsewhere = []
            for dev, st in self.remote_statuses(cid).items():
                other = self.outcome.remote[dev][cid]
                elsewhere.append(Elsewhere(
                    device_key=dev, status=st, device=other.provenance.device_name, torch=other.provenance.torch,
                    date=other.provenance.date, snippet_hash=other.snippet_hash, observed=other.observed,
                    message=other.message, origin=self.origin(other)))
            rows.append(LedgerRow(
                id=cid, question=spec.question, statement=self.outcome.sentence(cid),
                statement_source=spec.statement, kind=spec.kind,
                page=self.page_of(cid), snippet=spec.snippet, needs=spec.needs,
                status=self.outcome.status(cid), outcome=record.outcome.value if record else None,
                message=record.message if record else None, expected=spec.expected_summary(),
                observed=record.observed if record else None, device=prov.device_name if prov else None,
                torch=prov.torch if prov else None, torch_build=prov.torch_build if prov else None,
                snippet_hash=self.outcome.registry.key(spec.id), date=prov.date if prov else None,
                duration_s=record.duration_s if record else None, origin=self.origin(record),
                elsewhere=tuple(elsewhere),
            ))
        return rows


@dataclass(frozen=True)
class OriginNote:
    """Where a merged record came from: its bundle, the commit and date that bundle names, and whether
    that commit is in this checkout's history (``None``: it cannot be told here)."""

    bundle: str
    commit: str | None
    created: str | None
    in_history: bool | None


@dataclass(frozen=True)
class Elsewhere:
    """A claim's record on another device, as the ledger lists it."""

    device_key: str
    status: str
    device: str | None
    torch: str | None
    date: str | None
    snippet_hash: str
    observed: JsonObject  # what the claim observed there
    message: str
    origin: OriginNote | None


@dataclass(frozen=True)
class LedgerRow:
    """One claim of the ledger: what it says, its status and record here, its records elsewhere.

    :meth:`to_json` is its entry in ``evidence.json`` (the fields in this order).
    """

    id: str
    question: str
    statement: str  # with its values filled in
    statement_source: str  # as the snippet declares it
    kind: str
    page: str | None
    snippet: str
    needs: tuple[str, ...]
    status: str
    outcome: str | None
    message: str | None
    expected: JsonObject  # the claim's expectation, as declared
    observed: JsonObject | None  # what it observed here
    device: str | None
    torch: str | None
    torch_build: str | None
    snippet_hash: str
    date: str | None
    duration_s: float | None
    origin: OriginNote | None
    elsewhere: tuple[Elsewhere, ...]

    def to_json(self) -> JsonObject:
        # field by field, not asdict: that deep-copies every observed value (316 rows in each build)
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update(needs=list(self.needs), origin=_plain(self.origin),
                    elsewhere=[{**{f.name: getattr(e, f.name) for f in fields(e)}, "origin": _plain(e.origin)}
                               for e in self.elsewhere])
        return data


def _plain(origin: OriginNote | None) -> JsonObject | None:
    return None if origin is None else {f.name: getattr(origin, f.name) for f in fields(origin)}


def outdated() -> bool:
    """Whether the sources changed after the current session read them (a rebuild would show more)."""
    with _lock:
        cur = _current
    return cur is not None and cur.signature != _signature(cur.settings)


def current() -> Session | None:
    """The session the last :func:`get` returned, if any (its build's live mode, for the labels)."""
    return _current


def get() -> Session:
    """The session for the site being built, created (and verified) on first use.

    Sources are re-checked at most once per ``RECHECK_S`` seconds: a build renders its fences within
    moments of each other, while ``mkdocs serve`` rebuilds only after a file has changed.
    """
    global _current, _checked_at
    settings = settings_mod.for_site()
    root = settings.root
    with _lock:
        now = time.monotonic()
        if _current is not None and _current.settings == settings and now - _checked_at < RECHECK_S:
            return _current
        _checked_at = now
        signature = _signature(settings)
        if _current is None or _current.settings != settings or _current.signature != signature:
            if _current is not None and _current.root == root:
                changed = sorted({p for p, *_ in set(signature) ^ set(_current.signature)})
                log.info("verify: %d source file(s) changed since the last check (%s); verifying again",
                         len(changed), ", ".join(Path(p).name for p in changed[:5]))
            _current = Session(settings, run=settings.run_claims)
            if _current.failures:
                log.error("verify: %s", summary(_current.failures))
        return _current
