"""The terminal quiz driven through a pseudo-terminal, as a user would type."""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import pexpect
import pytest

from verify.quiz.samples import write_sample_docs

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "numpy", "jieba", "markdown", "markdown_it", "genanki")


@pytest.fixture
def env(tmp_path):
    write_sample_docs(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text("site_name: sample\n", encoding="utf-8")  # the checkout the quiz finds
    e = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="110",
             PYTHONPROFILEIMPORTTIME="1", PWD=str(tmp_path))
    return e


def spawn(env, *args: str) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", *args], env=env, cwd=env["PWD"],
                         encoding="utf-8", timeout=60, dimensions=(50, 110))


def imported(text: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"import time:\s+\d+ \|\s+\d+ \|\s+([\w.]+)", text)}


def test_mock_interview_end_to_end(env, tmp_path):
    t0 = time.monotonic()
    child = spawn(env, "mock", "-n", "1", "--tag", "memory", "--seconds", "60")
    child.expect("第 1/1 题")
    first_question_s = time.monotonic() - t0
    before = imported(child.before)
    child.expect("expand 和 repeat 的区别")
    child.expect("限时 1:00")
    print(f"first question after {first_question_s:.2f}s (with import profiling on)")
    # nothing heavy is imported before the first question is on screen
    assert not {m.split(".")[0] for m in before} & set(HEAVY), sorted(before)
    assert "typer" in {m.split(".")[0] for m in before}  # the profile really was read

    child.expect("开始作答")
    child.sendline("expand 只改 stride，零拷贝。")
    child.sendline("")
    child.expect("用时 0:")
    child.expect("追问")
    child.expect("对 expand 的结果原地写会怎样")
    child.sendline("会报错")
    child.sendline("")
    child.expect("考察点覆盖率 50%")  # expand point covered, repeat point missed
    child.expect("✓ 覆盖")
    child.expect("✗ 遗漏")
    child.expect("更好的回答")
    child.expect("追问参考")
    child.expect(r"自评 \[")
    child.sendline("9")
    child.expect("请输入 1、2、3 或 4")
    child.sendline("3")
    child.expect("已记录：良好 Good")
    child.expect("本轮小结")
    child.expect("最薄弱的考察点")
    child.expect("repeat 会复制出新内存")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    db = tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3"
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT question_id, rating FROM reviews").fetchall() == [("expand-demo", 3)]
    conn.close()

    # Good on a new card schedules a learning step minutes ahead: nothing is due now
    child = spawn(env, "mock", "--due")
    child.expect("没有到期的卡片")
    child.expect(pexpect.EOF)


def test_corrupted_progress_moved_aside(env, tmp_path):
    db = tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"garbage" * 500)
    child = spawn(env, "cards", "-n", "1", "--seed", "1")
    child.expect("进度数据库已损坏")
    child.expect("corrupt-")
    child.expect("想好后按回车翻面")
    child.sendline("")
    child.expect("更好的回答")
    child.expect("考察点")
    child.expect(r"自评 \[")
    child.sendline("1")
    child.expect("已记录：重来 Again")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert len(list(db.parent.glob("quiz.sqlite3.corrupt-*"))) == 1
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM cards").fetchone() == (1,)


def test_ctrl_d_keeps_rated_questions(env, tmp_path):
    child = spawn(env, "mock", "-n", "2", "--seed", "2")
    child.expect("开始作答")
    child.sendline("x")
    child.sendline("")
    child.expect("回答追问")
    child.sendline("")
    child.expect(r"自评 \[")
    child.sendline("4")
    child.expect("第 2/2 题")
    child.expect("开始作答")
    child.sendeof()
    child.expect("已退出")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    conn = sqlite3.connect(tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3")
    assert conn.execute("SELECT COUNT(*) FROM reviews").fetchone() == (1,)


def test_malformed_page_fails_clearly(env, tmp_path):
    page = tmp_path / "docs" / "questions" / "compile-demo.md"
    page.write_text(page.read_text(encoding="utf-8").replace("difficulty: 3", "difficulty: hard"), encoding="utf-8")
    child = spawn(env, "mock")
    child.expect("docs/questions/compile-demo.md: difficulty")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


def test_anki_command(env, tmp_path):
    out = tmp_path / "deck.apkg"
    child = spawn(env, "anki", "--out", str(out))
    child.expect("3 张笔记")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and out.stat().st_size > 1000
