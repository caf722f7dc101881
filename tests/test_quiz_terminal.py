"""The terminal quiz driven through a pseudo-terminal, as a user would type."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests import _quiz_samples as samples
from tests._quiz_samples import write_interview_page, write_sample_docs

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "numpy", "jieba", "markdown", "markdown_it", "genanki")


@pytest.fixture
def env(tmp_path):
    write_sample_docs(tmp_path / "docs")
    write_interview_page(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text("site_name: sample\n", encoding="utf-8")  # the checkout the quiz finds
    e = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="110",
             PYTHONPROFILEIMPORTTIME="1", PWD=str(tmp_path))
    return e


def spawn(env, *args: str, width: int = 110) -> pexpect.spawn:
    # the terminal echoes typed Chinese while the mock interview's clock redraws its line: the pty can interleave the
    # two mid-character (a CI run failed on that byte), so undecodable bytes read as U+FFFD instead of ending the test
    return pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", *args], env=env, cwd=env["PWD"],
                         encoding="utf-8", codec_errors="replace", timeout=60, dimensions=(50, width))


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
    child.expect("更好的回答")
    child.expect("追问参考")
    child.expect("对照考察点，给自己的回答打标记")  # the candidate judges; nothing is pre-selected
    child.expect("机器分不清一句话和它的反话")
    child.expect(r"\[1\] expand 只改 stride，不拷贝数据")
    child.expect("你的回答里含这些词的句子：")
    child.expect(re.escape("「expand 只改 stride，零拷贝。」（含 stride、零拷贝）"))
    child.expect(re.escape("[1 说到了 / 2 没说到 / 3 说错了]: "))
    assert "回车" not in child.before
    child.sendline("")  # Enter chooses nothing
    child.expect("请输入 1、2 或 3")
    child.sendline("9")
    child.expect("请输入 1、2 或 3")
    child.sendline("1")
    child.expect("→ 说到了")
    child.expect(r"\[2\] repeat 会复制出新内存")
    child.expect("你的回答里含这些词的句子：")  # 零拷贝 contains 拷贝: shown, and the candidate says what it means
    child.expect(re.escape("「expand 只改 stride，零拷贝。」（含 拷贝）"))
    child.expect(re.escape("[1 说到了 / 2 没说到 / 3 说错了]: "))
    child.sendline("2")
    child.expect("按你的标记：困难")  # one of two said: 困难 (FSRS Hard), from the marks
    child.expect("已记录：困难，")
    child.expect("本轮小结")
    child.expect("说到了")
    child.expect("要补的考察点")
    child.expect("没说到  repeat 会复制出新内存")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "%" not in child.before  # no percentage for a free answer

    db = tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3"
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT question_id, rating, coverage FROM reviews").fetchall() == [("expand-demo", 2, 0.5)]
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
    child.expect("已记录：重来，")
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
    give_marks(child, "第 2/2 题")
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
    child.expect(r"已写出 14 张笔记（考察点 10、追问 4、预测输出 0）")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and out.stat().st_size > 1000


MARK_PROMPT = re.escape("[1 说到了 / 2 没说到 / 3 说错了]: ")


def give_marks(child, until: str, mark: str = "2") -> str:
    """Type ``mark`` at every key point until ``until`` shows; what was shown."""
    seen = ""
    while child.expect([until, MARK_PROMPT]) == 1:
        seen += child.before + child.match.group(0)
        child.sendline(mark)
    return seen + child.before


@pytest.mark.parametrize("name", ["good", "inverted", "keywords"])
def test_the_marks_alone_rate_a_good_an_inverted_and_a_keyword_answer(env, tmp_path, name):
    """Nothing is pre-selected for any of the three answers; the same marks give the same rating and coverage."""
    child = spawn(env, "mock", "-n", "1", "--tag", "stride")
    child.expect("开始作答")
    for line in samples.ANSWERS[name].splitlines():
        child.sendline(line)
    child.sendline("")
    child.expect("回答追问")
    child.sendline("")
    child.expect("对照考察点，给自己的回答打标记")
    shown = give_marks(child, "按你的标记：", mark="1")
    assert shown.count("[1 说到了 / 2 没说到 / 3 说错了]: ") == 5 and "回车" not in shown
    if name == "inverted":  # its sentence is shown as containing the words, nothing more
        flat = re.sub(r"\s+", "", shown)
        assert "你的回答里含这些词的句子：「expand会拷贝数据，分配一块新内存，stride和原来一样；」（含stride）" in flat
    child.expect("简单")  # every point marked 说到了, within the time
    child.expect(pexpect.EOF)
    assert "%" not in shown
    conn = sqlite3.connect(tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3")
    assert conn.execute("SELECT rating, coverage FROM reviews").fetchall() == [(4, 1.0)]


def test_a_live_countdown_while_typing(env):
    env = dict(env, TERM="xterm-256color")
    env.pop("NO_COLOR")
    child = spawn(env, "mock", "-n", "1", "--tag", "memory", "--seconds", "65")
    child.expect("开始作答")
    child.expect(r"剩余 1:0(\d)")
    first = child.match.group(1)
    time.sleep(2.2)
    child.send("expand 只改 stride，")
    child.expect("只改 stride，")
    child.expect(r"剩余 1:0(\d)")
    assert child.match.group(1) != first  # the clock ticked while the answer was typed
    child.send("零拷贝。\r\r")
    child.expect("用时 0:0")
    child.expect("回答追问")
    child.sendline("")
    give_marks(child, "按你的标记：")
    child.expect(pexpect.EOF)


LONG = "\n\n".join(f"### 第 {i} 节\n\n" + "这一节讲 stride 和存储的关系，写得很长。" * 30 for i in (1, 2, 3))


def test_a_long_answer_folds_into_sections_and_the_link_is_a_url(env, tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: sample\nsite_url: https://example.org/quiz/\n", encoding="utf-8")
    page = tmp_path / "docs" / "questions" / "repeat-vs-expand.md"
    page.write_text(page.read_text(encoding="utf-8").replace("### expand\n\nexpand 只改 stride。\n\n### repeat\n\nrepeat 拷贝数据。", LONG),
                    encoding="utf-8")
    child = spawn(env, "cards", "-n", "1", "--tag", "stride")
    child.expect("想好后按回车翻面")
    child.sendline("")
    child.expect("共 3 节，已折叠")
    child.expect(r"\[2\] 第 2 节")
    child.expect("输入编号展开一节")
    assert "写得很长" not in child.before  # folded
    child.sendline("2")
    child.expect(r"\[2\] 第 2 节")
    child.expect("写得很长")
    child.expect("输入编号展开一节")
    child.sendline("")
    child.expect("https://example.org/quiz/questions/repeat-vs-expand/")
    child.expect(r"自评 \[")
    child.sendline("3")
    child.expect(pexpect.EOF)


def test_stats_and_help_are_in_chinese(env):
    child = spawn(env, "stats")
    child.expect("新卡")
    child.expect("预测输出：已练 0 / 0 道")
    child.expect(pexpect.EOF)
    assert "New" not in child.before and "Learning" not in child.before
    child = spawn(env, "mock", "--help")
    child.expect(pexpect.EOF)
    assert "每题限时" in child.before and "显示这段帮助并退出" in child.before and "选项" in child.before
    assert "how many" not in child.before and "Show this message" not in child.before


def test_import_reports_unknown_ids_and_keeps_counts(env, tmp_path):
    from tests.test_quiz_progress import BROWSER_EXPORT  # noqa: PLC0415

    file = tmp_path / "browser.json"
    file.write_text(json.dumps(BROWSER_EXPORT), encoding="utf-8")
    child = spawn(env, "import", str(file))
    child.expect("已导入 1 张卡片的进度、1 条自评")
    child.expect("跳过 1 个题库里没有的 id：<img src=x onerror=alert\\(1\\)>")
    child.expect(pexpect.EOF)
    child = spawn(env, "stats")
    child.expect("学习中")
    child.expect(pexpect.EOF)
    file.write_text("{broken", encoding="utf-8")
    child = spawn(env, "import", str(file))
    child.expect("导入失败")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


@pytest.mark.slow
def test_drills_in_the_terminal(tmp_path):
    from tests.test_quiz_site import build_sample_site  # noqa: PLC0415

    root = build_sample_site(tmp_path / "site")
    bank = json.loads((root / "site" / "quiz.json").read_text(encoding="utf-8"))
    drills = {d["line"]: d for d in bank["drills"]}
    e = {k: v for k, v in os.environ.items() if not k.startswith("VERIFY_")}
    e.update(XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="200", PWD=str(root))
    child = spawn(e, "drill", "-n", str(len(drills)), "--seed", "3", width=200)
    for _ in drills:
        child.expect(r"第 \d/\d 道 · 预测输出")
        child.expect(r"import torch")  # the code as a drill shows it: no harness (def _(ctx):)
        child.expect(r"snippets/samples/demo\.py:(\d+)")  # the panel's subtitle names the claim's line
        d = drills[int(child.match.group(1))]
        if d["format"] == "faster":
            child.expect(r"哪个更快？\[1 ")
            child.sendline(str(d["options"].index(d["faster"]) + 1))
            child.expect("几倍")
            child.sendline(str(d["factor"]))
        else:
            child.expect("你的预测：")
            child.sendline(d["answer"] if d["format"] == "exception" else d["answer_text"])
        child.expect("✓ 预测对了")
        child.expect("观测于 " + re.escape(d["device"]))
        child.expect(r"回车 = 良好")
        child.sendline("")
    child.expect("本轮小结")
    child.expect(pexpect.EOF)
    conn = sqlite3.connect(tmp_path / "data" / "verified-infra-interview" / "quiz.sqlite3")
    assert sorted(conn.execute("SELECT question_id, rating FROM reviews").fetchall()) == sorted((d["id"], 3) for d in drills.values())


def test_a_round_of_items_with_one_right_answer_says_which_were_right_and_the_score():
    """The summary of a 判断题 / 计算题 / drill round has a 结果 column and a score; a mock interview's has neither."""
    from verify.quiz import practice  # noqa: PLC0415

    rows = [practice.Row("A · 判断", "a/", 3, right=True), practice.Row("B · 计算", "b/", 1, right=False),
            practice.Row("C · 计算", "c/", 3, right=True)]
    with practice.console.capture() as out:
        practice._summary(rows, mock=False)
    text = out.get()
    assert "结果" in text and "答对 2 / 3 道" in text
    assert [line for line in text.splitlines() if "B · 计算" in line][0].count("错") == 1
    with practice.console.capture() as out:
        practice._summary([practice.Row("Q", "q/", 3, marks=("said",), points=("p",))], mock=True)
    assert "结果" not in out.get() and "答对" not in out.get()
