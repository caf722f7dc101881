"""Claims cannot forge evidence: what they change in the project cache while they run is undone.

Workers run in scratch folders, but a claim is arbitrary code and could still write anywhere it
can reach: into another claim's cached evidence, the parse cache, the rendered-code cache. While
claims run, the parent process is the only writer of the cache (:func:`exclusive` keeps a second
verification of the same cache out), so a file that changed and was not written by the parent was
written by a claim. :meth:`Guard.check` deletes every such file (they are caches: whatever they
held is computed again) and reports them; files of the checkout that changed are reported too.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from verify.settings import Settings

log = logging.getLogger("mkdocs.verify")

# Folders claims are meant to write: compiler caches (the g++ builder's cxx/, the judge's GPU section) and scratch space.
_CACHE_FREE = {"inductor", "torch_extensions", "triton", "tmp", "cxx", "judge-gpu"}
_TREE_SKIP = {".git", ".venv", "venv", "site", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache",
              ".ruff_cache", ".hypothesis"}
LOCK = "run.lock"

Stamp = dict[str, tuple[int, int, int]]


def _walk(base: Path, skip: set[str], top_skip: set[str] | None = None) -> Stamp:
    out: Stamp = {}
    if not base.is_dir():
        return out
    for folder, dirs, files in os.walk(base):
        at_top = Path(folder) == base
        dirs[:] = [d for d in dirs if d not in skip and not (at_top and d in (top_skip or ()))]
        for name in files:
            path = Path(folder) / name
            try:
                st = path.stat()
            except OSError:
                continue
            out[path.relative_to(base).as_posix()] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns)
    return out


class Guard:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.cache = settings.cache_dir
        self._cache_skip = {*_CACHE_FREE, "__pycache__"}
        self.before = self._cache_state()
        self.tree_before = self._tree_state()
        self.written: Stamp = {}

    def _cache_state(self) -> Stamp:
        state = _walk(self.cache, set(), self._cache_skip)
        state.pop(LOCK, None)
        return state

    def _tree_state(self) -> Stamp:
        # evidence/: a recording writes its device file as claims finish (verify.running.record);
        # whatever a claim writes there is judged again when read, like any other record
        top = {"evidence"} | ({self.cache.name} if self.cache.parent == self.settings.root else set())
        return _walk(self.settings.root, _TREE_SKIP, top)

    def wrote(self, path: Path) -> None:
        """The parent wrote ``path`` (a cache entry): its new stamp is expected."""
        try:
            st = path.stat()
        except OSError:
            return
        self.written[path.relative_to(self.cache).as_posix()] = (st.st_mtime_ns, st.st_size, st.st_ctime_ns)

    def check(self) -> tuple[list[str], list[str]]:
        """(cache files a claim changed, now deleted; checkout files that changed while claims ran)."""
        after = self._cache_state()
        tampered = sorted(rel for rel, st in after.items()
                          if st != self.before.get(rel) and st != self.written.get(rel))
        for rel in tampered:
            with contextlib.suppress(OSError):
                (self.cache / rel).unlink()
        tree_after = self._tree_state()
        changed = sorted(rel for rel in set(tree_after) | set(self.tree_before)
                         if tree_after.get(rel) != self.tree_before.get(rel))
        return tampered, changed


@contextlib.contextmanager
def exclusive(settings: Settings, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """One verification at a time per cache: a second waits (two would also disturb each other's timings).

    The holder writes its process id into the lock file, so a waiter can say whom it waits for;
    ``on_wait`` hears that once before the wait and once when the wait is over.
    """
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    path = settings.cache_dir / LOCK
    with path.open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read(32).strip()
            message = (f"another verification (process {holder or '?'}) is running claims with {settings.cache_dir}; "
                       "waiting for it to finish")
            log.info("verify: %s", message)
            if on_wait:
                on_wait(message)
            began = time.monotonic()
            fcntl.flock(fh, fcntl.LOCK_EX)
            if on_wait:
                on_wait(f"waited {time.monotonic() - began:.0f} s; running now")
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)
