"""The one place the judge's parent loads a problem's own files by path: its reference, cases and mutants.

These are the checkout's reviewed files, run in the parent so that the expected values never come from
the process that runs the candidate. A candidate's file is never loaded here: it runs only in the child
(:mod:`verify.judge.child`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def module(path: Path, name: str) -> ModuleType:
    """The module in ``path`` under a private name (not left in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(f"_judge_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # while it loads: dataclasses and typing look a module up by name
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # nothing written beside the problem
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
        sys.dont_write_bytecode = writes
    return mod
