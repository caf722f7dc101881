"""How long the terminal quiz takes to put the first question on screen.

The target, under 0.5 s, is one machine's number: it is kept beside the result as met or missed
(0.60 s on a 2-core Xeon missed it). What the test asserts is measured in its own run: the quiz
starts in less than 0.8x the time Python takes to import torch, which it must never do (a quiz
that imported torch would take longer than the import alone; 0.34x measured on a Xeon).

The second benchmark is every mode (mock, cards, drill, objective) on the checkout right after a site
build, which leaves the bank for the terminal (verify/quiz/built.py): the first item must show within
2 s, or within 1.5x `import torch` on a slower machine (issue 36). *Cold* is each mode's first start
after the build, with no progress database yet; *warm* the median of the starts after it. Both are
kept as ratios to `import torch`, measured in the same run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from verify.bench.targets import target
from tests._quiz_samples import write_sample_docs

pytestmark = pytest.mark.bench
ROOT = Path(__file__).resolve().parent.parent


def _import_torch() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, timeout=120)
    return time.perf_counter() - start


@pytest.mark.benchmark(group="project-speed")
def test_terminal_quiz_first_question_well_before_torch_imports(benchmark, tmp_path):
    write_sample_docs(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text("site_name: sample\n", encoding="utf-8")  # the checkout the quiz finds
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="110")

    def first_question() -> float:
        start = time.perf_counter()
        child = pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", "mock", "-n", "1", "--seconds", "60"],
                              env=env, cwd=str(tmp_path), encoding="utf-8", timeout=30, dimensions=(50, 110))
        child.expect("第 1/1 题")
        elapsed = time.perf_counter() - start
        child.terminate(force=True)
        return elapsed

    first_question()  # warm the OS file cache, as a second launch by a user would be
    _import_torch()
    torch_s = statistics.median(_import_torch() for _ in range(3))
    benchmark.pedantic(first_question, rounds=7, iterations=1)
    median = benchmark.stats.stats.median
    benchmark.extra_info.update(variant="终端练习出第一题", median_s=median, import_torch_s=torch_s, over_import_torch=median / torch_s)
    target(benchmark, "第一题在 0.5 s 内出现", median < 0.5)
    assert median / torch_s < 0.8, f"first question after {median:.2f}s, {median / torch_s:.2f}x `import torch`"


MODES = {"mock": "第 1/1 题", "cards": "第 1/1 题", "drill": "第 1/1 道", "objective": "第 1/1 道"}
BUILDING = "正在生成题库"


def _first_item(mode: str, env: dict[str, str], db: Path) -> float:
    """Seconds from starting `verify quiz <mode>` in the checkout to its first item on screen; fails when
    the quiz had to make the bank itself (the build's bank was not current)."""
    start = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", mode, "-n", "1", "--db", str(db)],
                          env=env, cwd=str(ROOT), encoding="utf-8", timeout=120, dimensions=(50, 110))
    child.expect([MODES[mode], BUILDING])
    elapsed = time.perf_counter() - start
    said = child.before + child.after
    child.terminate(force=True)
    assert BUILDING not in said, f"{mode}: the bank the site build left was not current: {said[-500:]}"
    return elapsed


@pytest.fixture(scope="module")
def after_build(tmp_path_factory):
    """The checkout's site built (claims read from the cache, none run), then each mode's first start: the
    cold times, and `import torch` timed in the same run."""
    tmp = tmp_path_factory.mktemp("quizbuilt")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", VERIFY_NO_RUN="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(tmp / "site")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the build's environment (its cache folder, its device): what the bank was left for
    quiz_env = env | {"XDG_DATA_HOME": str(tmp / "data"), "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "110"}
    cold = {mode: _first_item(mode, quiz_env, tmp / f"{mode}.sqlite3") for mode in MODES}
    _import_torch()
    torch_s = statistics.median(_import_torch() for _ in range(3))
    return {"env": quiz_env, "tmp": tmp, "cold": cold, "torch_s": torch_s}


@pytest.mark.benchmark(group="project-speed")
@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_shows_its_first_item_at_once_after_a_site_build(benchmark, after_build, mode):
    env, tmp, torch_s = after_build["env"], after_build["tmp"], after_build["torch_s"]
    cold = after_build["cold"][mode]
    benchmark.pedantic(lambda: _first_item(mode, env, tmp / f"{mode}.sqlite3"), rounds=5, iterations=1)
    warm = benchmark.stats.stats.median
    benchmark.extra_info.update(variant=f"构建网站后终端练习（{mode}）出第一题", cold_s=cold, warm_s=warm,
                                import_torch_s=torch_s, cold_over_import_torch=cold / torch_s,
                                warm_over_import_torch=warm / torch_s)
    target(benchmark, "构建网站后，每种练习的第一题在 2 s 内出现", cold < 2.0)
    for name, seconds in (("cold", cold), ("warm", warm)):
        assert seconds < 2.0 or seconds < 1.5 * torch_s, \
            f"{mode} ({name}): first item after {seconds:.2f}s, {seconds / torch_s:.2f}x `import torch` ({torch_s:.2f}s)"
