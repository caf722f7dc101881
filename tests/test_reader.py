"""A reader's install (``make read``): the whole site built without torch or matplotlib, from committed evidence.

The build runs in a child process where importing torch or matplotlib fails, with a cache of its own, as
on a fresh clone. Every claim that some machine's committed record passes shows that machine's evidence
(``他机已验证``, ``N 台机器已验证``, compiled or simulated elsewhere) and no line for the reader's machine,
which ran nothing; a CUDA claim no GPU recorded waits for one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._project import REPO
from verify.core import evidence, states
from verify.core.records import Outcome
from verify.settings import Settings
from verify.storage import recorded, scan

pytestmark = pytest.mark.slow

BLOCKED = ("torch", "matplotlib")
BUILD = ("import sys\n"
         f"for name in {BLOCKED!r}:\n"
         "    sys.modules[name] = None  # import fails, as where it is not installed\n"
         "from mkdocs.__main__ import cli\n"
         "sys.argv = ['mkdocs', 'build', '-q', '-d', sys.argv[1]]\n"
         "cli()\n")
CLAIM = re.compile(r'<div class="vf-claim" id="claim-([^"]+)"[^>]*>(.*?)</details>', re.S)
MARK = re.compile(r'<span class="vf-mark [^"]*" data-status="([^"]+)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reader-site")
    env = {**os.environ, "VERIFY_NO_RUN": "1", "VERIFY_CACHE_DIR": str(out / "cache"), "NO_MKDOCS_2_WARNING": "1"}
    env.pop("VERIFY_LIVE", None)
    proc = subprocess.run([sys.executable, "-c", BUILD, str(out / "site")], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return out / "site"


def committed_passes() -> set[str]:
    settings = Settings.for_root(REPO)
    reg = scan.load_registry(settings)
    return {cid for records in recorded.load_all(settings).values() for cid, r in records.items()
            if cid in reg.claims and evidence.is_current(reg, r)
            and evidence.rejudge(reg.claims[cid], r).outcome is Outcome.PASS}


def claims_shown(site: Path) -> dict[str, tuple[str, str]]:
    """claim id -> (its mark's status, the claim's HTML) on the question pages."""
    out = {}
    for page in sorted((site / "questions").glob("*/index.html")):
        for cid, body in CLAIM.findall(page.read_text(encoding="utf-8")):
            mark = MARK.search(body)
            assert mark, f"{page.parent.name}: claim {cid} has no mark"
            out[cid] = (mark.group(1), body)
    return out


def test_the_build_knows_it_ran_nothing(site):
    built_on = json.loads((site / "evidence.json").read_text(encoding="utf-8"))["built_on"]
    assert built_on["device_key"] == "reader" and built_on["torch"] == "", built_on


def test_a_claim_recorded_elsewhere_shows_that_machine_and_no_line_of_the_reader(site):
    passes, shown = committed_passes(), claims_shown(site)
    assert len(shown) > 500, len(shown)
    wrong = {cid: status for cid, (status, _body) in shown.items()
             if cid in passes and not (states.get(status).observed and states.get(status).ran == "elsewhere")}
    assert not wrong, wrong
    reader_lines = [cid for cid, (_status, body) in shown.items() if cid in passes and "<code>reader</code>" in body]
    assert not reader_lines, reader_lines


def test_a_cuda_claim_no_gpu_recorded_waits_for_one(site):
    reg = scan.load_registry(Settings.for_root(REPO))
    passes, shown = committed_passes(), claims_shown(site)
    waiting = {cid: shown[cid][0] for cid, spec in reg.claims.items()
               if "cuda" in spec.needs and cid not in passes and cid in shown}
    assert waiting, "no CUDA claim without a GPU record: this test checks nothing"
    assert set(waiting.values()) == {evidence.NEEDS_CUDA}, waiting


def test_every_questions_practice_link_names_an_anchor_of_the_quiz_page(site):
    """练这道题 links to quiz.md#q=<id>; the quiz page holds a hidden target of that name for every question page,
    so MkDocs' link check has nothing to report on each build (it listed thirty missing anchors)."""
    quiz = (site / "quiz" / "index.html").read_text(encoding="utf-8")
    stems = sorted(p.stem for p in (REPO / "docs" / "questions").glob("*.md"))
    assert stems and [s for s in stems if f'id="q={s}"' not in quiz] == []
