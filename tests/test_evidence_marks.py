"""One mark per claim sentence, every machine named on a tap; the 证据 list folded, in Chinese, on a phone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, serve
from tests._browser import browser as launch_browser
from verify.core import evidence, states
from verify.site import fences
from verify.site.fences import MachineStatus


def _seen(*statuses: str, keys: tuple[str, ...] = ()) -> list[MachineStatus]:
    """This machine's status first, then one other machine's per further status (device keys: one each,
    unless ``keys`` gives them)."""
    out = []
    for i, st in enumerate(statuses):
        name = "构建机（CPU A）" if i == 0 else f"机器 {i}"
        out.append(MachineStatus(st, name, "", keys[i] if keys else f"cpu-{i}", f"torch 2.13.0 · 2026-12-0{i + 1}", "",
                                 states.get(st).mark, None, states.get(st).label))
    return out


def test_a_failure_on_any_machine_is_the_mark():
    status, title, text = fences.chip(_seen(evidence.VERIFIED_HERE, evidence.FAILED, evidence.VERIFIED_ELSEWHERE))
    assert (status, text) == (evidence.FAILED, "失败")
    assert title.splitlines() == ["构建机（CPU A）：已验证（构建本站的机器上运行） · torch 2.13.0 · 2026-12-01",
                                  "机器 1：失败 · torch 2.13.0 · 2026-12-02",
                                  "机器 2：已验证（记录自另一台机器） · torch 2.13.0 · 2026-12-03"]
    # failed elsewhere only, nothing here: still the failure
    assert fences.chip(_seen(evidence.NEEDS_CUDA, evidence.FAILED))[0] == evidence.FAILED


def test_one_device_under_two_environments_is_one_machine():
    # this device's record made under another torch sits among the others under the same device key
    seen = _seen(evidence.VERIFIED_HERE, evidence.VERIFIED_ELSEWHERE, keys=("cpu-a", "cpu-a"))
    assert fences.chip(seen)[2] == states.get(evidence.VERIFIED_HERE).mark
    seen = _seen(evidence.VERIFIED_HERE, evidence.VERIFIED_ELSEWHERE, evidence.VERIFIED_ELSEWHERE,
                 keys=("cpu-a", "cpu-a", "cpu-b"))
    assert fences.chip(seen)[2] == "2 台机器已验证"


def test_only_runs_are_counted():
    # the same datasheet, compiler or simulator gives the same answer anywhere: no count, its own words kept
    for kind in ("spec-here", "compiled-here", "simulated-here"):
        elsewhere = kind.replace("-here", "-elsewhere")
        status, _title, text = fences.chip(_seen(kind, elsewhere, elsewhere))
        assert "台机器" not in text and text == states.get(kind).mark, (kind, text)


def test_machines_that_verified_a_claim_are_counted():
    assert fences.chip(_seen(evidence.VERIFIED_HERE, evidence.VERIFIED_ELSEWHERE, evidence.VERIFIED_ELSEWHERE))[::2] \
        == (evidence.VERIFIED_HERE, "3 台机器已验证")
    assert fences.chip(_seen(evidence.NEEDS_CUDA, evidence.VERIFIED_ELSEWHERE, evidence.VERIFIED_ELSEWHERE))[::2] \
        == (evidence.VERIFIED_ELSEWHERE, "2 台机器已验证")
    # one machine: its own words; a machine that did not observe it is not counted
    assert fences.chip(_seen(evidence.VERIFIED_HERE))[::2] == (evidence.VERIFIED_HERE, "构建机已验证")
    assert fences.chip(_seen(evidence.NEEDS_CUDA, evidence.VERIFIED_ELSEWHERE, evidence.STALE))[::2] \
        == (evidence.VERIFIED_ELSEWHERE, "他机已验证")


def test_the_order_of_the_best_evidence():
    """Verified, then compiled, simulated, spec; then waiting for a GPU, then stale; a failure before all."""
    order = [evidence.FAILED, evidence.VERIFIED_ELSEWHERE, "compiled-elsewhere", "simulated-elsewhere",
             "spec-elsewhere", evidence.NEEDS_CUDA, evidence.STALE]
    for i, better in enumerate(order):
        for worse in order[i + 1:]:
            assert fences.chip(_seen(worse, better))[0] == better, (better, worse)
            assert fences.chip(_seen(better, worse))[0] == better, (better, worse)
    # compiled here and elsewhere: this machine's own mark, uncounted (test_only_runs_are_counted)
    assert fences.chip(_seen("compiled-here", "compiled-elsewhere"))[2] == states.get("compiled-here").mark


# --- the built site in Chromium, at a phone's width ------------------------------------------------

PAGE = "questions/repeat-vs-expand/"
#: the runner's reasons for not running a claim (verify.core.needs), which a reader is told in Chinese instead
RUNNER_WORDS = re.compile(r"needs (CUDA|torch|at least|glibc|a torch|g\+\+)|no GPU on this machine|not on PATH")


@pytest.fixture(scope="module")
def site(real_site_from_cache: Path) -> Path:
    """The real site, built without running a claim (what the cache and evidence/ hold): one build for the run."""
    return real_site_from_cache


def test_each_claim_sentence_carries_one_mark_and_the_evidence_list_is_folded(site):
    timings = 0
    for path in sorted((site / "questions").glob("*/index.html")):
        html = path.read_text(encoding="utf-8")
        summaries = re.findall(r'<div class="vf-claim"[^>]*>\s*<details[^>]*>\s*<summary>(.*?)</summary>', html, re.S)
        assert summaries and len(summaries) == html.count('class="vf-claim"'), path
        assert [s.count('class="vf-mark') for s in summaries] == [1] * len(summaries), path
        folded = re.search(r'<details class="vf-evidence[ "][^>]*>\s*<summary class="vf-count">(.*?)</summary>(.*?)</details>',
                           html, re.S)
        assert folded, path
        sentences = re.findall(r"<li [^>]*><a [^>]*>(.*?)</a>", folded.group(2), re.S)
        # a claim of this question shown on another page (a 手撕 problem's, on the judge page) links there
        here = re.findall(r'<li [^>]*><a href="#claim-', folded.group(2))
        prose = [re.sub(r"<[^>]+>", "", re.sub(r'<span class="vf-v">[^<]*</span>', "", t)) for t in sentences]
        assert len(here) == len(summaries) and not [t for t in prose if "`" in t], path  # code is set as code
        assert "{'" not in folded.group(2) and "{&#39;" not in folded.group(2), path  # no Python dict
        assert not RUNNER_WORDS.search(folded.group(2)), path
        timings += len([kv for kv in re.findall(r'<span class="vf-kv">(.*?)</span>', folded.group(2))
                        if re.search(r"中位数 [\d.]+ (?:ns|µs|ms|s)（", kv)])
    assert timings >= 10  # a timing reads as its median with its unit, as the ledger shows it


@pytest.fixture(scope="module")
def phone(site):
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is not installed: `make system-deps` installs it")
    with serve(site) as base, launch_browser() as chromium:
        ctx = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                   device_scale_factor=2, locale="zh-CN")
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/{PAGE}")
        yield page
        ctx.close()
        assert not errors, errors


def _sideways(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.browser
def test_on_a_phone_a_tap_on_a_sentence_names_its_machines(phone):
    claims = phone.locator(".vf-claim")
    n = claims.count()
    assert n > 10
    assert phone.locator(".vf-claim > details > summary .vf-mark").count() == n
    assert phone.locator(".vf-claim > details[open]").count() == 0  # the real site has no failure
    assert _sideways(phone) <= 0

    # the claim whose mark counts the most machines
    marks = phone.locator(".vf-claim > details > summary .vf-mark")
    counted = [(int(m.group(1)), i) for i, text in enumerate(marks.all_text_contents())
               if (m := re.match(r"(\d+) 台机器", text))]
    assert counted, "no claim on the page is verified on more than one machine"
    machines, index = max(counted)
    claim = claims.nth(index)
    title = marks.nth(index).get_attribute("title") or ""
    listed = claim.locator(".vf-machines li")
    assert not listed.first.is_visible()
    claim.locator(".vf-stmt").tap()
    assert claim.locator("details").evaluate("d => d.open")
    assert listed.first.is_visible()
    # every machine the title names is named in the body with its status; as many verified as the mark counts
    assert listed.count() == len(title.splitlines()) >= machines
    verified = 0
    for i in range(listed.count()):
        item = listed.nth(i)
        name = item.locator("b").text_content() or ""
        badge = item.locator(".vf-badge")
        status = badge.get_attribute("data-status") or ""
        words = badge.text_content() or ""
        line = next((t for t in title.splitlines() if t.startswith(name)), "")
        assert name and words and f"：{words}" in line, (name, words, title)
        verified += states.get(status).observed
    assert verified == machines
    assert _sideways(phone) <= 0
    ARTIFACTS.mkdir(exist_ok=True)
    phone.screenshot(path=str(ARTIFACTS / "claim-machines-390.png"))


@pytest.mark.browser
def test_on_a_phone_the_evidence_list_is_folded_and_reads_in_chinese(phone):
    folded = phone.locator("details.vf-evidence")
    assert folded.count() == 1 and folded.get_attribute("open") is None
    summary = folded.locator("summary")
    assert re.match(r"本题共 \d+ 条论断：", summary.text_content() or "")
    assert summary.bounding_box()["height"] < 120  # a line or two, not thousands of pixels
    assert not folded.locator(".vf-evidence-list").is_visible()
    summary.tap()
    assert folded.evaluate("d => d.open") and folded.locator(".vf-evidence-list").is_visible()
    text = folded.inner_text()
    assert "{'" not in text and not RUNNER_WORDS.search(text)
    rows = folded.locator(".vf-evidence-list > li")
    assert rows.locator("> a code").count() > 0  # code is set as code
    labels = {row.label for row in states.STATES.values()}
    notes = rows.locator("> .vf-note").all_inner_texts()  # a row with nothing observed: its status in words
    assert notes and set(notes) <= labels, set(notes) - labels
    assert rows.count() == phone.locator(".vf-claim").count()
    assert rows.locator(".vf-mark").count() == rows.count()  # one mark a row
    assert rows.locator("code.vf-id").count() == rows.count()
    pairs = rows.locator(".vf-kv").all_inner_texts()  # values as key: value, with their units
    assert pairs and all(re.match(r"\w+: \S", p) for p in pairs), pairs[:5]
    assert _sideways(phone) <= 0
    ARTIFACTS.mkdir(exist_ok=True)
    folded.screenshot(path=str(ARTIFACTS / "evidence-list-390.png"))
