"""The one file-system helper: atomic writes, a content stamp, and a memo on that stamp.

Every cache and every writer of the project goes through here, so that a crash never leaves half
a file, two concurrent builds never collide on a temporary name, and a cached result is reused
exactly while the files it was computed from are unchanged.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

log = logging.getLogger("mkdocs.verify")

CORRUPT = object()
T = TypeVar("T")

Stamp = tuple[tuple[str, int, int, int], ...]


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to a uniquely named file beside ``path`` and rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, dumps(data))


class DuplicateKey(ValueError):
    """A JSON object that gives one key twice (``json`` would keep the later copy silently)."""

    def __init__(self, key: str):
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for untrusted JSON: a key given twice is an error, not the later copy."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def read_json(path: Path) -> Any:
    """The parsed file, ``None`` when absent, or ``CORRUPT`` (reported, naming the file) when unreadable.

    A corrupt cache file is not an error of the build: it is reported and its claims run again.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.info("verify: cannot read %s (%s); ignored, it will be run again", path, exc)
        return CORRUPT
    try:
        return json.loads(text)
    except ValueError as exc:
        log.info("verify: %s is corrupt (%s); ignored, it will be run again", path, exc)
        return CORRUPT


def stamp(paths: Iterable[Path]) -> Stamp:
    """What changes when any of ``paths`` is written, replaced, created or removed.

    Modification time, size and change time (ctime cannot be set back by a copy that restores
    mtimes) of each file that exists; a missing file is simply absent from the stamp.
    """
    out = []
    for path in paths:
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        out.append((path.as_posix(), st.st_mtime_ns, st.st_size, st.st_ctime_ns))
    return tuple(sorted(out))


def tree_stamp(root: Path, patterns: Iterable[tuple[str, str]]) -> Stamp:
    """:func:`stamp` of every file matching ``(folder, glob)`` under ``root``, caches excluded."""
    files = [p for sub, pattern in patterns for p in (root / sub).rglob(pattern)
             if p.is_file() and "__pycache__" not in p.parts]
    return stamp(files)


class Memo(Generic[T]):
    """One remembered value per key, recomputed when the key's stamp changes (thread-safe)."""

    def __init__(self) -> None:
        self._values: dict[Any, tuple[Any, T]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, current: Any, compute: Callable[[], T]) -> T:
        """The value for ``key`` if it was computed at stamp ``current``; else ``compute()``."""
        with self._lock:
            hit = self._values.get(key)
            if hit is not None and hit[0] == current:
                return hit[1]
        value = compute()
        with self._lock:
            self._values[key] = (current, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
