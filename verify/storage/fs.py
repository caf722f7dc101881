"""The one file-system helper: atomic writes, a content stamp, a memo on that stamp, and the disk caches.

Every cache and every writer of the project goes through here, so that a crash never leaves half
a file, two concurrent builds never collide on a temporary name, a cached result is reused
exactly while the files it was computed from are unchanged, and what a build no longer uses is
pruned (:class:`DiskMemo`, :class:`MemoFile`, :func:`prune`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from verify.core.records import JsonObject

log = logging.getLogger("mkdocs.verify")

CORRUPT = object()
T = TypeVar("T")

Stamp = tuple[tuple[str, int, int, int], ...]


def copy_into(path: Path, folder: Path) -> None:
    """A copy of ``path`` (when it exists) under the same name in ``folder``, made if missing."""
    if path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / path.name)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to a uniquely named file beside ``path``, fsync it, and rename it over ``path``.

    The file gets the mode an ordinary ``open`` would give it (0644 under the usual umask), not the
    private 0600 of the temporary file it was written as: reports and evidence are meant to be shared.
    """
    atomic_write_many({path: text})


def _temporary(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def atomic_write_many(texts: dict[Path, str]) -> None:
    """Write every file of ``texts`` or none: all are written in full beside their targets before any is renamed.

    A full disk or a failed write leaves every target as it was. The renames are made one after another and
    each folder is synced after them, so a crash of the machine between two renames (not a failed write) can
    leave the first target new and the second old.
    """
    done: dict[Path, str] = {}
    try:
        for path, text in texts.items():
            done[path] = _temporary(path, text)
    except BaseException:
        for tmp in done.values():
            Path(tmp).unlink(missing_ok=True)
        raise
    renamed = 0
    try:
        for path, tmp in done.items():
            os.replace(tmp, path)
            renamed += 1
    finally:
        for tmp in list(done.values())[renamed:]:
            Path(tmp).unlink(missing_ok=True)
    for folder in {path.parent for path in done}:  # the renames themselves reach the disk
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def unwritable(folder: Path) -> str | None:
    """Why files cannot be written in ``folder`` (made if missing), as the system says it; ``None`` if they can.

    Tried, not inferred from permission bits: root ignores them, while a read-only mount, an
    immutable folder or a file in the folder's place refuse root too.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".writable.", suffix=".tmp", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)
    return None


def dumps(data: Any) -> str:
    """JSON as the project writes it; a NaN or an infinity is a ``ValueError`` (JSON has neither, readers refuse them)."""
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True, allow_nan=False) + "\n"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock for a read-modify-write of ``path`` (``.<name>.lock`` beside it).

    Every writer that reads a shared file, changes it and writes it back (a merge, a stress record,
    the shard durations) holds this lock from the read to the rename, so that two processes never
    write from the same old state and lose each other's change. The lock file stays (it is empty).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.parent / f".{path.name}.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, dumps(data))


class DuplicateKey(ValueError):
    """A JSON object that gives one key twice (``json`` would keep the later copy silently)."""

    def __init__(self, key: str):
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> JsonObject:
    """``object_pairs_hook`` for untrusted JSON: a key given twice is an error, not the later copy."""
    out: JsonObject = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def read_json(path: Path) -> Any:
    """The parsed file, ``None`` when absent, or ``CORRUPT`` (reported, naming the file) when unreadable.

    A corrupt cache file is not an error of the build: it is reported and its claims run again.
    """
    return _read(path, json.loads, CORRUPT)


def _read(path: Path, decode: Callable[[str], Any], bad: Any) -> Any:
    """``decode`` of the file's text; ``None`` when absent; ``bad`` when unreadable or undecodable (reported)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8
        log.info("verify: cannot read %s (%s); ignored, it will be made again", path, exc)
        return bad
    try:
        return decode(text)
    except ValueError as exc:
        log.info("verify: %s is corrupt (%s); ignored, it will be made again", path, exc)
        return bad


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


# --- caches on disk -----------------------------------------------------------------------------
# Every cache of the project is one of two kinds: a folder of one file per key (DiskMemo: rendered
# HTML, plots, evidence, the probe) or one JSON file of many small entries (MemoFile: the per-file
# and per-page facts). Both read an entry, compute it on a miss and write it atomically; a file
# that cannot be read or decoded is reported and made again, and a cache that cannot be written
# only costs the work next time. A build prunes the folders it fills (prune): each use of a key
# is noted in this process, and what the build did not use is deleted when it ends.

_MISS: Any = object()


class _Uses:
    """The files of each cache folder used since the current build started (its first use of a memo)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started_ns: int | None = None
        self.names: dict[Path, set[str]] = {}

    def note(self, folder: Path, name: str) -> None:
        with self.lock:
            if self.started_ns is None:
                self.started_ns = _fs_now(folder)
            self.names.setdefault(folder, set()).add(name)


_USES = _Uses()


def _fs_now(folder: Path) -> int:
    """Now, by the clock that stamps ``folder``'s files (a network share keeps its own)."""
    while not folder.is_dir() and folder != folder.parent:  # the nearest folder that exists
        folder = folder.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=".now.", suffix=".tmp", dir=folder)
    except OSError:
        return time.time_ns()
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)


def prune(folders: Iterable[Path]) -> int:
    """Delete the files directly in each of ``folders`` that no memo used since the build started.

    A build starts with the first use of any memo after the previous :func:`prune`; a file written
    after that start is kept too (another build sharing the cache made it, or is writing it). Nothing
    is deleted when no memo was used. Returns how many files went.
    """
    with _USES.lock:
        started, used = _USES.started_ns, _USES.names
        _USES.started_ns, _USES.names = None, {}
    if started is None:
        return 0
    removed = 0
    for folder in folders:
        keep = used.get(Path(folder), set())
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if (entry.name not in keep and entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mtime_ns < started):
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


class DiskMemo(Generic[T]):
    """A cache folder of one file per key: :meth:`get` reads the key's file, or computes the value
    and writes it atomically; an unreadable or undecodable file is reported and made again."""

    def __init__(self, folder: Path, suffix: str, decode: Callable[[str], T], encode: Callable[[T], str]):
        self.folder, self.suffix, self.decode, self.encode = Path(folder), suffix, decode, encode

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{self.suffix}"

    def get(self, key: str, compute: Callable[[], T], valid: Callable[[T], bool] | None = None) -> T:
        """The value kept for ``key`` (when ``valid`` accepts it), else ``compute()``, kept for next time."""
        value = self.peek(key)
        if value is not None and (valid is None or valid(value)):
            return value
        value = compute()
        try:
            self.put(key, value)
        except OSError as exc:  # a read-only cache still works: it just computes again next time
            log.info("verify: cannot write %s (%s); it will be made again", self.path(key), exc)
        return value

    def peek(self, key: str) -> T | None:
        """The value kept for ``key``; ``None`` when there is none or it is unreadable (reported)."""
        path = self.path(key)
        _USES.note(self.folder, path.name)
        return _read(path, self.decode, None)

    def put(self, key: str, value: T) -> Path:
        """Keep ``value`` for ``key`` (atomically; an ``OSError`` is the caller's). Returns its file."""
        path = self.path(key)
        _USES.note(self.folder, path.name)
        atomic_write_text(path, self.encode(value))
        return path

    def keep(self, key: str) -> None:
        """Count ``key``'s file as used by this build without reading it (its user had it already)."""
        _USES.note(self.folder, self.path(key).name)


def text_memo(folder: Path, suffix: str) -> DiskMemo[str]:
    """A :class:`DiskMemo` of text files (HTML, SVG) kept as they are."""
    return DiskMemo(folder, suffix, str, str)


def json_memo(folder: Path) -> DiskMemo[Any]:
    """A :class:`DiskMemo` of ``<key>.json`` files (:func:`dumps`)."""
    return DiskMemo(folder, ".json", json.loads, dumps)


class MemoFile:
    """A cache of many small entries kept together in one JSON file, ``{"format": N, field: {key: entry}}``.

    Read once (absent, corrupt or of another format: empty); :meth:`get` as :class:`DiskMemo`'s;
    :meth:`save` writes the file atomically when an entry changed. ``path`` ``None``: in memory only.
    """

    def __init__(self, path: Path | None, format: int, field: str):
        self.path, self.format, self.field = path, format, field
        data = read_json(path) if path else None
        entries = data.get(field) if isinstance(data, dict) and data.get("format") == format else None
        self.entries: JsonObject = entries if isinstance(entries, dict) else {}  # key -> entry, as in the file
        self.used: set[str] = set()
        self.dirty = False
        self._lock = threading.Lock()

    def get(self, key: str, compute: Callable[[], Any], valid: Callable[[Any], bool] | None = None) -> Any:
        with self._lock:
            self.used.add(key)
            entry = self.entries.get(key)
        if entry is not None and (valid is None or valid(entry)):
            return entry
        return self.put(key, compute())

    def put(self, key: str, entry: Any) -> Any:
        with self._lock:
            self.used.add(key)
            self.entries[key] = entry
            self.dirty = True
        return entry

    def save(self, prune: bool = False) -> None:
        """Write the file if an entry changed; ``prune``: keep only the entries used since it was read."""
        with self._lock:
            if prune and not self.used.issuperset(self.entries):
                self.entries = {k: v for k, v in self.entries.items() if k in self.used}
                self.dirty = True
            if not self.dirty or self.path is None:
                return
            text = dumps({"format": self.format, self.field: self.entries})
            self.dirty = False
        try:
            atomic_write_text(self.path, text)
        except OSError as exc:  # a read-only checkout still builds; it just computes again next time
            log.info("verify: cannot write %s (%s); it will be made again", self.path, exc)


def empty_folder(folder: Path, keep: Iterable[str] = ()) -> int:
    """Delete everything in ``folder`` but the names in ``keep``; returns how many files went."""
    removed = 0
    spared = set(keep)
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if entry.name in spared:
            continue
        if entry.is_dir(follow_symlinks=False):
            removed += sum(len(files) for _, _, files in os.walk(entry.path))
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
            removed += 1
    return removed
