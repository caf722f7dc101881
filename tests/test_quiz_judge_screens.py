"""判断题 on the sample site (its claims run once by the build): after the answer, the terminal and the
browser show the claim's true sentence (the correction, for a false one) and link to the claim on its page."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pexpect
import pytest

from tests._browser import CHROMIUM, serve
from tests._browser import browser as launch_browser
from tests.test_quiz_site import build_sample_site

pytestmark = pytest.mark.slow


def shown(text: str) -> str:
    return text.replace("`", "")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return build_sample_site(tmp_path_factory.mktemp("judgesite"))


@pytest.fixture(scope="module")
def judged(root) -> dict[str, dict]:
    """prompt (as the browser shows it: code marks become <code>) -> item, of the built quiz.json: the sample
    claims with a false variant (a literal expected, or a bound the speed-up passes)."""
    bank = json.loads((root / "site" / "quiz.json").read_text(encoding="utf-8"))
    items = {shown(o["prompt"]): o for o in bank["objective"] if o["kind"] == "judge"}
    assert {o["claim"] for o in items.values()} >= {"expand-demo.demo", "repeat-vs-expand.demo"}, items
    assert {o["answer"] for o in items.values()} == {True, False}  # the sample has both kinds
    return items


def test_the_terminal_shows_the_claims_sentence_and_its_page(root, judged):
    env = dict(os.environ, XDG_DATA_HOME=str(root / "data"), NO_COLOR="1", TERM="dumb", COLUMNS="400")
    child = pexpect.spawn(sys.executable, ["-m", "verify.cli", "quiz", "objective", "--kind", "judge",
                                           "-n", str(len(judged)), "--site-url", "https://example.org/s/"],
                          env=env, cwd=str(root), encoding="utf-8", timeout=60, dimensions=(50, 400))
    for _ in judged:
        child.expect("这句话对吗？")
        child.expect(r"对还是错？\[1 对 / 2 错\]")
        item = next(o for o in judged.values() if o["prompt"] in child.before)
        child.sendline("x")
        child.expect("请输入 1（对）或 2（错）")
        child.sendline("2")  # 错
        child.expect(r"(答对了|答错了)：这句是(对|错)的")
        assert child.match.group(1) == ("答错了" if item["answer"] else "答对了")
        child.expect(r"回车 = ")
        screen = child.before.replace("\r\n", "")  # long lines wrap
        assert ("原句：" if item["answer"] else "正确的说法：") + item["explain"] in screen, screen
        assert f"论断 {item['claim']} " in screen, screen
        if not item["answer"]:
            change = item["params"]
            assert f"错在「{change['said']}」，应为「{change['true']}」。" in screen and change["said"] in item["prompt"], screen
        link = f"论断所在的页面：https://example.org/s/questions/{item['question']}/#claim-{item['claim']}"
        assert link in screen, screen
        child.sendline("")
    child.expect("本轮小结")
    child.expect(pexpect.EOF)
    conn = sqlite3.connect(root / "data" / "verified-infra-interview" / "quiz.sqlite3")
    ids = {r[0] for r in conn.execute("SELECT question_id FROM reviews").fetchall()}
    assert ids == {f"judge:{o['claim']}" for o in judged.values()}


def test_the_browser_shows_the_claims_sentence_and_links_to_the_claim(root, judged):
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is not installed: `make system-deps` installs it")
    with serve(root / "site") as base, launch_browser() as chromium:
        page = chromium.new_page(viewport={"width": 1200, "height": 900}, locale="zh-CN")
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/quiz/")
        page.get_by_role("tab", name="判断与计算").click()
        assert f"共 {len(judged)} 道判断题" in page.locator(".quiz-intro").inner_text()
        page.locator("select[name=kind]").select_option("judge")
        page.locator("input[name=n]").fill(str(len(judged)))
        page.get_by_role("button", name="开始判断与计算").click()
        for _ in judged:
            prompt = page.locator(".quiz-prompt").inner_text().split("\n", 1)[1].strip()
            item = judged[prompt]
            page.get_by_role("button", name="错", exact=True).click()
            verdict = page.get_by_test_id("verdict").inner_text()
            assert verdict == ("答错了：这句是对的" if item["answer"] else "答对了：这句是错的"), verdict
            said = page.locator(".quiz-reveal").inner_text()
            label = "原句：" if item["answer"] else "正确的说法："
            assert label + shown(item["explain"]) in said.replace("\n", ""), said
            assert f"论断 {item['claim']} " in said, said
            link = page.get_by_role("link", name="打开论断所在的页面")
            href = link.get_attribute("href")
            assert href.endswith(f"questions/{item['question']}/#claim-{item['claim']}"), href
            target = (root / "site" / "quiz" / href.split("#")[0]).resolve() / "index.html"
            assert f'id="claim-{item["claim"]}"' in target.read_text(encoding="utf-8"), target  # the anchor exists
            page.locator(".quiz-rating button.suggested").click()
        assert page.locator("h2").first.inner_text() == "本轮小结"
        assert not errors, errors
