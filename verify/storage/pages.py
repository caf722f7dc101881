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
from verify.storage.fs import MemoFile

FORMAT = 2  # 2: read by verify.core.pages' one reading (a bound value's line is where its span starts)


def _to_json(p: prose.Prose) -> dict[str, Any]:
    data = dataclasses.asdict(p)
    data["refs"] = [[dataclasses.asdict(r), line] for r, line in p.refs]
    return data


def _from_json(data: dict[str, Any]) -> prose.Prose:
    return prose.Prose(
        claims=[tuple(c) for c in data["claims"]], hidden_claims=[tuple(c) for c in data["hidden_claims"]],
        refs=[(Ref(**r), line) for r, line in data["refs"]], bad_refs=[tuple(b) for b in data["bad_refs"]],
        inputs=data["inputs"], measurements=[tuple(m) for m in data["measurements"]])


def _entry(text: bytes, sha: str) -> dict[str, Any]:
    return {"sha": sha, "prose": _to_json(prose.read_text(text.decode("utf-8")))}


def read_all(docs_dir: Path, cache_dir: Path | None = None) -> dict[str, prose.Prose]:
    """Page (posix path relative to ``docs_dir``) -> its prose facts, for every ``*.md``."""
    memo = MemoFile(cache_dir / "prose.json" if cache_dir else None, FORMAT, "pages")
    out: dict[str, prose.Prose] = {}
    for page in sorted(Path(docs_dir).rglob("*.md")):
        rel = page.relative_to(docs_dir).as_posix()
        text = page.read_bytes()
        sha = hashlib.sha256(text).hexdigest()
        entry = memo.get(rel, lambda: _entry(text, sha), valid=lambda e: isinstance(e, dict) and e.get("sha") == sha)
        try:
            out[rel] = _from_json(entry["prose"])
        except (KeyError, TypeError):  # an entry of this very page that is not one: parsed again
            out[rel] = _from_json(memo.put(rel, _entry(text, sha))["prose"])
    memo.save(prune=True)  # pages that are gone leave the file
    return out
