"""The terminal quiz's 手撕 mode, driven through a pseudo-terminal: the editor writes files a candidate would,
the judge decides, and the rating the result suggests is what the FSRS store records."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPO = ROOT / "snippets" / "judge" / "topo_sort_python"
EDITOR = """import shutil, sys
from pathlib import Path
queue = Path(sys.argv[0]).with_name("queue.txt")
first, *rest = queue.read_text().splitlines()
shutil.copyfile(first, sys.argv[1])
queue.write_text("\\n".join(rest))
"""


@pytest.fixture
def env(tmp_path):
    (tmp_path / "editor.py").write_text(EDITOR, encoding="utf-8")
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="110",
                EDITOR=f"{sys.executable} {tmp_path / 'editor.py'}")


def _queue(tmp_path: Path, *files: Path) -> None:
    (tmp_path / "queue.txt").write_text("\n".join(str(f) for f in files), encoding="utf-8")


def _spawn(env) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", "handwrite", "--problem", "topo-sort-python",
                                          "--root", str(ROOT)], env=env, cwd=str(ROOT), encoding="utf-8",
                         timeout=90, dimensions=(50, 110))


def _ratings(tmp_path: Path) -> list[tuple[str, int]]:
    db = tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3"
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT question_id, rating FROM reviews ORDER BY id").fetchall()


def test_a_pass_at_the_first_judging_suggests_good_and_shows_the_reference(env, tmp_path):
    _queue(tmp_path, TOPO / "solutions" / "kahn.py")
    child = _spawn(env)
    child.expect("手撕 · ")
    child.expect("结果：通过")
    child.expect("参考解")
    child.expect(r"回车 = 良好")
    child.sendline("")
    child.expect("本轮小结")
    child.expect(pexpect.EOF)
    assert _ratings(tmp_path) == [("handwrite:topo-sort-python", 3)]
    kept = tmp_path / "data" / "verified-infra-interview" / "handwrite" / "topo-sort-python.py"
    assert kept.read_text(encoding="utf-8") == (TOPO / "solutions" / "kahn.py").read_text(encoding="utf-8")


def test_a_wrong_answer_is_judged_and_giving_up_suggests_again(env, tmp_path):
    mutant = sorted((TOPO / "mutants").glob("*.py"))[0]
    _queue(tmp_path, mutant)
    child = _spawn(env)
    child.expect("结果：未通过")
    child.expect("再改一次还是看参考解")
    child.sendline("2")
    child.expect("参考解")
    child.expect(r"回车 = 重来")
    child.sendline("")
    child.expect(pexpect.EOF)
    assert _ratings(tmp_path) == [("handwrite:topo-sort-python", 1)]


def test_passing_after_a_fix_suggests_hard(env, tmp_path):
    mutant = sorted((TOPO / "mutants").glob("*.py"))[0]
    _queue(tmp_path, mutant, TOPO / "solutions" / "kahn.py")
    child = _spawn(env)
    child.expect("结果：未通过")
    child.sendline("1")
    child.expect("结果：通过")
    child.expect(r"回车 = 困难")
    child.sendline("")
    child.expect(pexpect.EOF)
    assert _ratings(tmp_path) == [("handwrite:topo-sort-python", 2)]


def test_an_unknown_problem_is_refused_by_name(env):
    child = pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", "handwrite", "--problem", "no-such",
                                           "--root", str(ROOT)], env=env, cwd=str(ROOT), encoding="utf-8", timeout=60)
    child.expect("没有这道手撕题：no-such")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus != 0
