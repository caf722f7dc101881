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


CACHED = ("evidence/cpu-x/tiny.stride.json", "evidence/cpu-x/failed/tiny.error.json", "render/site/claim-1.html",
          "render/code/2.html", "bench_svg/3.svg", "scan.json", "prose.json", "torch_extensions/m/m.so", "run.lock")


def test_clear_all_empties_every_cache_but_the_run_lock(tmp_path):
    root = write(tmp_path, {"snippets/tiny/basic.py": GOOD_SNIPPET})
    cache = root / ".cache"
    for rel in CACHED:
        (cache / rel).parent.mkdir(parents=True, exist_ok=True)
        (cache / rel).write_text("x")
    out = _invoke(root, "clear", "--all")
    assert out.exit_code == 0, out.output
    assert "removed 9 cached file(s)" in out.output  # the probe that write() seeded, and every file above but the lock
    assert [p.name for p in cache.iterdir()] == ["run.lock"]
    assert (root / "snippets/tiny/basic.py").exists()
    assert _invoke(root, "clear", "--all").exit_code == 0


def test_clear_all_takes_no_ids_and_never_empties_a_folder_holding_the_checkout(tmp_path):
    root = write(tmp_path, {"snippets/tiny/basic.py": GOOD_SNIPPET})
    out = _invoke(root, "clear", "--all", "--id", "tiny.*")
    assert out.exit_code == 2 and "takes no --id" in out.output
    out = runner.invoke(app, ["clear", "--all", "--root", str(root)], env={"VERIFY_CACHE_DIR": str(root.parent)})
    assert out.exit_code == 2 and "not only caches" in out.output
    assert (root / "snippets/tiny/basic.py").exists() and (root / ".cache/probe.json").exists()
