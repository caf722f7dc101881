"""Per-file facts the registry needs, remembered across processes while a file is unchanged.

Parsing every snippet and workload with ``ast`` on every site build costs more than rendering the
pages; a warm build instead reads one JSON file. An entry is reused while the file's bytes hash the
same (the hash is always computed from the bytes: a same-size edit with its mtime restored is seen)
and the names in its folder are the same (a file named by a snippet may appear beside it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from verify.core import registry
from verify.settings import Settings
from verify.storage.fs import CORRUPT, atomic_write_json, read_json

FORMAT = 6  # bump when verify.core.registry.analyse or verify.core.measuring changes what it computes
_CACHES: dict[tuple[Path, Path], ScanCache] = {}


class ScanCache:
    """:class:`verify.core.registry.Facts` kept in ``<cache>/scan.json``."""

    def __init__(self, root: Path, cache_dir: Path):
        self.root = root
        self.path = cache_dir / "scan.json"
        data = read_json(self.path)
        ok = isinstance(data, dict) and data is not CORRUPT and data.get("format") == FORMAT
        self.files: dict[str, dict[str, Any]] = data["files"] if ok else {}
        self.dirty = False

    def get(self, path: Path) -> dict[str, Any]:
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        beside = sorted(p.name for p in path.parent.iterdir()) if path.suffix == ".py" else []
        rel = path.relative_to(self.root).as_posix()
        entry = self.files.get(rel)
        if entry is None or entry.get("sha") != sha or entry.get("beside") != beside:
            entry = dict(registry.analyse(path, self.root), beside=beside)
            self.files[rel] = entry
            self.dirty = True
        return entry

    def save(self) -> None:
        if self.dirty:
            try:
                atomic_write_json(self.path, {"format": FORMAT, "files": self.files})
            except OSError:  # a read-only checkout still builds; it just parses again next time
                pass
            self.dirty = False


def facts(settings: Settings) -> ScanCache:
    """The scan cache of this checkout and cache folder, one per process."""
    key = (settings.root, settings.cache_dir)
    if key not in _CACHES:
        _CACHES[key] = ScanCache(settings.root, settings.cache_dir)
    return _CACHES[key]


def load_registry(settings: Settings) -> registry.Registry:
    """Every claim of the checkout, read from the sources (never imported)."""
    return registry.load(facts(settings))


def source_key(settings: Settings, path: Path, follow: Any = None) -> str:
    """:func:`verify.core.registry.source_key` with this checkout's scan cache."""
    return registry.source_key(path, facts(settings), follow)
