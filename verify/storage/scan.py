"""Per-file facts the registry needs, remembered across processes while a file is unchanged.

Parsing every snippet and workload with ``ast`` on every site build costs more than rendering the
pages; a warm build instead reads one JSON file. An entry is reused while the file's bytes hash the
same (the hash is always computed from the bytes: a same-size edit with its mtime restored is seen)
and the names in its folder are the same (a file named by a snippet may appear beside it).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

from verify.core import registry
from verify.core.records import JsonObject
from verify.settings import Settings
from verify.storage.fs import MemoFile

FORMAT = 9  # bump when verify.core.registry.analyse or verify.core.measuring changes what it computes
_CACHES: dict[tuple[Path, Path], ScanCache] = {}


class ScanCache:
    """:class:`verify.core.registry.Facts` kept in ``<cache>/scan.json``.

    An entry is :meth:`FileFacts.to_json <verify.core.registry.FileFacts.to_json>` with ``beside``,
    the names in the file's folder. The same entry gives the very same :class:`FileFacts` object
    (what :func:`load_registry` relies on to tell that nothing changed).
    """

    def __init__(self, root: Path, cache_dir: Path):
        self.root = root
        self.memo = MemoFile(cache_dir / "scan.json", FORMAT, "files")
        self._read: dict[str, tuple[object, registry.FileFacts]] = {}  # rel -> (its entry, the facts of it)

    def get(self, path: Path) -> registry.FileFacts:
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        beside = sorted(p.name for p in path.parent.iterdir()) if path.suffix == ".py" else []
        rel = path.relative_to(self.root).as_posix()

        def analysed() -> JsonObject:
            return {**registry.analyse(path, self.root).to_json(), "beside": beside}

        entry = self.memo.get(rel, analysed, valid=lambda e: isinstance(e, dict) and e.get("sha") == sha
                              and e.get("beside") == beside)
        hit = self._read.get(rel)
        if hit is not None and hit[0] is entry:
            return hit[1]
        try:
            facts = registry.FileFacts.from_json(entry)
        except (KeyError, TypeError, ValueError):  # an entry of this very file that is not one: analysed again
            facts = registry.FileFacts.from_json(entry := self.memo.put(rel, analysed()))
        self._read[rel] = (entry, facts)
        return facts

    def save(self) -> None:
        self.memo.save()


def facts(settings: Settings) -> ScanCache:
    """The scan cache of this checkout and cache folder, one per process."""
    key = (settings.root, settings.cache_dir)
    if key not in _CACHES:
        _CACHES[key] = ScanCache(settings.root, settings.cache_dir)
    return _CACHES[key]


class _Reading:
    """The scan cache, noting the facts it gave for each file (what a registry was made from)."""

    def __init__(self, cache: ScanCache):
        self.cache, self.root = cache, cache.root
        self.given: dict[Path, registry.FileFacts] = {}

    def get(self, path: Path) -> registry.FileFacts:
        self.given[path] = entry = self.cache.get(path)
        return entry

    def save(self) -> None:
        self.cache.save()


_REGISTRIES: dict[tuple[Path, Path], tuple[list[Path], dict[Path, registry.FileFacts], registry.Registry]] = {}
_lock = threading.Lock()


def load_registry(settings: Settings) -> registry.Registry:
    """Every claim of the checkout, read from the sources (never imported).

    Made once per process and checkout while its sources are unchanged: a command asks several times
    (its filters, its progress display, the engine). Unchanged means the same snippet files and, for
    every file it was made from, the very facts the scan cache gives now (the same bytes, the same
    names beside it), so the registry is the one :func:`verify.core.registry.load` would make again.
    """
    cache = facts(settings)
    key = (settings.root, settings.cache_dir)
    snippets = sorted(settings.snippets_dir.rglob("*.py"))
    with _lock:
        hit = _REGISTRIES.get(key)
    if hit is not None and hit[0] == snippets:
        try:
            if all(cache.get(path) is entry for path, entry in hit[1].items()):
                return hit[2]
        except OSError:  # a file it was made from is gone
            pass
    reading = _Reading(cache)
    made = registry.load(reading)
    with _lock:
        _REGISTRIES[key] = (snippets, reading.given, made)
    return made


def source_key(settings: Settings, path: Path, follow: Callable[[str], bool] | None = None) -> str:
    """:func:`verify.core.registry.source_key` with this checkout's scan cache."""
    return registry.source_key(path, facts(settings), follow)
