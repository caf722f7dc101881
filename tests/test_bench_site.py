"""How much the evidence layer costs a site build, when every claim is already cached.

Target (issue: the claim engine): a warm rebuild costs at most 1.5x a plain MkDocs build of the
same pages, where "plain" renders the claim, evidence, ledger, bench and quiz fences as ordinary
code blocks and runs no hook. Both builds are separate processes (what a user runs), timed
interleaved in the same run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from verify.running import engine
from verify import timing
from tests._project import REPO_SETTINGS as SETTINGS

pytestmark = pytest.mark.bench
ROOT = SETTINGS.root


def _plain_config(tmp: Path) -> Path:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = re.sub(r"\nhooks:\n(  - .*\n)+", "\n", text)
    text = re.sub(r"  - pymdownx\.superfences:\n      custom_fences:\n(        .*\n)+", "  - pymdownx.superfences\n", text)
    assert "!!python/name:verify" not in text and "site/hooks" not in text, "the plain build must not run our code"
    text = text.replace("docs_dir: docs", f"docs_dir: {ROOT / 'docs'}")
    path = tmp / "mkdocs-plain.yml"
    path.write_text(text, encoding="utf-8")
    return path


def _build(config: Path, site: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_warm_rebuild_costs_at_most_1_5x_a_plain_build(benchmark, tmp_path):
    out = engine.verify(SETTINGS)  # make sure every claim is cached: this measures the warm path only
    assert not out.failures, [f.line() for f in out.failures]
    plain, full = _plain_config(tmp_path), ROOT / "mkdocs.yml"
    _build(full, tmp_path / "warmup")  # also fills the plot cache
    t = timing.compare({"plain": lambda: _build(plain, tmp_path / "plain"),
                        "warm": lambda: _build(full, tmp_path / "warm")}, rounds=3, warmup=0)
    ratio = t["warm"]["median_s"] / t["plain"]["median_s"]
    benchmark.extra_info.update(plain_s=t["plain"]["median_s"], warm_s=t["warm"]["median_s"], ratio=ratio,
                                claims=len(out.local))
    benchmark.pedantic(lambda: _build(full, tmp_path / "warm"), rounds=1, iterations=1)
    assert ratio <= 1.5, f"warm rebuild {t['warm']['median_s']:.2f}s is {ratio:.2f}x the plain build"
