"""How long the terminal quiz takes to put the first question on screen.

The target, under 0.5 s, is one machine's number: it is kept beside the result as met or missed
(0.60 s on a 2-core Xeon missed it). What the test asserts is measured in its own run: the quiz
starts in less than 0.8x the time Python takes to import torch, which it must never do (a quiz
that imported torch would take longer than the import alone; 0.34x measured on a Xeon).
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
