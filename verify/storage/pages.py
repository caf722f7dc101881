"""Every page's prose facts (:mod:`verify.core.prose`), remembered on disk by the page's content.

Tokenising every page with inline parsing on each build costs more than a warm build's rendering;
an entry in ``<cache>/prose.json`` is reused while the page's bytes hash the same.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

from verify.core import prose
from verify.core.binding import Ref
from verify.storage.fs import CORRUPT, atomic_write_json, read_json

FORMAT = 1


def _to_json(p: prose.Prose) -> dict[str, Any]:
    data = dataclasses.asdict(p)
    data["refs"] = [[dataclasses.asdict(r), line] for r, line in p.refs]
    return data


def _from_json(data: dict[str, Any]) -> prose.Prose:
    return prose.Prose(
        claims=[tuple(c) for c in data["claims"]], hidden_claims=[tuple(c) for c in data["hidden_claims"]],
        refs=[(Ref(**r), line) for r, line in data["refs"]], bad_refs=[tuple(b) for b in data["bad_refs"]],
        inputs=data["inputs"], measurements=[tuple(m) for m in data["measurements"]])


def read_all(docs_dir: Path, cache_dir: Path | None = None) -> dict[str, prose.Prose]:
    """Page (posix path relative to ``docs_dir``) -> its prose facts, for every ``*.md``."""
    path = cache_dir / "prose.json" if cache_dir else None
    cached = read_json(path) if path else None
    entries: dict[str, Any] = cached["pages"] if isinstance(cached, dict) and cached is not CORRUPT and \
        cached.get("format") == FORMAT else {}
    out: dict[str, prose.Prose] = {}
    fresh: dict[str, Any] = {}
    for page in sorted(Path(docs_dir).rglob("*.md")):
        rel = page.relative_to(docs_dir).as_posix()
        text = page.read_bytes()
        sha = hashlib.sha256(text).hexdigest()
        entry = entries.get(rel)
        if isinstance(entry, dict) and entry.get("sha") == sha:
            try:
                out[rel] = _from_json(entry["prose"])
                fresh[rel] = entry
                continue
            except (KeyError, TypeError):
                pass
        out[rel] = prose.read_text(text.decode("utf-8"))
        fresh[rel] = {"sha": sha, "prose": _to_json(out[rel])}
    if path and fresh != entries:
        try:
            atomic_write_json(path, {"format": FORMAT, "pages": fresh})
        except OSError:
            pass
    return out
