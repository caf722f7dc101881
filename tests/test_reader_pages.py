"""The benchmarks page and the evidence ledger as a reader meets them: the benchmarks page opens with what the
measurements show, its plots speak Chinese and its tables have no column of 「—」, its method is folded at the
end; the ledger is paged, no row of it is taller than a screen, and its legend names every state its filter
offers. Neither page scrolls sideways on a 390 px phone or a 1366 px laptop."""

from __future__ import annotations

import base64
import re
from html import unescape
from html.parser import HTMLParser

import pytest

from tests import test_home
from tests._browser import browser, page_size, scrolls_sideways, serve
from tests._project import REPO_SETTINGS as SETTINGS
from verify.bench import plot
from verify.core import prose, states
from verify.site.templating import LABELS

ROOT = SETTINGS.root
SCREENS = [{"width": 1366, "height": 900}, {"width": 390, "height": 844}]
site = test_home.site  # the fixture: the real site built from what the cache holds (no claim runs)
CJK = re.compile(r"[\u4e00-\u9fff]")
#: two English words in a row: a phrase, not a name (expand, torch.compile, float32 and SDPA are names)
ENGLISH = re.compile(r"[A-Za-z]{2,}\s+[A-Za-z]{2,}")


# --- the benchmarks page -------------------------------------------------------------------------


def test_the_benchmarks_page_opens_with_what_was_measured_and_folds_its_method_at_the_end():
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    # every number a reader reads of a measurement is in a table or a plot, none typed into the prose
    assert prose.read_text(text).measurements == []
    before = text[:text.index("```bench")]
    sections = re.findall(r"^## (.+)$", before, re.M)
    assert sections, "no section before the first result"
    opening = before.split("## ", 2)[1]
    assert len(CJK.findall(opening)) >= 200, opening  # a few sentences of findings, in Chinese
    assert "pytest" not in before and "inner" not in before  # the method is not where the page starts
    after = text[text.rindex("```bench"):]
    fold = re.search(r"^\?\?\? \w+ \"[^\"]+\"\n((?:    .*\n|\n)+)", after, re.M)
    assert fold and "pytest-benchmark" in fold.group(1), "the method is not folded after the last result"


class _Tables(HTMLParser):
    """Headings and cell texts of every ``vf-bench-table``."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and "vf-bench-table" in (dict(attrs).get("class") or ""):
            self._in = True
            self.tables.append(([], []))
        elif self._in and tag == "tr":
            self.tables[-1][1].append([])
        elif self._in and tag in ("th", "td"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._in and tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            (self.tables[-1][0] if tag == "th" else self.tables[-1][1][-1]).append(text)
            self._cell = None
        elif tag == "table":
            self._in = False


def test_no_benchmark_table_has_a_column_of_dashes(site):
    parser = _Tables()
    parser.feed((site / "benchmarks" / "index.html").read_text(encoding="utf-8"))
    tables = [(head, [r for r in rows if r]) for head, rows in parser.tables]
    assert len(tables) > 10, len(tables)
    fraction = LABELS["bench_head"][-1]
    with_fraction = 0
    for head, rows in tables:
        assert rows and all(len(r) == len(head) for r in rows), head
        for i, name in enumerate(head):
            assert any(r[i] not in ("", LABELS["missing"]) for r in rows), f"column {name} of {head} has no value"
        with_fraction += fraction in head
    # 「占该机上限」 where a group has a limit to compare with, and only there
    assert 0 < with_fraction < len(tables), with_fraction


def _plots(html: str) -> list[tuple[str, list[str]]]:
    """(alt, the texts of its SVG) of every plot on a page."""
    out = []
    for alt, data in re.findall(r'<img class="vf-plot" alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"', html):
        svg = base64.b64decode(data).decode("utf-8")
        texts = [unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]
        out.append((unescape(alt), [t for t in texts if t]))
    return out


def test_the_plots_speak_chinese(site):
    plots = _plots((site / "benchmarks" / "index.html").read_text(encoding="utf-8"))
    assert len(plots) > 10, len(plots)
    for alt, texts in plots:
        assert CJK.search(alt.split(" · ")[0]), alt  # the title, before the machine's name
        assert plot.TIME_LABEL in texts or plot.FRACTION_LABEL in texts, (alt, texts)
        # axes, legend and title: every word a reader reads is Chinese or a name (expand, SDPA, float32)
        phrases = [t for t in texts if ENGLISH.search(t) and not CJK.search(t)]
        assert not phrases, (alt, phrases)
        assert not {"size", "workers"} & set(texts), (alt, texts)  # an x axis named by its key


# --- the ledger ----------------------------------------------------------------------------------


def test_the_ledgers_legend_names_every_state_its_filter_offers_in_the_states_words(site):
    html = (site / "evidence" / "index.html").read_text(encoding="utf-8")
    select = re.search(r'<select class="vf-filter-status".*?</select>', html, re.S)
    assert select
    offered = [v for v in re.findall(r'<option value="([^"]*)"', select.group(0)) if v]
    assert offered == list(states.STATES)
    legend = re.search(r'<ul class="vf-ledger-legend">(.*?)</ul>', html, re.S)
    assert legend, "the ledger has no legend"
    entries = dict(re.findall(r'<li data-status="([^"]+)">(.*?)</li>', legend.group(1), re.S))
    for key in offered:
        row = states.get(key)
        assert key in entries, key
        text = unescape(re.sub(r"<[^>]+>", "", entries[key]))
        assert row.label in text and row.mark in text, (key, text)


@pytest.mark.browser
@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: str(s["width"]))
def test_neither_page_scrolls_sideways_and_the_ledger_is_paged_with_rows_of_at_most_a_screen(site, screen):
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport=screen, locale="zh-CN", is_mobile=screen["width"] < 500)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/benchmarks/")
        page.wait_for_load_state("networkidle")
        assert not scrolls_sideways(page_size(page)), page_size(page)
        # another machine's results open in place: still nothing past the screen's edge
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        assert not scrolls_sideways(page_size(page)), page_size(page)

        page.goto(f"{base}/evidence/")
        page.wait_for_load_state("networkidle")
        size = page_size(page)
        assert not scrolls_sideways(size), size
        assert size["height"] < 20 * screen["height"], size

        def shown() -> list[dict]:
            return page.evaluate("""() => [...document.querySelectorAll('.vf-ledger-table tbody tr')]
                .filter(r => r.getClientRects().length)
                .map(r => ({id: r.querySelector('code').textContent, height: r.getBoundingClientRect().height}))""")

        first = shown()
        total = page.locator(".vf-ledger-table tbody tr").count()
        assert 0 < len(first) < total, (len(first), total)
        assert max(r["height"] for r in first) <= screen["height"], max(first, key=lambda r: r["height"])
        # the next page: other rows, each within a screen too, the page still short
        page.locator(".vf-pager-next").click()
        second = shown()
        assert second and not {r["id"] for r in first} & {r["id"] for r in second}
        assert max(r["height"] for r in second) <= screen["height"], max(second, key=lambda r: r["height"])
        assert page_size(page)["height"] < 20 * screen["height"]
        # a long value is clipped with a way to open it; opening shows all of it
        page.locator(".vf-filter-text").fill("dispatch.keyset-tls")
        button = page.locator(".vf-ledger-table tbody tr:not([hidden]) .vf-clip-open").first
        box = button.locator("xpath=preceding-sibling::div[1]")
        clipped = box.evaluate("b => [b.clientHeight, b.scrollHeight]")
        assert clipped[0] < clipped[1], clipped
        button.click()
        assert box.evaluate("b => b.clientHeight") >= clipped[1] - 1
        assert not scrolls_sideways(page_size(page)), page_size(page)
        assert not errors, errors
