"""The quiz page in Chromium: a tiny site built with mkdocs, served on 127.0.0.1, driven by Playwright."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._browser import ARTIFACTS, CHROMIUM, serve
from tests._browser import browser as launch_browser
from verify.quiz.samples import write_sample_docs
from verify.quiz.scoring import score

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent

MKDOCS_YML = """site_name: 测验
docs_dir: docs
site_dir: site
strict: true
theme: {name: material, language: zh, font: false}
plugins: []
nav:
  - index.md
  - quiz.md
  - 题目:
      - questions/expand-demo.md
      - questions/compile-demo.md
      - questions/dispatch-demo.md
markdown_extensions:
  - admonition
  - attr_list
  - md_in_html
  - toc: {permalink: true}
  - pymdownx.superfences:
      custom_fences:
        - name: quizbank
          class: quizbank
          format: !!python/name:verify.quiz.fence.quizbank_fence
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("quizsite")
    docs = root / "docs"
    write_sample_docs(docs)
    (docs / "index.md").write_text("# 首页\n", encoding="utf-8")
    shutil.copy(ROOT / "docs" / "quiz.md", docs / "quiz.md")
    shutil.copytree(ROOT / "docs" / "assets" / "quiz", docs / "assets" / "quiz")
    (root / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(root / "mkdocs.yml")], check=True,
                   env=env, cwd=root, timeout=180)
    with serve(root / "site") as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is not installed: `make system-deps` installs it")
    with launch_browser() as chromium:
        yield chromium


@pytest.fixture
def page(browser, site):
    ctx = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN", accept_downloads=True)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(site + "/quiz/")
    yield pg
    ctx.close()
    assert not errors, errors


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")  # the sticky header would otherwise cover the middle of the shot
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f"quiz-{name}.png"), full_page=True)


def stored(page) -> dict:
    return json.loads(page.evaluate("localStorage.getItem('verify-quiz:v1') || 'null'") or "null")


def test_mock_interview_progress_and_import(page, site):
    app = page.locator("#quiz-app")
    page.get_by_role("tab", name="模拟面试").wait_for()
    page.locator("select[name=tag]").select_option("memory")
    page.locator("input[name=n]").fill("1")
    page.locator("input[name=seconds]").fill("60")
    page.get_by_role("button", name="开始模拟面试").click()

    timer = page.get_by_test_id("timer")
    assert app.locator(".quiz-question").inner_text() == "expand 和 repeat 的区别"
    first = timer.inner_text()
    assert re.fullmatch(r"剩余 [01]:\d\d", first), first
    page.wait_for_timeout(1300)
    assert timer.inner_text() != first  # the clock runs

    hostile = '<img src=x onerror="window.__xss=1">expand 只改 stride，零拷贝'
    page.get_by_label("你的回答").fill(hostile)
    page.get_by_role("button", name="提交回答").click()
    assert timer.inner_text().startswith("用时 0:")
    followup = app.locator(".quiz-followup")
    assert "对 expand 的结果原地写会怎样？" in followup.inner_text()
    page.get_by_label("追问的回答").fill("会报错")
    page.get_by_role("button", name="揭晓答案").click()

    assert page.get_by_test_id("score").inner_text() == "考察点覆盖率 50%"
    points = app.locator(".quiz-point")
    assert points.nth(0).get_attribute("class").endswith("covered")
    assert points.nth(1).get_attribute("class").endswith("missed")
    assert "stride 设为 0" in app.locator(".quiz-better").inner_text()
    assert "常见说法不准确" in app.locator(".quiz-better").inner_text()
    # the user's text stays text
    assert app.locator("img").count() == 0
    assert page.evaluate("window.__xss") is None
    assert page.get_by_label("你的回答").input_value() == hostile
    shot(page, "1-reveal")

    page.locator(".quiz-rating button[data-grade='3']").click()
    assert app.locator("h2").first.inner_text() == "本轮小结"
    assert "repeat 会复制出新内存" in app.locator(".quiz-weak").inner_text()
    assert app.locator(".quiz-weak a").first.get_attribute("href") == "../questions/expand-demo/"
    shot(page, "2-summary")
    saved = stored(page)
    assert saved["cards"]["expand-demo"]["reps"] == 1 and saved["log"][0]["rating"] == 3

    page.reload()
    page.get_by_role("tab", name="进度").click()
    row = page.locator("tr[data-id='expand-demo']")
    assert "学习中" in row.inner_text() and row.locator("td").nth(3).inner_text() == "1"
    shot(page, "3-progress-after-reload")

    before = page.evaluate("localStorage.getItem('verify-quiz:v1')")
    status = page.locator(".quiz-status")
    page.locator("input.quiz-import").set_input_files(
        {"name": "broken.json", "mimeType": "application/json", "buffer": b'{"version": 1, "cards": '})
    status.filter(has_text="导入失败").wait_for()
    assert "不是合法的 JSON" in status.inner_text() and "现有进度未改动" in status.inner_text()
    shot(page, "4-import-broken")
    bad = {"version": 1, "cards": {"expand-demo": {"due": "not a date"}}, "log": []}
    page.locator("input.quiz-import").set_input_files(
        {"name": "bad.json", "mimeType": "application/json", "buffer": json.dumps(bad).encode()})
    status.filter(has_text="due").wait_for()
    assert page.evaluate("localStorage.getItem('verify-quiz:v1')") == before
    assert row.locator("td").nth(3).inner_text() == "1"

    with page.expect_download() as dl:
        page.get_by_role("button", name="导出进度（JSON）").click()
    exported = Path(dl.value.path()).read_bytes()
    assert json.loads(exported)["cards"]["expand-demo"]["reps"] == 1

    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="清空进度").click()
    status.filter(has_text="进度已清空").wait_for()
    assert stored(page)["cards"] == {}
    page.locator("input.quiz-import").set_input_files(
        {"name": "backup.json", "mimeType": "application/json", "buffer": exported})
    status.filter(has_text="已导入 1 张").wait_for()
    assert stored(page)["cards"]["expand-demo"]["reps"] == 1


def test_flashcards(page):
    page.get_by_role("tab", name="闪卡").click()
    page.locator("select[name=difficulty]").select_option("4")
    page.locator("input[name=n]").fill("2")
    page.get_by_role("button", name="开始闪卡").click()
    for _ in range(2):
        page.get_by_role("button", name="翻面").click()
        page.locator(".quiz-better").wait_for()
        page.locator(".quiz-rating button[data-grade='1']").click()
    assert page.locator("#quiz-app h2").first.inner_text() == "本轮小结"
    shot(page, "5-flashcards-summary")
    assert len(stored(page)["cards"]) == 2


def test_corrupt_local_storage_is_set_aside(page):
    page.evaluate("localStorage.setItem('verify-quiz:v1', '{oops')")
    page.reload()
    status = page.locator(".quiz-status")
    assert "本地进度无法读取" in status.inner_text()
    assert page.evaluate("localStorage.getItem('verify-quiz:v1:corrupt')") == "{oops"


# the browser scores with Intl.Segmenter, the terminal with jieba: same verdicts on these answers
PARITY = ["expand 只改 stride，不拷贝数据", "改的是步长，零拷贝", "它们共享内存，expand 是 O(1)", "ＳＴＲＩＤＥＳ都是 0",
          "公共享有的 strider", "expand 会拷贝数据，常数时间", "o (1) 的开销", "expand 零拷贝，repeat 要拷贝", ""]
KP = [
    {"point": "a", "keywords": ["stride", "不拷贝"], "synonyms": {"stride": ["步长"], "不拷贝": ["零拷贝", "共享内存"]}},
    {"point": "b", "keywords": ["共享"], "synonyms": {}},
    {"point": "c", "keywords": ["O(1)", "拷贝"], "synonyms": {"O(1)": ["常数时间"]}},
]


def test_browser_scoring_matches_terminal(page):
    for answer in PARITY:
        js = page.evaluate("([a, kp]) => window.__quiz.score(a, kp).points.map(p => p.hits)", [answer, KP])
        py = [p.hits for p in score(answer, KP).points]
        assert js == py, answer
