"""The console script: clear errors for wrong arguments, and the commands do what they say."""

from __future__ import annotations

from typer.testing import CliRunner

from tests._project import GOOD_SNIPPET, write
from verify.cli.main import app

runner = CliRunner()


def _invoke(root, *args):
    return runner.invoke(app, [*args, "--root", str(root)])


def test_unknown_claim_question_and_device_are_clear_errors(tmp_path):
    root = write(tmp_path, {"snippets/tiny/basic.py": GOOD_SNIPPET})
    out = _invoke(root, "run", "--id", "nope.*")
    assert out.exit_code == 2 and "no claim matches 'nope.*'" in out.output
    out = _invoke(root, "run", "--question", "elsewhere")
    assert out.exit_code == 2 and "unknown question 'elsewhere'" in out.output and "tiny" in out.output
    out = _invoke(root, "run", "--device", "tpu")
    assert out.exit_code == 2 and "--device must be any, cpu or cuda" in out.output


def test_run_status_and_clear(tmp_path):
    root = write(tmp_path, {"snippets/tiny/basic.py": GOOD_SNIPPET})
    out = _invoke(root, "run", "--id", "tiny.stride")
    assert out.exit_code == 0, out.output
    assert "1 claim(s), 1 run now" in out.output and "1 pass" in out.output
    out = _invoke(root, "status")
    assert out.exit_code == 0 and "tiny.stride" in out.output and "verified-here" in out.output
    assert "not run yet" in out.output  # tiny.error was never run
    out = _invoke(root, "clear")
    assert out.exit_code == 0 and "removed 1 cached" in out.output


def test_run_exits_non_zero_with_the_summary_when_a_claim_fails(tmp_path):
    root = write(tmp_path, {"snippets/tiny/basic.py": GOOD_SNIPPET.replace("[0, 1]", "[9, 9]")})
    out = _invoke(root, "run")
    assert out.exit_code == 1
    assert "tiny.stride" in out.output and "expected == [9, 9], observed [0, 1]" in out.output
