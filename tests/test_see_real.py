"""The real site's spoken answers and key points name the scope of the claims behind them (issue 35 item 2).

Built once without running claims (``VERIFY_NO_RUN``: the records already in the cache and in evidence/).
In every question's 面试时这样说 and 考察点, each claim referenced (```#!see```) or valued (```#!v```)
shows a tag, the same words as beside the claim's own sentence, so a CPU result in a GPU answer reads as one.
"""

from __future__ import annotations

import html as html_mod
import re
from pathlib import Path

import pytest

from tests._project import REPO_SETTINGS as SETTINGS

pytestmark = pytest.mark.slow
ROOT = SETTINGS.root
PAGES = sorted((ROOT / "docs" / "questions").glob("*.md"))
SECTIONS = {"面试时这样说": 3, "考察点": 2}
_SEE = re.compile(r'<a class="vf-see" href="([^"]*)" data-claim="([^"]+)" data-backend="([^"]*)"(?: data-pending)? '
                  r'title="([^"]*)"[^>]*>([^<]*)</a>')
_PENDING = re.compile(r'<a class="vf-see" [^>]*data-claim="([^"]+)"[^>]*data-pending[^>]*>([^<]*)</a>')
_WAITING = re.compile(r'<div class="vf-claim" id="claim-([^"]+)"[^>]*>\s*<details[^>]*>\s*<summary><span class="vf-stmt">'
                      r'<span class="vf-waiting">')
_VALUE = re.compile(r'<span class="vf-val [^"]*" data-claim="([^"]+)"')
_OWN_TAG = re.compile(r'<div class="vf-claim" id="claim-([^"]+)".*?<span class="vf-scope"[^>]*>([^<]*)</span>', re.S)


@pytest.fixture(scope="module")
def site(real_site_from_cache: Path) -> Path:
    """The real site built from what the cache holds (no claim runs): one build for the run (tests/conftest.py)."""
    return real_site_from_cache


def _section(page_html: str, title: str) -> str:
    level = SECTIONS[title]
    body = re.split(rf"<h{level}\b[^>]*>{title}", page_html, maxsplit=1)[1]
    return re.split(r"<h[1-3]\b", body, maxsplit=1)[0]


def _sentences(section: str) -> list[str]:
    """The section's sentences, split outside tags (a chip's title is a sentence of its own)."""
    bare = re.sub(r'title="[^"]*"', 'title=""', section)
    return [s for s in re.split(r"[。！？；]|</p>|</li>", bare) if s.strip()]


@pytest.fixture(scope="module")
def pages(site) -> dict[str, str]:
    return {p.stem: (site / "questions" / p.stem / "index.html").read_text(encoding="utf-8") for p in PAGES}


@pytest.fixture(scope="module")
def own_tags(pages) -> dict[str, str]:
    """Claim id -> the tag beside its own sentence (its claim fence)."""
    return {cid: tag for html in pages.values() for cid, tag in _OWN_TAG.findall(html)}


def test_every_claim_cited_or_valued_in_a_spoken_answer_or_key_point_shows_its_tag(pages, own_tags):
    wrong, untagged, raw = [], [], []
    for stem, page_html in pages.items():
        for title in SECTIONS:
            section = _section(page_html, title)
            raw += [f"{stem} {title}"] * section.count("#!see")
            for m in _SEE.finditer(section):
                href, cid, _backend, _title, text = m.groups()
                if text.removesuffix(" · 待测") != own_tags.get(cid) or not href.endswith(f"#claim-{cid}"):
                    wrong.append((stem, cid, text, own_tags.get(cid), href))
            for sentence in _sentences(section):
                cited = {m.group(2) for m in _SEE.finditer(sentence)}
                untagged += [(stem, title, cid) for cid in _VALUE.findall(sentence) if cid not in cited]
    assert not raw, f"a reference left as text: {raw}"
    assert not wrong, f"a chip whose words or link are not its claim's: {wrong[:10]}"
    assert not untagged, f"a bound value without its claim's tag: {untagged}"


def test_a_cpu_result_in_an_answer_reads_as_one(pages, own_tags):
    """The chip of a claim that ran on the CPU says CPU, titled with the claim's sentence; a link on the same
    page jumps to the sentence, one to another page goes there."""
    cpu, seen = 0, set()
    for stem, page_html in pages.items():
        for title in SECTIONS:
            for href, cid, backend, title_text, text in _SEE.findall(_section(page_html, title)):
                seen.add(cid)
                here = f'id="claim-{cid}"' in page_html
                assert href == (f"#claim-{cid}" if here else f"../{href.split('/')[1]}/#claim-{cid}"), (stem, href)
                assert title_text and html_mod.unescape(title_text) in html_mod.unescape(_sentence_of(pages, cid))
                if own_tags[cid].split(" · ")[0] == "CPU":
                    cpu += 1
                    assert backend == "CPU" and text.startswith("CPU"), (stem, cid, text)
    assert cpu >= 30 and len(seen) >= 300, (cpu, len(seen))


def _sentence_of(pages: dict[str, str], cid: str) -> str:
    for page_html in pages.values():
        m = re.search(rf'id="claim-{re.escape(cid)}".*?<span class="vf-stmt">(.*?)</span><span class="vf-scope"',
                      page_html, re.S)
        if m:
            return re.sub(r"<[^>]+>", "", m.group(1))
    raise AssertionError(f"{cid}: no page shows it")


def test_every_page_cites_evidence_in_both_sections(pages):
    """Coverage after the content pass: each page's spoken answer and key points cite at least one claim."""
    missing = [(stem, title) for stem, html in pages.items() for title in SECTIONS if not _SEE.search(_section(html, title))]
    assert not missing, missing


def test_a_chip_of_a_claim_nothing_has_observed_says_so(pages):
    """A GPU claim no GPU has run reads 「GPU · 待测」 in the chip itself (a phone shows no title), and only such a
    claim: a chip of a claim with evidence never says 待测."""
    waiting = {cid for page_html in pages.values() for cid in _WAITING.findall(page_html)}
    assert waiting, "no claim waits for a GPU: this test checks nothing"
    chips = [(cid, text, bool(pending)) for page_html in pages.values() for title in SECTIONS
             for cid, text, pending in ((m.group(2), m.group(5), "data-pending" in m.group(0))
                                        for m in _SEE.finditer(_section(page_html, title)))]
    wrong = [(cid, text) for cid, text, pending in chips if (cid in waiting) != (pending and text.endswith(" · 待测"))]
    assert not wrong, wrong
    assert any(pending for _cid, _text, pending in chips), "no chip of a waiting claim in any answer"
