"""The checkout's git facts: the commit records name, and whether a commit a bundle names is ours."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path


def git_commit(root: Path) -> str:
    """The checkout's commit (``-dirty`` with local changes); ``VERIFY_GIT_COMMIT`` names it where the
    tree travelled without its ``.git`` (a lent GPU machine gets a copy of the working tree)."""
    named = os.environ.get("VERIFY_GIT_COMMIT", "").strip()
    if named:
        return named
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if out.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True, timeout=10).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


@functools.cache
def in_history(root: Path, commit: str) -> bool | None:
    """Whether ``commit`` (as a record names it, ``-dirty`` allowed) is an ancestor of this checkout's HEAD.

    ``None`` when it cannot be told (no git, no checkout, a commit text that is not a hex name).
    """
    name = commit.removesuffix("-dirty")
    if not re.fullmatch(r"[0-9a-f]{7,40}", name):
        return False if name and name != "unknown" else None
    def git(*args: str) -> int | None:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=10).returncode
        except (OSError, subprocess.TimeoutExpired):
            return None

    known = git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    if known != 0:
        return False if known == 1 else None  # 1: no such commit here; else no git or no checkout
    return git("merge-base", "--is-ancestor", name, "HEAD") == 0
