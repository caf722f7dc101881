"""Building and running plain C++ for the claims: copy sources into a claim's work folder, run tools."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def stage(ctx, names: tuple[str, ...]) -> Path:
    """Copy the snippet's C++ sources ``names`` into the claim's work directory and return it."""
    for name in names:
        shutil.copy(ctx.snippet_dir() / name, ctx.workdir / name)
    return ctx.workdir


def sh(*cmd: str, cwd: Path) -> str:
    """Run a tool; its stdout, or RuntimeError with its stderr when it fails."""
    done = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.strip()}")
    return done.stdout
