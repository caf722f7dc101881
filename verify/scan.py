"""Per-file facts the registry needs, remembered across processes while a file is unchanged.

Parsing every snippet and workload with ``ast`` on every site build costs more than rendering the
pages; a warm build instead reads one JSON file. An entry is reused while the file's mtime and
size and its folder's mtime (a file named by a snippet may appear beside it) are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from verify.paths import cache_dir
from verify.store import CORRUPT, atomic_write_json, read_json

FORMAT = 1
_CACHES: dict[Path, ScanCache] = {}


class ScanCache:
    def __init__(self, root: Path):
        self.root = root
        self.path = cache_dir(root) / "scan.json"
        data = read_json(self.path)
        ok = isinstance(data, dict) and data is not CORRUPT and data.get("format") == FORMAT
        self.files: dict[str, dict[str, Any]] = data["files"] if ok else {}
        self.dirty = False

    def get(self, path: Path, analyse: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        st = path.stat()
        stamp = [st.st_mtime_ns, st.st_size, path.parent.stat().st_mtime_ns]
        rel = path.relative_to(self.root).as_posix()
        entry = self.files.get(rel)
        if entry is None or entry.get("stamp") != stamp:
            entry = dict(analyse(path), stamp=stamp)
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


def for_root(root: Path) -> ScanCache:
    root = root.resolve()
    if root not in _CACHES or _CACHES[root].path != cache_dir(root) / "scan.json":
        _CACHES[root] = ScanCache(root)
    return _CACHES[root]
