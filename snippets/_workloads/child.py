"""Run a workload module in a fresh Python process and read the JSON object it prints last.

Some claims need a process whose state is known: an empty in-memory compiler cache, a heap
that holds nothing else. The child gets the project on its path and any extra environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_json(module: str, *args: str, env: dict[str, str] | None = None, timeout: float = 60.0) -> dict[str, Any]:
    """``python -m module args...`` with ``env`` added; the last line of its output, parsed."""
    full = dict(os.environ, **(env or {}))
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), full.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", module, *args], env=full, cwd=ROOT,
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        command = " ".join(["python -m", module, *args])
        raise RuntimeError(f"{command} exited with {out.returncode}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
