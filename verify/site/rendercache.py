"""Rendered fence HTML kept in the project cache, keyed by a hash of everything it is made from.

A warm build reads a claim's, a question's evidence list's or the ledger's HTML from
``<cache>/render/`` instead of rendering it again. The key covers the claim (statement, status, its
records here and elsewhere, its code), the templates and the labels (:func:`render_version`): any
change to what the HTML shows makes a new key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verify.core.records import Evidence, Outcome
from verify.site.code import function_source
from verify.site.templating import render_version
from verify.storage.fs import atomic_write_text

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


def claim_key(sess: Session, cid: str) -> str:
    """The hash of what one claim's HTML is made from, computed once per session."""
    keys = sess.render_keys
    if cid not in keys:
        out = sess.outcome
        spec = out.registry.claims[cid]
        remote = {dev: fingerprint(r) for dev, recs in sorted(out.remote.items()) if (r := recs.get(cid))}
        origins = [sess.origin(out.local.get(cid)), [sess.origin(recs.get(cid)) for _, recs in sorted(out.remote.items())]]
        keys[cid] = _digest([cid, spec.statement, out.status(cid), fingerprint(out.local.get(cid)), remote, origins,
                             sess.remote_statuses(cid), function_source(out.registry.root / spec.snippet, spec.line),
                             spec.snippet, spec.line])
    return keys[cid]


def cached(sess: Session, kind: str, key: Any, produce: Callable[[], str]) -> str:
    """The HTML for ``key`` from the render cache, or ``produce()`` kept there."""
    path = sess.settings.cache_dir / "render" / f"{kind}-{_digest([kind, key, render_version(), sess.settings.live])}.html"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    html = produce()
    atomic_write_text(path, html)
    return html
