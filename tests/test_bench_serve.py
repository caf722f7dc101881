"""Live editing of the real site: seconds from saving a snippet to the reloaded page showing the new value.

A copy of this checkout's site (config, pages, snippets, recorded evidence and benchmarks, the
library) with its evidence and render caches is served with ``mkdocs serve --no-strict``, as
``make serve`` serves it. One claim is added to a real snippet file (:data:`SNIPPET`); each round
saves that file with another list length and then does what the page's live-reload script does:
it waits on the server's ``/livereload/<epoch>/<id>`` signal, fetches the page again and reads the
claim's value, until the page shows the new length. A round therefore counts the save being
noticed, the file's claims running again (all of them: the file's hash changed), the rebuild of the
whole site and the page's fetch, but not chromium's parse and paint (``tests/test_serve.py`` drives
chromium through the same edit). No target: the median is recorded, and each round must re-run
that one file's claims only.
"""

from __future__ import annotations

import re
import shutil
import statistics
import time
import urllib.request
from pathlib import Path

import pytest

from tests._project import REPO, REPO_SETTINGS
from tests.test_serve import mkdocs_serve
from verify.running import engine

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SNIPPET = "snippets/repeat-vs-expand/views.py"
PAGE = "docs/questions/repeat-vs-expand.md"
URL = "/questions/repeat-vs-expand/"
CLAIM = "views.live-edit"
LIVE = '''

LIVE_ITEMS = {items!r}


@claim("{cid}", question="repeat-vs-expand", statement="这次保存后列表有 {{n}} 个元素。", expect={{"n": {{">=": 1}}}})
def _(ctx):
    return {{"n": len(LIVE_ITEMS)}}
'''
COPIED = ("mkdocs.yml", "docs", "snippets", "evidence", "benchmarks", "verify", "tests")
# What a warm build reads from the cache; not the compiler caches nor scratch space (no claim compiles here).
CACHED = ("evidence", "render", "bench_svg", "bundles", "jinja", "anki", "probe.json", "scan.json", "prose.json",
          "quiz-drills.json", "quizbank-html.json")
VALUE = re.compile(rf'data-claim="{re.escape(CLAIM)}" data-key="n"[^>]*>([^<]*)<')
EPOCH = re.compile(r"livereload\((\d+), (\d+)\);")
RAN = re.compile(r"verify: running (\d+) claim\(s\) from (\d+) snippet file\(s\)")
BUILT = re.compile(r"Documentation built in ([0-9.]+) seconds")  # MkDocs' line: the rebuild, claims included


def _copy_site(dst: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dst / name, ignore=skip)
        elif src.exists():
            shutil.copy2(src, dst / name)
    for name in CACHED:
        src = REPO / ".cache" / name
        if src.is_dir():
            shutil.copytree(src, dst / ".cache" / name)
        elif src.exists():
            shutil.copy2(src, dst / ".cache" / name)
    page = dst / PAGE
    page.write_text(page.read_text(encoding="utf-8").replace("## 考察点", f"```claim\n{CLAIM}\n```\n\n## 考察点", 1),
                    encoding="utf-8")
    return dst


def _get(url: str, timeout: float = 120) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return bytes(resp.read()).decode("utf-8")


@pytest.mark.benchmark(group="project-speed")
def test_save_to_reloaded_page_on_the_real_site(benchmark, tmp_path):
    out = engine.verify(REPO_SETTINGS)  # every claim cached here, so the copy's cache is warm
    assert not out.failures, [f.line() for f in out.failures]
    root = _copy_site(tmp_path)
    original = (root / SNIPPET).read_text(encoding="utf-8")
    lengths = iter(range(10, 100))

    def save(n: int) -> None:
        (root / SNIPPET).write_text(original + LIVE.format(items=list(range(n)), cid=CLAIM), encoding="utf-8")

    save(next(lengths))
    with mkdocs_serve(root, "--no-strict", timeout=300) as served:
        file_claims = original.count("@claim(") + 1
        # the first build: the edited file's claims only, every other claim comes from the copied cache
        assert RAN.findall(served.output()) == [(str(file_claims), "1")], served.output()

        def one_save(n: int) -> None:
            html = _get(served.url + URL)
            save(n)
            deadline = time.monotonic() + 120
            while (m := VALUE.search(html)) is None or m[1] != str(n):
                assert time.monotonic() < deadline, f"the page never showed {n}:\n{served.output()[-3000:]}"
                reload = EPOCH.search(html)
                assert reload is not None, "the served page carries no live-reload script"
                epoch, request = reload.groups()
                _get(f"{served.url}/livereload/{epoch}/{request}")  # returns once a newer build is visible
                html = _get(served.url + URL)

        def setup() -> tuple[tuple[int], dict[str, object]]:
            return (next(lengths),), {}

        start = len(served.lines)
        benchmark.pedantic(one_save, setup=setup, rounds=5, iterations=1, warmup_rounds=1)
        runs = RAN.findall(served.output(start))
        assert runs == [(str(file_claims), "1")] * 6, served.output(start)  # one file's claims per save
        assert "ERROR" not in served.output(), served.output()
        builds = [float(s) for s in BUILT.findall(served.output(start))]
    benchmark.extra_info.update(variant="保存 snippet → 页面显示新值（mkdocs serve）", snippet=SNIPPET, claims_rerun_per_save=file_claims,
                                rebuild_median_s=statistics.median(builds))
