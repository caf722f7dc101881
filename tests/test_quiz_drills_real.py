"""The real bank's drills, built from the checkout's ledger as the terminal builds them (nothing run):
every drill can be answered from what it shows, shows no harness, and asks for nothing that differs
between machines. The checks here are written apart from :mod:`verify.quiz.drills`' own."""

from __future__ import annotations

import ast
import builtins
import re

import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from verify.quiz.claims import gather
from verify.running import engine

MIN_DRILLS = 40  # 72 when the cache holds this machine's evidence
_MACHINE = re.compile(r"cpu_count|num_threads|perf_counter|monotonic|process_time|\btime\.|getpid|get_device_name")


@pytest.fixture(scope="module")
def bank_drills() -> list:
    ledger = engine.verify(SETTINGS, run=False)
    return list(gather(ledger, SETTINGS.docs_dir).drills)


def unbound(code: str) -> set[str]:
    """Names the code reads that nothing in it binds (any scope), minus builtins: over-generous on
    binding, so a name it reports is read and bound nowhere in the code."""
    tree = ast.parse(code)
    bound: set[str] = set(dir(builtins))
    read: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (read if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return read - bound


def test_the_unbound_check_finds_a_hidden_helper():
    assert unbound("import torch\nx = torch.ones(2)\nreturn {'y': helper(x)}") == {"helper"}
    assert unbound("def h(v):\n    return v\nfor i in range(2):\n    h(i)") == set()


def test_every_drill_can_be_answered_from_what_it_shows(bank_drills):
    print(f"drills: {len(bank_drills)}")
    assert len(bank_drills) >= MIN_DRILLS, len(bank_drills)
    for d in bank_drills:
        assert not unbound(d.code), (d.id, unbound(d.code))
        assert "ctx." not in d.code and "def _(ctx" not in d.code and "# noqa" not in d.code, d.id
        assert not re.search(r"^\s*@(?:claim|bench)\b", d.code, re.M), d.id  # the decorator states the answer


def test_no_drill_asks_for_a_value_of_the_machine(bank_drills):
    for d in bank_drills:
        if d.format != "value":
            continue
        asked = d.expr or d.code
        names = {n.id for n in ast.walk(ast.parse(asked)) if isinstance(n, ast.Name)} if d.expr else set()
        feeding = [line for line in d.code.splitlines() if any(re.match(rf"\s*(?:\w+\s*,\s*)*{re.escape(x)}\b[^=]*=[^=]", line)
                                                                for x in names)]
        assert not _MACHINE.search(asked), (d.id, asked)
        assert not [line for line in feeding if _MACHINE.search(line)], (d.id, feeding)


def test_numbers_in_asked_expressions_are_written_as_in_the_code(bank_drills):
    for d in bank_drills:
        if d.expr:
            assert d.expr in " ".join(d.code.split()) or d.expr in d.code, (d.id, d.expr)
