"""The home page as a reader first meets it: what the site is, two doors (practise, read by topic), the
legend of the evidence marks, and a syllabus that reads on a 390 px phone without sideways scrolling."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests._browser import browser, page_size, scrolls_sideways, serve
from tests._project import REPO_SETTINGS as SETTINGS
from verify.core import states
from verify.site import syllabus

ROOT = SETTINGS.root
PHONE = {"width": 390, "height": 844}


# --- the legend, from the states' table ----------------------------------------------------------


def _marks(rows: list[syllabus.LegendRow]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in rows:
        for m in row.marks:
            out.setdefault(m.key, []).append(m.text)
    return out


@pytest.mark.parametrize("live", ["", states.LIVE_RUNNING, states.LIVE_STOPPED])
def test_the_legend_shows_every_state_with_the_words_the_pages_use(live):
    first, more = syllabus.legend(live)
    shown = _marks(first + more)
    for key, row in states.STATES.items():
        words = row.words(live)
        # a mark a record completes (需要 + its tools) is shown completed with every tool
        assert any(t == words.mark or t.startswith(words.mark + " ") for t in shown.get(key, [])), (key, words.mark)
        if words.waiting:
            assert words.waiting in shown[key], key
    assert all(row.meaning for row in first + more)


def test_the_first_screen_explains_the_marks_a_reader_meets_most():
    first, _more = syllabus.legend("")
    texts = [m.text for row in first for m in row.marks]
    for word in ("构建机已验证", "他机已验证", "已编译", "已模拟", "按规格计算", "GPU 上待测", "失败"):
        assert word in texts, word
    # each kind has a line written for it, not its label repeated
    for row in first:
        assert row.meaning in syllabus.MEANING.values(), row


def test_a_new_state_joins_the_legend_without_a_template_change():
    """A row added to the table shows in the legend (under the fold), explained by its label until it has a line."""
    added = states.register(states.State("test-new-kind", "测试用的新状态：说明文字", "测试标记", "derived", True, "here",
                                         "cyan"))
    try:
        _first, more = syllabus.legend("")
        rows = [r for r in more if any(m.key == added.key for m in r.marks)]
        assert [r.meaning for r in rows] == [added.label]
    finally:
        del states.STATES[added.key]


# --- the built site ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(real_site_from_cache: Path) -> Path:
    """The real site built from what the cache holds (no claim runs): one build for the run (tests/conftest.py)."""
    return real_site_from_cache


class _Marks(HTMLParser):
    """(data-status, text) of every ``vf-mark`` span, and the legend's, apart."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[tuple[str, str]] = []
        self._open: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "span" and "vf-mark" in (a.get("class") or "").split():
            self._open = [a.get("data-status") or "", ""]

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open is not None:
            self.marks.append((self._open[0], self._open[1].strip()))
            self._open = None


def _legend_html(home: str) -> str:
    return home.split('class="vf-legend-box"', 1)[1].split('<h2', 1)[0]


def test_every_mark_the_pages_show_is_in_the_legend(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    legend = _Marks()
    legend.feed(_legend_html(home))
    in_legend = set(legend.marks)
    used: set[tuple[str, str]] = set()
    for page in [*site.glob("questions/*/index.html"), site / "evidence" / "index.html"]:
        parser = _Marks()
        parser.feed(page.read_text(encoding="utf-8"))
        used |= set(parser.marks)
    assert used, "no marks found on the pages: the test reads the wrong markup"
    # a mark may carry its record's details after the state's word (已编译 · sm_90a · nvcc 13.0.88; 需要 triton),
    # and a mark that counts machines has its number where the legend says N (3 台机器已验证)
    patterns = [(s, re.compile(re.escape(t).replace("N", r"\d+") + r"( .*)?")) for s, t in in_legend]
    missing = {(status, text) for status, text in used
               if not any(status == s and pattern.fullmatch(text) for s, pattern in patterns)}
    assert not missing, missing
    # the waiting words (a claim not observed yet, in place of its sentence) are in the legend too
    waiting = set(re.findall(r'class="vf-waiting-where">([^<]+)<', "".join(
        p.read_text(encoding="utf-8") for p in site.glob("questions/*/index.html"))))
    assert waiting <= {t for _s, t in in_legend}, waiting


def test_the_home_page_keeps_maintainer_counts_to_the_ledger(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    syllabus_html = home.split('class="vf-syllabus"', 1)[1]
    heads = re.findall(r"<th>([^<]*)</th>", syllabus_html.split("</table>", 1)[0])
    assert heads == ["题目", "来源", "难度"]
    assert "构建机上已验证" not in home and "其他</th>" not in home
    assert 'href="evidence/"' in home  # where the counts live now


def test_the_topics_page_links_each_question_from_its_own_folder(site):
    """topics/ is one level down: its syllabus links ../questions/…, each to a page that exists."""
    html = (site / "topics" / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<td class="vf-q"><a href="([^"]+)"', html)
    assert len(links) == len(list((ROOT / "docs" / "questions").glob("*.md")))
    for link in links:
        assert link.startswith("../questions/"), link
        assert (site / "topics" / link / "index.html").resolve().is_file(), link


@pytest.mark.browser
@pytest.mark.parametrize("path", ["", "topics/"])
def test_on_a_phone_the_first_screen_has_the_doors_and_the_legend_and_nothing_scrolls_sideways(site, path):
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport=PHONE, locale="zh-CN")
        page.goto(f"{base}/{path}")
        page.wait_for_load_state("networkidle")
        box = page.evaluate("""() => {
            const r = e => e ? e.getBoundingClientRect() : null;
            const doors = [...document.querySelectorAll('.md-content a.md-button')];
            return {doors: doors.map(a => ({text: a.textContent.trim(), href: a.getAttribute('href'), bottom: r(a).bottom,
                                            right: r(a).right})),
                    legend: r(document.querySelector('.vf-legend-box')),
                    titles: [...document.querySelectorAll('.vf-syllabus-table td.vf-q')].map(td => r(td).width),
                    cells: [...document.querySelectorAll('.vf-syllabus-table td')].map(td => r(td).right)};
        }""")
        size = page_size(page)
        assert not scrolls_sideways(size), size
        assert box["titles"] and min(box["titles"]) >= 120, min(box["titles"] or [0])
        assert max(box["cells"]) <= size["width"], max(box["cells"])
        if path:
            return
        doors = {d["text"]: d for d in box["doors"]}
        assert set(doors) == {"开始练习", "按主题读"}, doors
        assert doors["开始练习"]["href"] == "quiz/" and doors["按主题读"]["href"] == "#syllabus"
        assert all(d["bottom"] <= PHONE["height"] and d["right"] <= size["width"] for d in doors.values()), doors
        assert box["legend"] and box["legend"]["bottom"] <= PHONE["height"], box["legend"]
        # the legend's first screen is the marks a reader meets most: every one of them in view
        for word in ("构建机已验证", "他机已验证", "已编译", "已模拟", "按规格计算", "GPU 上待测", "失败"):
            mark = page.locator(".vf-legend-box > .vf-legend .vf-mark", has_text=word).first
            assert mark.bounding_box()["y"] + mark.bounding_box()["height"] <= PHONE["height"], word
        # both doors lead somewhere: the quiz page, and the syllabus on this page
        page.locator("a.md-button", has_text="按主题读").click()
        assert page.locator("#syllabus").bounding_box()["y"] < PHONE["height"]
        page.locator("a.md-button", has_text="开始练习").scroll_into_view_if_needed()
        page.locator("a.md-button", has_text="开始练习").click()
        page.wait_for_url(re.compile(r"/quiz/$"))


def test_the_fence_takes_only_what_it_knows():
    assert syllabus._options("") == {} and syllabus._options("base: ../\n") == {"base": "../"}
    assert syllabus._options(" legend \n") == {"show": "legend"}
    for bad in ("base: ../../", "legnd", "root: ../"):
        with pytest.raises(ValueError):
            syllabus._options(bad)
