"""A second checkout used with this environment gets its own questions, claims and benchmark plots.

The ``verify`` package is installed (editable) from this checkout. The project used to take its
root from where the package lives, so a second checkout built with the same virtualenv showed
this checkout's questions, quiz bank and plots. Now the CLI finds the nearest ``mkdocs.yml``
upwards from the working directory and the site hook takes the root from ``config_file_path``.
Here a second checkout is built in ``tmp_path`` and driven with ``sys.executable``. Under the old
behaviour each step below fails: ``run --question <new>`` would say the question is unknown,
``run --question repeat-vs-expand`` would run this checkout's claims, and the built site would
carry this checkout's four questions, its claims and no plot for the new group.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from tests._project import MKDOCS_YML as TINY_YML
from tests._project import REPO, env_for, settings, write
from tests._quiz_samples import page

pytestmark = pytest.mark.slow

QID = "second-checkout"
CLAIMS = (f"{QID}.demo", f"{QID}.sum")
GROUP = "second-checkout-group"
MAIN_ONLY = "repeat-vs-expand"  # a question of this checkout, not of the second one

# The tiny project's config, plus the quiz bank and benchmark fences this test needs.
MKDOCS_YML = TINY_YML.replace("site_name: tiny", "site_name: second\nstrict: true") + """\
        - name: quizbank
          class: quizbank
          format: !!python/name:verify.build.quizbank_fence
        - name: bench
          class: bench
          format: !!python/name:verify.build.bench_fence
"""

SNIPPET = f'''\
from verify.claim import claim

Q = "{QID}"


@claim("{CLAIMS[0]}", question=Q, statement="列表有 {{n}} 个元素。", expect={{"n": 3}})
def _(ctx):
    return {{"n": len([1, 2, 3])}}


@claim("{CLAIMS[1]}", question=Q, statement="一到四的和是十。", expect={{"total": 10}})
def _(ctx):
    return {{"total": sum(range(1, 5))}}
'''

# the sample page shows ``<qid>.demo`` and the evidence fence; the better answer shows the second claim
QUESTION_PAGE = page(
    QID, "第二个检出的题目", 2, "checkout",
    "  - point: 每个检出有自己的题目\n"
    "    keywords: [检出, 题目]\n"
    "    synonyms: {检出: [checkout]}",
    "两个检出共用一个虚拟环境会怎样？", "各自显示自己的题目和证据。",
    better=f"每个检出只显示它自己的题目。\n\n```claim\n{CLAIMS[1]}\n```")

BENCH_PAGE = f"""\
# 基准

```bench
{GROUP}
x: size
```
"""


def _bench_entry(size: int, median_s: float) -> dict:
    name = f"test_second[{size}]"
    return {
        "fullname": f"tests/test_bench_second.py::{name}",
        "name": name,
        "group": GROUP,
        "param": str(size),
        "params": {"n": size},
        "options": {"min_rounds": 5, "timer": "perf_counter"},
        "stats": {"median": median_s, "min": median_s, "max": median_s, "mean": median_s, "rounds": 5,
                  "iterations": 1, "q1": median_s, "q3": median_s, "iqr": 0.0, "stddev": 0.0,
                  "data": [median_s] * 5},
        "extra_info": {"size": size, "median_s": median_s, "q1_s": median_s * 0.95, "q3_s": median_s * 1.05,
                       "spread": 0.1, "inner": 1, "variant": "second", "device": "cpu"},
    }


def _bench_results() -> dict:
    machine = {"cpu_model": "second checkout CPU", "cpu_count": 1, "threads": 1, "torch": "0", "torch_build": "cpu",
               "device": "cpu", "gpu_name": None, "limits": {}}
    run = {"datetime": "2026-01-01T00:00:00+00:00", "machine_info": machine,
           "commit_info": {"id": "0" * 40, "dirty": False, "branch": "main"}}
    return {
        "format": 1,
        "version": "5.3.1",
        "datetime": run["datetime"],
        "machine_info": machine,
        "commit_info": run["commit_info"],
        "benchmarks": [_bench_entry(1024, 1e-5), _bench_entry(4096, 4e-5)],
        "sources": {"tests/test_bench_second.py": "0000000000000000"},
        "runs": {"tests/test_bench_second.py": run},
    }


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    from verify.running.probe import probe  # noqa: PLC0415

    root = tmp_path_factory.mktemp("second")
    write(root, {
        "mkdocs.yml": MKDOCS_YML,
        "docs/index.md": "# 第二个检出\n",
        f"docs/questions/{QID}.md": QUESTION_PAGE,
        "docs/bench.md": BENCH_PAGE,
        f"snippets/{QID}/x.py": SNIPPET,
    })
    shutil.copy(REPO / "docs" / "quiz.md", root / "docs" / "quiz.md")
    shutil.copytree(REPO / "docs" / "assets" / "quiz", root / "docs" / "assets" / "quiz")
    key = probe(settings(root)).device_key  # the device the fence shows first; any key would be listed
    bench = root / "benchmarks" / f"{key}.json"
    bench.parent.mkdir(parents=True)
    bench.write_text(json.dumps(_bench_results(), indent=1), encoding="utf-8")
    return root


def _env(root: Path) -> dict[str, str]:
    """The tests' environment for ``root``, with no VERIFY_* setting that could point at this checkout."""
    env = {k: v for k, v in env_for(root).items() if not k.startswith("VERIFY_")}
    env.update(COLUMNS="400", NO_COLOR="1", TERM="dumb")  # error panels on one line, without colour codes
    return env


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verify.cli", *args], cwd=root, env=_env(root),
                          capture_output=True, text=True, timeout=600)


def _flat(text: str) -> str:
    """Output with rich's box drawing and line breaks removed, so a long path wrapped by rich still matches."""
    return re.sub(r"[\s\u2500-\u257f]+", "", text)


def test_environment_is_this_checkouts():
    """The premise: the interpreter's ``verify`` is this checkout's, not a copy in the second one."""
    import verify  # noqa: PLC0415

    assert Path(verify.__file__).resolve().parent == REPO / "verify"


def test_cli_runs_the_second_checkouts_question(checkout):
    res = _cli(checkout, "run", "--question", QID)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    for cid in CLAIMS:
        assert cid in out, out
    assert MAIN_ONLY not in out


def test_cli_does_not_know_this_checkouts_question(checkout):
    res = _cli(checkout, "run", "--question", MAIN_ONLY)
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert MAIN_ONLY in out
    assert _flat(f"in {checkout.resolve()}") in _flat(out), out  # the root it scanned is the second checkout
    assert _flat(str(REPO)) not in _flat(out), out


def test_site_shows_the_second_checkouts_questions_claims_and_plots(checkout):
    res = _build(checkout)
    assert res.returncode == 0, res.stdout + res.stderr
    site = checkout / "site"

    quiz = json.loads((site / "quiz.json").read_text(encoding="utf-8"))
    assert [q["id"] for q in quiz["questions"]] == [QID]
    assert sorted(quiz["questions"][0]["claims"]) == sorted(CLAIMS)

    html = (site / "quiz" / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="quiz-bank">(.*?)</script>', html, re.S)
    assert m, "the quiz page has no inlined bank"
    inlined = json.loads(m.group(1))
    assert [q["id"] for q in inlined["questions"]] == [QID]

    ledger = json.loads((site / "evidence.json").read_text(encoding="utf-8"))
    assert sorted(c["id"] for c in ledger["claims"]) == sorted(CLAIMS)
    assert {c["question"] for c in ledger["claims"]} == {QID}
    assert all(c["outcome"] == "pass" for c in ledger["claims"]), ledger["claims"]

    bench = (site / "bench" / "index.html").read_text(encoding="utf-8")
    alts = [unescape(a) for a in re.findall(r'<img class="vf-plot" alt="([^"]*)"', bench)]
    assert any(GROUP in a for a in alts), alts


def _build(root: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` in ``root`` (as :func:`tests._project.mkdocs_build`, without VERIFY_* settings)."""
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    return subprocess.run(cmd, cwd=root, env=_env(root), capture_output=True, text=True, timeout=600)
