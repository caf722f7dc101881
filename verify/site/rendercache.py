"""Rendered fence HTML kept in the project cache, keyed by a hash of everything it is made from.

A warm build reads a claim's, a question's evidence list's or the ledger's HTML from
``<cache>/render/site/`` (``render/live/`` for the builds of ``verify serve``) instead of rendering it
again. The key covers the claim (statement, status, its records here and elsewhere, its code), the
templates and the labels (:func:`render_version`): any change to what the HTML shows makes a new key.
After each build :func:`prune` deletes what it did not use; the two kinds of build keep apart.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verify.core.records import Evidence, Outcome
from verify.bench import plot
from verify.settings import Settings
from verify.site.code import function_source, keep_highlight
from verify.site.templating import render_version
from verify.storage import fs

if TYPE_CHECKING:
    from verify.site.session import Session


def fingerprint(record: Evidence | None) -> Any:
    """Everything a record holds, cheaply (``to_json`` deep-copies through ``asdict``)."""
    if record is None:
        return None
    if record.outcome is Outcome.SKIPPED:  # made afresh by every verification (its date is now): not evidence
        return [record.outcome.value, record.message, record.snippet_hash, record.statement]
    return {**record.__dict__, "provenance": record.provenance.__dict__, "outcome": record.outcome.value,
            "exception": record.exception.__dict__ if record.exception else None,
            "origin": record.origin.__dict__ if record.origin else None}


def _digest(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


# Each session's claims' code (claim id -> source), for keeping its highlighting while the HTML is a hit.
_CODE: weakref.WeakKeyDictionary[Session, dict[str, str]] = weakref.WeakKeyDictionary()
_KEPT: weakref.WeakKeyDictionary[Session, set[str]] = weakref.WeakKeyDictionary()


def claim_key(sess: Session, cid: str) -> str:
    """The hash of what one claim's HTML is made from, computed once per session."""
    keys = sess.render_keys
    code = _CODE.setdefault(sess, {})
    if cid not in keys:
        out = sess.outcome
        spec = out.registry.claims[cid]
        remote = {dev: fingerprint(r) for dev, recs in sorted(out.remote.items()) if (r := recs.get(cid))}
        # the records (origins included) are in their fingerprints; what the page adds is whether each
        # merged record's commit is in this checkout's history
        merged = [r for r in (out.local.get(cid), *(recs.get(cid) for _, recs in sorted(out.remote.items()))) if r]
        origins = [note.in_history for r in merged if (note := sess.origin(r)) is not None]
        code[cid] = function_source(out.registry.root / spec.snippet, spec.line)
        keys[cid] = _digest([cid, spec.statement, out.status(cid), fingerprint(out.local.get(cid)), remote, origins,
                             sess.remote_statuses(cid), code[cid], spec.snippet, spec.line])
    kept = _KEPT.setdefault(sess, set())
    if code.get(cid) and cid not in kept:  # once per claim and build: the ledger and the lists ask again
        kept.add(cid)
        keep_highlight(code[cid])
    return keys[cid]


def _kind(settings: Settings) -> str:
    return "live" if settings.live else "site"


def cached(sess: Session, kind: str, key: Any, produce: Callable[[], str]) -> str:
    """The HTML for ``key`` from the render cache, or ``produce()`` kept there."""
    memo = fs.text_memo(sess.settings.render_dir / _kind(sess.settings), ".html")
    return memo.get(f"{kind}-{_digest([kind, key, render_version(), sess.settings.live, sess.live_mode])}", produce)


def prune(settings: Settings) -> int:
    """After a site build: delete the rendered HTML, highlighted code and plots it did not use.

    Of ``render/`` only its own kind of build's folder (``site/`` or ``live/``), the highlighted code
    (both kinds show the same) and files left at its top by older versions. Returns how many went.
    """
    render = settings.render_dir
    gone = fs.prune([render, render / "code", render / _kind(settings), settings.cache_dir / plot.FOLDER])
    _KEPT.clear()  # the next build (verify serve keeps its session) marks its code as used again
    return gone
