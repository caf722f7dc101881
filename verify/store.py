"""Small, safe file primitives: atomic JSON writes and reads that report corruption."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.verify")

CORRUPT = object()


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON next to ``path`` and rename it over: a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
