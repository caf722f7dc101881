"""计算题 in Chromium: the browser accepts the answers the terminal accepts (the tolerance, or two significant
digits) and its reveal shows the item's own numbers, in the terminal's words."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from tests.test_quiz_browser import browser, page, root, site  # noqa: F401  (the sample site's fixtures)
from verify.quiz import objective
from verify.quiz.practice import objective_reveal
from verify.quiz.schema import Objective

pytestmark = pytest.mark.browser

CASES = [("1.3", 1.25, 0.02), ("1.2", 1.25, 0.02), ("1.29", 1.25, 0.02), ("1.4", 1.25, 0.02), ("1.27 GiB", 1.25, 0.02),
         ("13", 12.6, 0.001), ("12", 12.6, 0.001), ("0.0051", 0.00513, 0.001), ("4,100", 4096, 0.001),
         ("4,090", 4096, 0.001), ("1000", 996, 0.001), ("99", 100, 0.001), ("100", 100, 0.001), ("0", 0, 0.01),
         ("38", 37.5, 0.005), ("37.8", 37.5, 0.005), ("3e9", 3.1e9, 0.01), ("", 2.5, 0.01)]


def test_the_browser_accepts_the_answers_the_terminal_accepts(page):  # noqa: F811
    said = []
    for answer, want, tolerance in CASES:
        js = page.evaluate("([o, a]) => window.__quiz.checkObjective(o, a)",
                           [{"kind": "calc", "answer": want, "tolerance": tolerance}, answer])
        py = objective.check(Objective(id="x", kind="calc", question="q", prompt="", answer=want, answer_text="",
                                       tolerance=tolerance), answer)
        assert js is py, (answer, want)
        said.append(py)
    assert True in said and False in said


def _calc_item() -> Objective:
    calc = objective.CalcSet(id="demo", question="expand-demo", claim="demo.calc", unit="GiB", tolerance=0.02, digits=3,
                             explain="2 × 层数 × 头数", items=[objective.CalcItem(
                                 params={"layers": 5, "heads": 1}, prompt="5 层、1 个头，多少 GiB？", answer=1.25,
                                 worked="2 × 5 × 1 ÷ 8")])
    question = SimpleNamespace(id="expand-demo", title="t", tags=(), difficulty=1, url="questions/expand-demo/", page_url=None)
    return objective.calculations([calc], [question])[0]  # type: ignore[list-item]


def test_the_calc_reveal_shows_the_items_numbers_as_the_terminal_does(browser, site):  # noqa: F811
    item = _calc_item()

    def with_the_item(route):
        response = route.fetch()
        html = response.text()
        pattern = r'(<script type="application/json" id="quiz-bank">)(.*?)(</script>)'
        bank = json.loads(re.search(pattern, html, re.S).group(2))
        bank["objective"] = [item.to_json()]
        inline = json.dumps(bank, ensure_ascii=False).replace("</", "<\\/")
        route.fulfill(response=response, body=re.sub(pattern, lambda m: m.group(1) + inline + m.group(3), html, flags=re.S))

    ctx = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.route(re.compile(r".*/quiz/$"), with_the_item)
    pg.goto(site + "/quiz/")
    pg.get_by_role("tab", name="判断与计算").click()
    pg.get_by_role("button", name="开始判断与计算").click()
    pg.locator("input[name=number]").fill("1.3")
    pg.get_by_role("button", name="核对答案").click()
    assert pg.get_by_test_id("verdict").inner_text().startswith("答对了")
    shown = [p.inner_text() for p in pg.locator(".quiz-reveal p:not(.quiz-links)").all()]
    assert shown == [label + text for label, text in objective_reveal(item)]
    assert "2 × 5 × 1 ÷ 8 = 1.25 GiB" in shown[1] and "±2%" in shown[2]
    ctx.close()
    assert not errors, errors
