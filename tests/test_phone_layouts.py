"""The real site on a 390 px phone and in Chinese: the GPU spec table and the quiz page fit the screen,
the quiz's question picker is grouped by topic, Material's own words are Chinese, and search does not
say "no title has these words" above the title that has them."""

from __future__ import annotations

import json
import re
import time

import pytest

from snippets._gpu import specs
from tests._browser import ARTIFACTS, browser, page_size, scrolls_sideways, serve
from tests._project import REPO_SETTINGS as SETTINGS
from tests import test_home
from verify.quiz.schema import TOPICS
from verify.site.templating import LABELS

ROOT = SETTINGS.root
PHONE = {"width": 390, "height": 844}
site = test_home.site  # the fixture: the real site built from what the cache holds (no claim runs)


def test_material_speaks_chinese_on_every_page(site):
    """The heading links' title is 永久链接 and the footer has no English "Made with" line."""
    pages = sorted(site.glob("**/index.html"))
    assert len(pages) > 20, len(pages)
    english = {p.relative_to(site).as_posix() for p in pages
               if re.search(r"Permanent link|Made with", p.read_text(encoding="utf-8"))}
    assert not english, sorted(english)
    for path in ("gpu-specs/index.html", "questions/kv-cache/index.html", "quiz/index.html"):
        html = (site / path).read_text(encoding="utf-8")
        assert 'class="headerlink" href="#' in html and 'title="永久链接"' in html, path
        footer = html.split('class="md-copyright"', 1)[1].split("</div>", 2)
        assert re.search(r"[\u4e00-\u9fff]", footer[0] + footer[1]), path


@pytest.mark.browser
def test_the_spec_table_on_a_phone_is_one_comparison_and_the_page_does_not_scroll_sideways(site):
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport=PHONE, locale="zh-CN", is_mobile=True)
        page.goto(f"{base}/gpu-specs/")
        page.wait_for_load_state("networkidle")
        size = page_size(page)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "gpu-specs-phone.png"), full_page=True)
        assert not scrolls_sideways(size), size
        tables = page.locator("article table")
        assert tables.count() == 1
        heads = [t.strip() for t in tables.locator("thead th").all_inner_texts()]
        assert heads == ["规格", *specs.GPUS], heads
        # the table itself fits: no column squeezed to nothing, nothing past the screen's edge
        box = page.evaluate("""() => {
            const t = document.querySelector('article table');
            const cols = [...t.querySelectorAll('thead th')].map(th => th.getBoundingClientRect().width);
            return {right: t.getBoundingClientRect().right, cols, scroll: t.parentElement.scrollWidth,
                    width: t.parentElement.clientWidth};
        }""")
        assert box["scroll"] <= box["width"] and box["right"] <= size["width"], box
        assert min(box["cols"]) >= 48, box["cols"]
        text = tables.inner_text()
        assert not re.search(r"\de[+-]?\d", text), re.findall(r"\S*\de[+-]?\d\S*", text)
        # sources are footnotes below the table, each marker in the table leads to one
        notes = page.locator("ol.vf-spec-sources > li")
        refs = {a.get_attribute("href") for a in tables.locator("sup a").all()}
        assert notes.count() == len({r["source"] for r in specs.table()})
        assert refs == {f"#{notes.nth(i).get_attribute('id')}" for i in range(notes.count())}
        assert "出处" not in heads
        print(f"gpu-specs at 390 px: page {size['height']} px tall, table columns {[round(c) for c in box['cols']]}")


@pytest.mark.browser
def test_the_quiz_on_a_phone_does_not_scroll_sideways_and_its_picker_is_grouped_by_topic(site):
    bank = json.loads((site / "quiz.json").read_text(encoding="utf-8"))
    topic_of = {q["id"]: q["topic"] for q in bank["questions"]}
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport=PHONE, locale="zh-CN", is_mobile=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/quiz/")
        page.wait_for_load_state("networkidle")
        # the quiz's list of topics is the syllabus', in its order, named as the nav names them
        assert page.evaluate("window.QuizUI.TOPICS") == [[t, LABELS["topics"][t]] for t in TOPICS]
        groups = page.evaluate("""() => [...document.querySelectorAll('select[name=question] optgroup')]
            .map(g => [g.label, [...g.querySelectorAll('option')].map(o => o.value)])""")
        names = {LABELS["topics"][t]: t for t in TOPICS}
        used = [t for t in TOPICS if t in topic_of.values()]
        assert [label for label, _ in groups] == [LABELS["topics"][t] for t in used], groups
        for label, ids in groups:
            assert ids and all(topic_of[i] == names[label] for i in ids), (label, ids)
        assert sorted(i for _, ids in groups for i in ids) == sorted(topic_of)
        page.screenshot(path=str(ARTIFACTS / "quiz-phone-setup.png"))
        tabs = page.locator(".quiz-tabs button")
        for i in range(tabs.count()):
            tab = tabs.nth(i)
            right = tab.bounding_box()["x"] + tab.bounding_box()["width"]
            assert right <= PHONE["width"], (tab.inner_text(), right)  # every tab in view, none off-screen
            tab.click()
            size = page_size(page)
            assert not scrolls_sideways(size), (tab.inner_text(), size)
        picker = page.locator("select[name=question]").first
        page.get_by_role("tab", name="模拟面试").click()
        box = picker.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        assert not errors, errors


_SEARCH = """
<div class="md-search"><input class="md-search__input" value="">
<div class="md-search-result"><div class="md-search-result__meta">结果</div>
<ol class="md-search-result__list"></ol></div></div>
"""


def _results(page, typed: str, titles: list[str]) -> dict:
    """Type ``typed``, render ``titles`` as Material does, and read back the order and the hint."""
    return page.evaluate("""([typed, titles]) => new Promise(done => {
        document.querySelector('.md-search__input').value = typed;
        const list = document.querySelector('.md-search-result__list');
        list.replaceChildren(...titles.map(t => {
            const li = document.createElement('li'); li.className = 'md-search-result__item';
            li.innerHTML = '<a><article class="md-search-result__article"><h1></h1></article></a>';
            li.querySelector('h1').textContent = t;
            return li;
        }));
        setTimeout(() => done({order: [...list.querySelectorAll('h1')].map(h => h.textContent),
                               hint: !!document.querySelector('.vf-search-topics')}), 50);
    })""", [typed, titles])


@pytest.mark.browser
def test_search_names_no_missing_title_when_a_title_holds_every_word_of_a_mixed_query():
    """search-rank.js on Material's result markup: a title holding every word (Latin and Chinese, not
    side by side) goes first and no hint; a query no title holds gets the hint."""
    kv = "KV\u200bCache 是\u200b什么？为什么不缓存 Q？显存怎么算？"  # the index's zero-width spaces
    train = "训练一个 7B 模型（AdamW + 混合精度）要多少显存？"
    with browser() as chromium:
        page = chromium.new_page()
        page.set_content(f"<html><body>{_SEARCH}</body></html>")
        page.add_script_tag(path=str(ROOT / "docs" / "assets" / "search-rank.js"))
        for typed in ("KV cache 显存", "kv cache显存", "显存 KV Cache", "KVCache，显存"):
            got = _results(page, typed, [train, kv])
            assert got == {"order": [kv, train], "hint": False}, (typed, got)
        got = _results(page, "强化学习奖励模型部署", [train, kv])
        assert got == {"order": [train, kv], "hint": True}, got
        got = _results(page, "KV cache 量化", [train, kv])  # one word in no title: the hint is right
        assert got["hint"], got
        assert page.evaluate("window.__searchRank.words('KV cache 显存')") == ["kv", "cache", "显存"]


@pytest.mark.browser
def test_the_built_sites_search_puts_the_page_first_without_the_hint_for_a_mixed_query(site):
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1280, "height": 900}, locale="zh-CN")
        page.goto(f"{base}/")
        page.locator("label.md-search__icon, .md-search__input").first.click()
        query = page.locator(".md-search__input")
        query.fill("KV cache 显存")
        deadline = time.monotonic() + 20
        hrefs: list[str] = []
        while time.monotonic() < deadline:  # Material searches on key events, once its worker has the index
            query.press("End")
            page.wait_for_timeout(300)
            hrefs = [a.get_attribute("href") or "" for a in page.locator(".md-search-result__item > a").all()]
            if hrefs and "kv-cache" in hrefs[0]:
                break
        assert hrefs and "kv-cache" in hrefs[0], hrefs[:4]
        assert page.locator(".vf-search-topics").count() == 0


@pytest.mark.browser
def test_the_rounds_summary_stacks_on_a_phone_and_the_ratings_are_chinese(site):
    """The summary after a mock round (seven columns on a desktop) is one block per question on a phone,
    each value after its column's name; the rating buttons carry no English word."""
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport=PHONE, locale="zh-CN", is_mobile=True)
        page.goto(f"{base}/quiz/")
        page.wait_for_load_state("networkidle")
        # a summary as quiz.js writes it (summary(): a th per column, data-label on each cell)
        box = page.evaluate("""() => {
            const heads = ["题目", "说到了", "没说到", "说错了", "用时", "自评", "下次复习"];
            const t = document.createElement("table"); t.className = "quiz-summary";
            t.innerHTML = "<thead><tr>" + heads.map(h => "<th>" + h + "</th>").join("") + "</tr></thead><tbody><tr>" +
              heads.map((h, i) => "<td data-label='" + h + "'>" + (i ? "2" : "expand 和 repeat 的区别：谁拷贝、谁共享存储") + "</td>").join("") +
              "</tr></tbody>";
            document.querySelector("article").appendChild(t);
            const title = t.querySelector("td").getBoundingClientRect();
            const second = getComputedStyle(t.querySelectorAll("td")[1], "::before").content;
            return {title: title.width, right: t.getBoundingClientRect().right, head: getComputedStyle(t.querySelector("thead")).display,
                    second, scroll: document.scrollingElement.scrollWidth, width: document.scrollingElement.clientWidth};
        }""")
        assert box["head"] == "none" and box["second"] == '"说到了："', box
        assert box["title"] >= 300 and box["right"] <= PHONE["width"], box
        assert box["scroll"] <= box["width"], box
        # the rating buttons as the page draws them (their first text node is the rating's word)
        words = page.evaluate("""() => {
            const b = typeof QuizUI.bank === "function" ? QuizUI.bank() : QuizUI.bank;
            const bar = QuizUI.ratingBar(b.questions[0].id, () => {}, 3);
            return [...bar.querySelectorAll("button")].map(x => x.firstChild.textContent);
        }""")
        assert words == ["重来", "困难", "良好", "简单"], words


@pytest.mark.browser
def test_no_question_page_scrolls_sideways_on_a_phone(site):
    """A long declared scope in a claim's tag or a chip wraps inside it: every question page and every 手撕 problem
    page fits a 390 px screen (a 40-character scope once made a page 518 px wide)."""
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.glob("questions/*/index.html"))
    pages += sorted(p.parent.relative_to(site).as_posix() for p in site.glob("judge/*/index.html"))
    wide = {}
    with serve(site) as base, browser() as chromium:
        page = chromium.new_page(viewport=PHONE, locale="zh-CN", is_mobile=True)
        for rel in pages:
            page.goto(f"{base}/{rel}/")
            page.wait_for_load_state("load")
            size = page_size(page)
            if scrolls_sideways(size):
                wide[rel] = size["width"]
    assert len(pages) > 30 and not wide, wide
