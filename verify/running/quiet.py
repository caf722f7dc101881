"""One process measures at a time on a machine: a lock that timing takes alone and other work shares.

Performance claims compare timings, so nothing of ours may share the machine with them. Within
one verification the runner already runs them last, one at a time; two verifications on one
machine (two shards, or a shard beside a site build) coordinate through this lock: ordinary
claims hold it shared, a performance claim holds it exclusively, so it waits until no ordinary
claim of any of them is running, and two performance claims never overlap.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def lock_path() -> Path:
    """Machine-wide, per user: the system's temporary folder, not a process's ``TMPDIR``."""
    base = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())
    return base / f"verify-timing-{os.getuid()}.lock"


@contextlib.contextmanager
def hold(measuring: bool) -> Iterator[None]:
    """Hold the machine's lock: exclusively while ``measuring``, shared otherwise."""
    with lock_path().open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX if measuring else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
