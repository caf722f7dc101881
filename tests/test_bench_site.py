"""How much the evidence layer costs a site build, when every claim is already cached.

Target (issue: the claim engine): a warm rebuild costs at most 1.5x a plain MkDocs build of the
same text, kept beside the result as met or missed (1.45-1.50x measured on an EPYC). The test
asserts 2x, a bound with room on the machines we have; the 1.5x target is shown, not asserted.
"Plain" runs none of our code: each claim fence is replaced by its statement as
typed (the page's sentence, values left as "…"; since a statement is the page's text, leaving it
out would compare against a page without most of its words, which the search indexer then has far
less Chinese to segment), inline values by "…", and the evidence, ledger, bench and quiz fences
are ordinary code blocks; no hook runs. Both builds are separate processes (what a user runs),
timed interleaved in the same run, five rounds each, and the ratio is the median of each round's warm
build over the plain build just before it: on a shared 2-core machine one plain build took 2.24 s in
one run and 2.65 s in the next, and a ratio of three-round medians swung from 1.71 to 2.00 between two
runs of the same code.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from verify.bench.targets import target
from verify.running import engine
from verify import timing
from tests._project import REPO_SETTINGS as SETTINGS

pytestmark = pytest.mark.bench
ROOT = SETTINGS.root


def _plain_docs(tmp: Path) -> Path:
    """The docs with every claim fence replaced by its statement and every bound value by "…"."""
    from verify.core import binding  # noqa: PLC0415
    from verify.core.pages import replace_claims  # noqa: PLC0415
    from verify.judge.problem import all_problems  # noqa: PLC0415
    from verify.site import problems  # noqa: PLC0415
    from verify.storage.scan import load_registry  # noqa: PLC0415

    claims = load_registry(SETTINGS).claims
    docs = tmp / "docs-plain"
    shutil.copytree(ROOT / "docs", docs)
    for page in docs.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        text, _ids = replace_claims(text, lambda cid: binding.plain(claims[cid].statement) if cid in claims else None)
        page.write_text(re.sub(r"`#!(?:v|in) [^`]+`", "…", text), encoding="utf-8")
    for uri, markdown in problems.pages(all_problems(ROOT)).items():  # the 手撕 pages a hook adds to the full build
        (docs / uri).parent.mkdir(parents=True, exist_ok=True)
        (docs / uri).write_text(markdown, encoding="utf-8")
    return docs


def _plain_config(tmp: Path) -> Path:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = re.sub(r"\nhooks:\n(  - .*\n)+", "\n", text)
    text = re.sub(r"  - pymdownx\.superfences:\n      custom_fences:\n(        .*\n)+", "  - pymdownx.superfences\n", text)
    text = re.sub(r"  - pymdownx\.inlinehilite:\n      custom_inline:\n(        .*\n)+", "  - pymdownx.inlinehilite\n", text)
    text = text.replace("  - verify.site.cjk\n", "")
    assert "!!python/name:verify" not in text and "site/hooks" not in text, "the plain build must not run our code"
    text = text.replace("docs_dir: docs", f"docs_dir: {_plain_docs(tmp)}")
    path = tmp / "mkdocs-plain.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _build(config: Path, site: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.benchmark(group="project-speed")
def test_warm_rebuild_stays_close_to_a_plain_build(benchmark, tmp_path):
    out = engine.verify(SETTINGS)  # make sure every claim is cached: this measures the warm path only
    assert not out.failures, [f.line() for f in out.failures]
    plain, full = _plain_config(tmp_path), ROOT / "mkdocs.yml"
    builds = {"plain": lambda: _build(plain, tmp_path / "plain"), "warm": lambda: _build(full, tmp_path / "warm")}
    for build in builds.values():  # one untimed build of each: the full one also fills the plot cache
        build()
    rounds = [timing.compare(builds, rounds=1, warmup=0) for _ in range(5)]
    t = {name: timing.stats([r[name]["median_s"] for r in rounds]) for name in builds}
    # each round's warm build over the plain build just before it: the machine's slow swings cancel
    ratios = [r["warm"]["median_s"] / r["plain"]["median_s"] for r in rounds]
    ratio = statistics.median(ratios)
    benchmark.extra_info.update(variant="热重建（全部论断已缓存）", plain_s=t["plain"]["median_s"], warm_s=t["warm"]["median_s"], ratio=ratio,
                                ratios=[round(r, 3) for r in ratios], claims=len(out.local))
    benchmark.pedantic(lambda: _build(full, tmp_path / "warm"), rounds=1, iterations=1)
    target(benchmark, "热重建不超过普通 MkDocs 构建的 1.5 倍", ratio <= 1.5)
    assert ratio <= 2.0, f"warm rebuild {t['warm']['median_s']:.2f}s is {ratio:.2f}x the plain build (rounds: {ratios})"
