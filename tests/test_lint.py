"""Static checks of the project's own code: ruff (errors, likely bugs) and mypy (the verify package)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._project import REPO_SETTINGS as SETTINGS

ROOT = SETTINGS.root


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent))
    if path is None:
        pytest.fail(f"{name} is not installed in this environment: pip install -e '.[test]'")
    return path


def test_ruff_finds_nothing():
    proc = subprocess.run([_tool("ruff"), "check", "--output-format", "concise", "verify", "snippets", "tests"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_finds_nothing_in_verify():
    proc = subprocess.run([_tool("mypy"), "verify"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_the_layers_hold():
    """pyproject.toml's import-linter contracts: each layer of verify/ imports only from below it, and
    verify/ imports no snippet (tests/test_no_snippet_code.py: nor loads one by name or path)."""
    proc = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_no_import_cycle_in_verify():
    """No module of verify/ imports, directly or through others, a module that imports it back."""
    import grimp  # noqa: PLC0415  (import-linter's import graph)

    graph = grimp.build_graph("verify", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported != module and graph.chain_exists(importer=imported, imported=module):
                cycles.append(f"{module} -> {imported} -> … -> {module}")
    assert not cycles, "\n".join(cycles)
