"""A snippet file beside this one, loaded by its path: snippet folders are not importable packages.

A claim that reuses another file's kernels or constants loads it here, once per worker (the module is
kept in ``sys.modules``); naming the file in the claim's source keys the claim on it. Loading runs the
file's ``@claim`` declarations too, which only fills the worker's table of claims.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load(path: Path) -> ModuleType:
    """The module of the snippet file at ``path``, loaded once."""
    name = f"_sibling_{path.parent.name.replace('-', '_')}_{path.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader, path
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
