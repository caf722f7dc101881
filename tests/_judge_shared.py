"""Candidate files of the judge's tests judged together: one child per group (:func:`verify.judge.judge.judge_all`)
instead of one per test, since starting a child (torch, numba, Triton) is most of a judge test's time.

Only candidates that leave the child as they found it belong in a group; each test reads its own report by the name
:meth:`Shared.add` gives back, and asserts on it alone. A file the shared child leaves without a result is judged
again alone by ``judge_all``, so no candidate decides another's verdict.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from verify.judge import judge, problem


class Shared:
    def __init__(self, p: problem.Problem):
        self.problem = p
        self.groups: dict[str, dict[str, str]] = {}
        self.last: set[str] = set()

    def add(self, name: str, source: str, group: str = "shared", last: bool = False) -> str:
        """Register ``source`` (dedented) under ``name`` (a file stem, unique across groups); ``last``: judged after
        the others of its group, where a broken guard could reach no candidate after it, as when judged alone."""
        assert all(name not in sources for sources in self.groups.values()), name
        self.groups.setdefault(group, {})[name] = textwrap.dedent(source)
        if last:
            self.last.add(name)
        return name

    def judge(self, tmp_path_factory: pytest.TempPathFactory) -> dict[str, judge.Report]:
        """Every group judged in one child each; the reports keyed by name."""
        got: dict[str, judge.Report] = {}
        for group, sources in self.groups.items():
            folder = tmp_path_factory.mktemp(group)
            files = []
            for name in sorted(sources, key=lambda n: n in self.last):  # a stable sort: the others keep their order
                files.append(folder / f"{name}.py")
                files[-1].write_text(sources[name], encoding="utf-8")
            got |= judge.judge_all(self.problem, files)
        assert set(got) == {name for sources in self.groups.values() for name in sources}, got
        return got

    def fixture(self) -> Any:
        """A module-scoped fixture (name it ``reports`` in the test file): every group judged once, reports by name."""

        @pytest.fixture(scope="module")
        def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, judge.Report]:
            return self.judge(tmp_path_factory)

        return reports
