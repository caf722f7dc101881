"""The helper that runs workload modules in a fresh process."""

from __future__ import annotations

import pytest

from snippets._workloads.child import run_json


def test_a_failing_child_names_the_module_and_shows_its_stderr():
    with pytest.raises(RuntimeError, match=r"python -m snippets\._workloads\.missing exited with 1:\n.*No module named"):
        run_json("snippets._workloads.missing", timeout=60)
