"""A tiny end-to-end site, built the way the real one is: MkDocs (strict) and Zensical."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._project import GOOD_SNIPPET, PAGE, env_for, mkdocs_build, tiny_project

pytestmark = pytest.mark.slow


def test_tiny_site_builds_and_shows_evidence(tmp_path):
    root = tiny_project(tmp_path)
    out = mkdocs_build(root)
    assert out.returncode == 0, out.stderr
    html = (root / "site/questions/tiny/index.html").read_text(encoding="utf-8")
    assert 'id="claim-tiny.stride"' in html and 'data-status="verified-here"' in html
    assert "tiny.error" in html and "view size is not compatible" in html  # observed message shown
    ledger = json.loads((root / "site/evidence.json").read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in ledger["claims"]}
    assert set(rows) == {"tiny.stride", "tiny.error"}
    row = rows["tiny.stride"]
    assert row["status"] == "verified-here" and row["observed"] == {"stride": [0, 1]}
    for key in ("question", "statement", "device", "torch", "snippet_hash", "date"):
        assert row[key], key


def test_false_claim_fails_the_strict_build_naming_claim_page_and_snippet(tmp_path):
    root = tiny_project(tmp_path, snippet=GOOD_SNIPPET.replace('expect={"stride": [0, 1]}', 'expect={"stride": [1, 1]}'))
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "tiny.stride (docs/questions/tiny.md) [snippets/tiny/basic.py]" in out.stderr
    assert "expected == [1, 1], observed [0, 1]" in out.stderr
    assert "tiny.error" not in out.stderr.split("failed:")[1]  # only the false claim is named


def test_unknown_and_unshown_claims_fail_together(tmp_path):
    page = PAGE.replace("tiny.error\n", "tiny.nonexistent\n")
    root = tiny_project(tmp_path, page=page)
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "2 claim check(s) failed" in out.stderr
    assert "tiny.nonexistent (docs/questions/tiny.md): the page shows a claim that no snippet declares" in out.stderr
    assert "tiny.error (snippets/tiny/basic.py): no page shows this claim" in out.stderr


def test_crashing_snippet_fails_the_build_but_keeps_other_evidence(tmp_path):
    crash = GOOD_SNIPPET.replace("torch.ones(3, 4).t().view(12)", "import os; os.kill(os.getpid(), 11)")
    root = tiny_project(tmp_path, snippet=crash)
    out = mkdocs_build(root)
    assert out.returncode != 0 and "tiny.error" in out.stderr and "SIGSEGV" in out.stderr
    cached = list((root / ".cache/evidence").rglob("tiny.stride.json"))
    assert len(cached) == 1  # the claim that passed is cached despite the failing build


ZENSICAL = str(Path(sys.executable).with_name("zensical"))


def test_the_same_config_builds_with_zensical(tmp_path):
    root = tiny_project(tmp_path)
    zensical = ZENSICAL if Path(ZENSICAL).exists() else shutil.which("zensical")
    assert zensical, "zensical is part of the test dependencies"
    out = subprocess.run([zensical, "build"], cwd=root, env=env_for(root), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    html = (root / "site/questions/tiny/index.html").read_text(encoding="utf-8")
    assert 'id="claim-tiny.stride"' in html and 'data-status="verified-here"' in html


def test_a_broken_recorded_evidence_file_fails_the_build_naming_it(tmp_path):
    root = tiny_project(tmp_path, extra={"evidence/cuda-x.json": "{ broken"})
    out = mkdocs_build(root)
    assert out.returncode != 0
    assert "evidence/cuda-x.json: not a recorded-evidence file" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_warm_build_runs_and_renders_nothing_and_prunes_what_it_did_not_use(tmp_path):
    root = tiny_project(tmp_path)
    assert mkdocs_build(root).returncode == 0
    cache = root / ".cache"

    def written() -> dict[str, int]:
        return {p.relative_to(cache).as_posix(): p.stat().st_mtime_ns for folder in ("render", "bench_svg", "evidence")
                for p in (cache / folder).rglob("*") if p.is_file()}

    first = written()
    assert any(p.startswith("render/site/claim-") for p in first) and any(p.startswith("render/code/") for p in first)
    stale = ["render/site/claim-old.html", "render/code/old.html", "render/old-layout.html", "bench_svg/old.svg"]
    for rel in [*stale, "render/live/claim-of-verify-serve.html"]:
        (cache / rel).parent.mkdir(parents=True, exist_ok=True)
        (cache / rel).write_text("<p>old</p>")
        os.utime(cache / rel, ns=(0, 0))
    out = mkdocs_build(root)
    assert out.returncode == 0, out.stderr
    after = written()
    assert not any(rel in after for rel in stale)  # what this build did not use is gone
    assert "render/live/claim-of-verify-serve.html" in after  # the other kind of build's HTML stays
    del after["render/live/claim-of-verify-serve.html"]
    assert after == first  # no claim ran (its evidence is as it was), nothing was rendered or written again
