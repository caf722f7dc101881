"""``verify quiz`` speaks Chinese throughout: help pages, the framework's errors, unknown ids, the ratings."""

from __future__ import annotations

import os
import re
import sys

import pexpect
import pytest
from typer.testing import CliRunner

from tests._quiz_samples import write_interview_page, write_sample_docs
from verify.cli.main import app

COMMANDS = ["mock", "cards", "drill", "objective", "handwrite", "stats", "import", "export", "anki"]
# what typer and its copy of Click write in English; none of it may reach a quiz page or error
FRAMEWORK = ("Usage", "Options", "Arguments", "Commands", "Show this message", "Try ", "for help", "Error",
             "No such", "Missing", "Invalid value", "is not a valid", "requires", "Got unexpected", "Did you mean",
             "Possible options", "[default", "[required", "<int>", "<str>", "<path>", "Traceback")
# Latin words the quiz's own help may use: names of things (the commands, which are typed), not sentences
ALLOWED = {*COMMANDS, "verify", "quiz", "export", "mkdocs", "yml", "site_url", "judge", "calc", "FSRS", "Anki", "apkg", "GUID",
           "JSON", "stride", "questions", "python", "overhead", "id", "interview",  # interview-quiz.apkg: a default
           "EDITOR", "GPU", "list"}  # the environment variable the 手撕 mode opens; GPU; `verify judge list`


def invoke(*args: str):
    return CliRunner().invoke(app, ["quiz", *args], prog_name="verify", env={"COLUMNS": "120", "NO_COLOR": "1"})


@pytest.fixture
def root(tmp_path):
    write_sample_docs(tmp_path / "docs")
    write_interview_page(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text("site_name: sample\n", encoding="utf-8")
    return tmp_path


def framework_words(text: str) -> list[str]:
    return [w for w in FRAMEWORK if w in text]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_quiz_help_page_is_chinese(command):
    out = invoke(*([command] if command else []), "--help")
    assert out.exit_code == 0, out.output
    assert "用法：verify quiz" in out.output and "选项" in out.output and "显示这段帮助并退出。" in out.output
    assert not framework_words(out.output), framework_words(out.output)
    prose = re.sub(r"(?<![\w-])--?[\w-]+", " ", out.output)  # option names are what the user types
    assert set(re.findall(r"[A-Za-z_]{2,}", prose)) <= ALLOWED, set(re.findall(r"[A-Za-z_]{2,}", prose)) - ALLOWED


def test_help_shows_defaults_arguments_and_commands_in_chinese():
    assert "[默认：5]" in invoke("mock", "--help").output
    page = invoke("import", "--help").output
    assert "参数" in page and "进度文件" in page and "<路径>" in page and "[必填]" in page
    assert "命令" in invoke("--help").output and "命令 [参数]..." in invoke("--help").output
    assert "显示这段帮助并退出" in invoke("mock", "-h").output  # -h too


def test_the_other_commands_keep_their_english_help():
    """The Chinese words are the quiz's only: typer's panel titles are put back once a quiz page is drawn."""
    assert "选项" in invoke("mock", "--help").output
    out = CliRunner().invoke(app, ["run", "--help"], prog_name="verify", env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert out.exit_code == 0 and "Usage: verify run" in out.output and "Options" in out.output
    assert "选项" not in out.output and "[default: any]" in out.output


@pytest.mark.parametrize("args, said", [
    (["mock", "--bogus"], "没有 --bogus 这个选项。"),
    (["mock", "--questoin", "x"], "没有 --questoin 这个选项，是不是想用 --question。"),
    (["stats", "--du"], "没有 --du 这个选项，是不是想用 --db。"),
    (["--bogus"], "没有 --bogus 这个选项。"),
    (["import"], "缺少参数 '进度文件'。"),
    (["mock", "-n", "abc"], "'--count' / '-n' 的值不对：'abc' 不是整数。"),
    (["mock", "-n"], "-n 后面要跟一个值。"),
    (["mock", "--due", "x"], "多出了参数：x。"),
    (["mokc"], "没有 mokc 这个命令，是不是想用 mock。"),
    (["objective", "--kind", "judgement"], "--kind 的值不对：应为 judge 或 calc，而不是 'judgement'"),
])
def test_framework_errors_are_chinese_with_exit_status_2(args, said):
    out = invoke(*args)
    assert out.exit_code == 2, out.output
    flat = re.sub(r"[│╭╮╰╯─\s]+", "", out.output)  # the panel wraps a long line
    assert re.sub(r"\s+", "", said) in flat, out.output
    assert "错误" in out.output and not framework_words(out.output), out.output


def test_an_error_shows_the_usage_line_and_where_help_is():
    out = invoke("mock", "--bogus")
    assert "用法：verify quiz mock [选项]" in out.output and "运行 verify quiz mock --help 查看帮助。" in out.output


@pytest.mark.parametrize("command", ["mock", "cards", "drill", "objective"])
def test_a_mistyped_question_id_names_the_nearest_ids(root, command):
    out = invoke(command, "--question", "repeat-vs-expnad", "--root", str(root))
    assert out.exit_code == 2, out.output
    flat = re.sub(r"[│╭╮╰╯─\s]+", "", out.output)
    assert "题库里没有id为'repeat-vs-expnad'的题；最接近的：repeat-vs-expand。" in flat, out.output
    assert "verify run" not in out.output and not framework_words(out.output)


def test_an_id_like_none_lists_the_bank_and_a_tag_is_checked_too(root):
    flat = re.sub(r"[│╭╮╰╯─\s]+", "", invoke("mock", "--question", "zzz", "--root", str(root)).output)
    assert "现有的题：compile-demo、dispatch-demo、expand-demo、repeat-vs-expand。" in flat
    out = invoke("cards", "--tag", "strdie", "--root", str(root))
    assert out.exit_code == 2 and "没有带 'strdie' 标签的题；最接近的：stride" in out.output, out.output
    out = invoke("cards", "--tag", "STRIDE", "--root", str(root))
    assert out.exit_code == 2 and "最接近的：stride" in out.output  # letter case aside


def test_a_round_rates_in_chinese_and_question_picks_the_card(root):
    """``cards --question`` asks that question; the rating prompt and the record carry no English word."""
    env = dict(os.environ, XDG_DATA_HOME=str(root / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="110")
    child = pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", "cards", "--question", "compile-demo"],
                          env=env, cwd=str(root), encoding="utf-8", timeout=60, dimensions=(50, 110))
    child.expect("想好后按回车翻面")
    asked = child.before
    child.sendline("")
    child.expect(r"自评 \[")
    child.expect(r"\]")
    prompt = child.before
    child.sendline("2")
    child.expect("已记录：困难，下次复习")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "torch.compile 为什么能加速" in asked, asked
    assert prompt.split() == ["1", "重来", "/", "2", "困难", "/", "3", "良好", "/", "4", "简单"], prompt
    assert not re.search(r"Again|Hard|Good|Easy", child.before)
