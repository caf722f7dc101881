"""Where the project and its cache are: one place for every module that needs to know."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The checkout: $VERIFY_ROOT, or the folder above the ``verify`` package."""
    return Path(os.environ.get("VERIFY_ROOT") or Path(__file__).resolve().parent.parent)


def cache_dir(root: Path) -> Path:
    """The project's cache folder: $VERIFY_CACHE_DIR, or .cache in the checkout."""
    return Path(os.environ.get("VERIFY_CACHE_DIR", root / ".cache"))
