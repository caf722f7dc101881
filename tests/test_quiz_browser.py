"""The quiz page in Chromium: the sample site (pages, claims, the real quiz page) served on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from tests._progress_files import BROWSER_EXPORT, HOSTILE
from tests._browser import ARTIFACTS, CHROMIUM, serve, browser as launch_browser
from tests.test_quiz_site import build_sample_site
from tests import _quiz_samples as samples
from verify.quiz.scoring import FIND_RULES

pytestmark = pytest.mark.browser



@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return build_sample_site(tmp_path_factory.mktemp("quizsite"))


@pytest.fixture(scope="module")
def full_bank(root) -> dict:
    """The whole bank (quiz.json): the page carries an index of it and loads each item's part when asked."""
    return json.loads((root / "site" / "quiz.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(root):
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


def upload(page, name: str, data: bytes) -> None:
    page.locator("input.quiz-import").set_input_files({"name": name, "mimeType": "application/json", "buffer": data})


def start_mock(page, tag: str) -> None:
    page.get_by_role("tab", name="模拟面试").click()
    page.locator("select[name=tag]").select_option(tag)
    page.locator("input[name=n]").fill("1")
    page.locator("input[name=seconds]").fill("60")
    page.get_by_role("button", name="开始模拟面试").click()


def test_mock_interview_progress_and_import(page, site):
    app = page.locator("#quiz-app")
    start_mock(page, "memory")
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
    assert "对 expand 的结果原地写会怎样？" in app.locator(".quiz-followup").inner_text()
    page.get_by_label("追问的回答").fill("会报错")
    page.get_by_role("button", name="揭晓答案").click()

    assert page.get_by_test_id("assess").inner_text() == "对照考察点，给自己的回答打标记"
    assert app.locator(".quiz-hint").inner_text() == FIND_RULES["why"]  # why the candidate marks
    points = app.locator(".quiz-point")
    assert nothing_marked(page)
    verdict, confirm = page.get_by_test_id("verdict"), page.get_by_role("button", name="记下自评")
    assert verdict.inner_text() == "还有 2 个考察点没标。" and confirm.is_disabled()
    found = points.nth(0).locator(".quiz-found").inner_text()
    assert found.startswith(FIND_RULES["label"] + "：") and "「" + hostile + "」（含 stride、零拷贝）" in found
    assert "%" not in app.inner_text()  # no percentage for a free answer
    points.nth(0).locator("button[data-mark='said']").click()
    assert verdict.inner_text() == "还有 1 个考察点没标。" and confirm.is_disabled()
    points.nth(1).locator("button[data-mark='said']").click()
    assert verdict.inner_text().startswith("按你的标记：简单") and not confirm.is_disabled()
    points.nth(1).locator("button[data-mark='missed']").click()  # the candidate changes a mark
    assert verdict.inner_text().startswith("按你的标记：困难")
    better = app.locator(".quiz-better").inner_text()
    assert "stride 是 (0, 1)" in better and "常见说法不准确" in better  # the claim's sentence with its value
    assert app.locator("img").count() == 0 and page.evaluate("window.__xss") is None  # the user's text stays text
    assert page.get_by_label("你的回答").input_value() == hostile
    shot(page, "1-reveal")

    page.get_by_role("button", name="记下自评").click()
    assert app.locator("h2").first.inner_text() == "本轮小结"
    assert [c.inner_text() for c in app.locator(".quiz-summary th").all()] == [
        "题目", "说到了", "没说到", "说错了", "用时", "自评", "下次复习"]
    assert "没说到 repeat 会复制出新内存" in app.locator(".quiz-weak").inner_text()
    assert app.locator(".quiz-weak a").first.get_attribute("href") == "../questions/expand-demo/"
    saved = stored(page)
    assert saved["cards"]["expand-demo"]["reps"] == 1 and saved["log"][0]["rating"] == 2
    assert saved["log"][0]["coverage"] == 0.5  # the share the candidate marked 说到了

    page.reload()
    page.get_by_role("tab", name="进度").click()
    row = page.locator("tr[data-id='expand-demo']")
    assert "学习中" in row.inner_text() and row.locator("td").nth(3).inner_text() == "1"

    before = page.evaluate("localStorage.getItem('verify-quiz:v1')")
    status = page.locator(".quiz-status")
    for name, data, says in (("broken.json", b'{"version": 1, "cards": ', "不是合法的 JSON"),
                             ("bad.json", b'{"version": 1, "cards": {"expand-demo": {"due": "x"}}, "log": []}', "due")):
        upload(page, name, data)
        status.filter(has_text=says).wait_for()
        assert "导入失败" in status.inner_text() and "现有进度未改动" in status.inner_text()
        assert page.evaluate("localStorage.getItem('verify-quiz:v1')") == before

    with page.expect_download() as dl:
        page.get_by_role("button", name="导出进度（JSON）").click()
    exported = Path(dl.value.path()).read_bytes()
    assert json.loads(exported)["cards"]["expand-demo"]["reps"] == 1

    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="清空进度").click()
    status.filter(has_text="进度已清空").wait_for()
    assert stored(page)["cards"] == {}
    # a card whose id names no question is reported and skipped; the counts count the known ones
    data = json.loads(exported)
    hostile_id = "<img src=x onerror=alert(1)>"
    data["cards"][hostile_id] = dict(data["cards"]["expand-demo"])
    data["log"].append(dict(data["log"][0], id=hostile_id))
    upload(page, "backup.json", json.dumps(data).encode())
    status.filter(has_text="已导入 1 张").wait_for()
    assert "跳过 1 个题库里没有的 id" in status.inner_text()
    assert page.locator(".quiz-tally").inner_text().startswith("已练 1 / 4 题") and "共 1 次自评" in page.locator(".quiz-tally").inner_text()
    assert set(stored(page)["cards"]) == {"expand-demo"} and page.locator("img").count() == 0
    shot(page, "4-import-unknown-id")


def test_the_browser_refuses_each_hostile_file_as_the_terminal_does(page):
    """The cases of test_quiz_progress.py, read by QuizCore.readProgress: the same reason, word for word."""
    for name, text, why in HOSTILE:
        got = page.evaluate("t => QuizCore.readProgress(t).why || null", text)
        assert got is not None and why in got, (name, got)
    assert page.evaluate("t => QuizCore.readProgress(t).why || null", json.dumps(BROWSER_EXPORT)) is None
    too_big = page.evaluate("QuizCore.readProgress(' '.repeat(QuizCore.MAX_BYTES + 1)).why")
    assert "进度文件最多" in too_big

    # through the import control: refused whole, what is stored stays
    page.get_by_role("tab", name="进度").click()
    before = page.evaluate("localStorage.getItem('verify-quiz:v1')")
    status = page.locator(".quiz-status")
    upload(page, "twice.json", HOSTILE[[n for n, _, _ in HOSTILE].index("a key twice")][1].encode())
    status.filter(has_text="出现了两次").wait_for()
    assert "现有进度未改动" in status.inner_text()
    assert page.evaluate("localStorage.getItem('verify-quiz:v1')") == before


def test_the_browser_checks_the_schema_the_terminal_declares(page):
    """One source of truth: the rules quiz-core.js reads are verify.quiz.progress_file's, carried in the bank."""
    from verify.quiz.progress_file import browser_rules  # noqa: PLC0415

    carried = page.evaluate("JSON.parse(document.getElementById('quiz-bank').textContent).progress_rules")
    assert carried == json.loads(json.dumps(browser_rules()))
    assert page.evaluate("QuizCore.MAX_BYTES") == browser_rules()["max_bytes"]


def _many_reviews(n: int) -> bytes:
    """A good progress file of one card and ``n`` reviews of it, a second apart (64 characters each)."""
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    data = {"version": 1, "cards": {"expand-demo": BROWSER_EXPORT["cards"]["expand-demo"]},
            "log": [{"id": "expand-demo", "rating": 3,
                     "at": (start + timedelta(seconds=k)).isoformat(timespec="milliseconds").replace("+00:00", "Z")}
                    for k in range(n)]}
    return json.dumps(data, separators=(",", ":")).encode()


def test_a_write_the_storage_refuses_is_said_and_what_it_kept_stays(page):
    """Over about 5 MB localStorage refuses a write: an import said nothing and saved nothing, and every
    later rating in the tab was lost with it. Now the import is refused, and a rating kept in the page, both said."""
    page.get_by_role("tab", name="进度").click()
    status = page.locator(".quiz-status")
    upload(page, "small.json", json.dumps(BROWSER_EXPORT).encode())
    status.filter(has_text="已导入 1 张").wait_for()
    before = page.evaluate("localStorage.getItem('verify-quiz:v1')")

    big = _many_reviews(100_000)
    assert len(big) > 5_500_000  # past this Chromium's 5 MB of localStorage
    upload(page, "big.json", big)
    status.filter(has_text="导入失败").wait_for()
    assert "存储空间已满" in status.inner_text() and "现有进度未改动" in status.inner_text()
    assert page.evaluate("localStorage.getItem('verify-quiz:v1')") == before
    assert "共 1 次自评" in page.locator(".quiz-tally").inner_text()  # the page shows what is stored

    # storage full: a rating stays in the page, a warning says it is not saved, what was stored stays
    page.evaluate("""() => { for (const size of [1 << 20, 1 << 14, 1 << 8, 1]) {
        try { for (let i = 0; ; i++) localStorage.setItem('filler-' + size + '-' + i, 'x'.repeat(size)); } catch (e) {} } }""")
    page.get_by_role("tab", name="闪卡").click()
    page.locator("input[name=n]").fill("1")
    page.get_by_role("button", name="开始闪卡").click()
    page.get_by_role("button", name="翻面").click()
    page.locator(".quiz-rating button[data-grade='3']").click()
    banner = page.locator("#quiz-unsaved")
    banner.wait_for()
    assert "浏览器拒绝保存进度" in banner.inner_text() and "导出进度" in banner.inner_text()
    assert page.evaluate("localStorage.getItem('verify-quiz:v1')") == before
    page.get_by_role("tab", name="进度").click()
    assert "共 2 次自评" in page.locator(".quiz-tally").inner_text()  # the rating is kept in the page

    # room again: the next write saves everything the page kept, and the warning goes
    page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('filler-')).forEach(k => localStorage.removeItem(k))")
    page.get_by_role("tab", name="闪卡").click()
    page.locator("input[name=n]").fill("1")
    page.get_by_role("button", name="开始闪卡").click()
    page.get_by_role("button", name="翻面").click()
    page.locator(".quiz-rating button[data-grade='3']").click()
    assert banner.count() == 0
    assert len(stored(page)["log"]) == 3


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
    assert len(stored(page)["cards"]) == 2


def test_corrupt_local_storage_is_set_aside(page):
    page.evaluate("localStorage.setItem('verify-quiz:v1', '{oops')")
    page.reload()
    assert "本地进度无法读取" in page.locator(".quiz-status").inner_text()
    assert page.evaluate("localStorage.getItem('verify-quiz:v1:corrupt')") == "{oops"


REPEAT_EXPAND = yaml.safe_load(samples.REPEAT_EXPAND_KEY_POINTS)


def nothing_marked(page) -> bool:
    """No 说到了 / 没说到 / 说错了 control is checked, and no point carries a mark."""
    page.locator(".quiz-point").first.wait_for()
    return (page.locator(".quiz-mark").count() == 3 * page.locator(".quiz-point").count()
            and page.locator(".quiz-mark[aria-checked='true']").count() == 0
            and page.locator(".quiz-point[data-mark]").count() == 0)


def answer_mock(page, answer: str) -> None:
    page.get_by_label("你的回答").fill(answer)
    page.get_by_role("button", name="提交回答").click()
    page.get_by_role("button", name="揭晓答案").click()


def test_the_marks_alone_rate_a_good_an_inverted_and_a_keyword_answer(page):
    """Nothing is pre-selected for any of the three answers; the same marks give the same rating, stored."""
    for n, name in enumerate(["good", "inverted", "keywords"]):
        start_mock(page, "stride")
        answer_mock(page, samples.ANSWERS[name])
        assert nothing_marked(page), name
        points = page.locator(".quiz-point")
        for i in range(points.count()):
            points.nth(i).locator("button[data-mark='said']").click()
        assert page.get_by_test_id("verdict").inner_text().startswith("按你的标记：简单")
        assert "%" not in page.locator("#quiz-app").inner_text()
        if name == "inverted":  # its sentences are shown as containing the words, nothing more
            text = points.nth(0).inner_text()
            assert "「expand 会拷贝数据，分配一块新内存，stride 和原来一样；」（含 stride）" in text
            assert not any(w in text for w in ("✓", "✗", "匹配", "命中", "相反"))
            shot(page, "2-inverted-answer")
        page.get_by_role("button", name="记下自评").click()
        log = stored(page)["log"]
        assert (log[n]["rating"], log[n]["coverage"]) == (4, 1.0), name


# the browser and the terminal find the same sentences on these answers
PARITY = ["expand 只改 stride，不拷贝数据", "改的是步长。零拷贝！", "它们共享内存，expand 是 O(1)", "ＳＴＲＩＤＥＳ都是 0",
          "公共享有的 strider", "expand 会拷贝数据；常数时间", "o (1) 的开销", "expand 零拷贝，repeat 要拷贝\n\nrepeat 要拷贝", "",
          "写穿到所有共享的行", "不会报错，也不会写穿", "view 并不要求 contiguous", "“view 要求 contiguous”不对",
          *samples.ANSWERS.values()]
KP = [
    {"point": "a", "keywords": ["stride", "不拷贝"], "synonyms": {"stride": ["步长"], "不拷贝": ["零拷贝", "共享内存"]}},
    {"point": "b", "keywords": ["共享"], "synonyms": {}},
    {"point": "c", "keywords": ["O(1)", "拷贝"], "synonyms": {"O(1)": ["常数时间"]}},
]


def _same_sentences(page, cases: list[tuple[str, list]]) -> None:
    """Python's scoring.shared and the page's QuizCore.shared agree on every (answer, key points)."""
    from verify.quiz.schema import KeyPoint  # noqa: PLC0415
    from verify.quiz.scoring import shared  # noqa: PLC0415

    js = page.evaluate("cases => cases.map(([a, kps]) => kps.map(kp => window.__quiz.shared(a, kp)))", cases)
    py = [[[[s, w] for s, w in shared(a, KeyPoint.of(kp))] for kp in kps] for a, kps in cases]
    for (answer, _kps), j, p in zip(cases, js, py, strict=True):
        assert j == p, answer


@pytest.mark.parametrize("key_points", [KP, REPEAT_EXPAND], ids=["small", "repeat-vs-expand"])
def test_the_browser_finds_the_sentences_the_terminal_finds(page, key_points):
    _same_sentences(page, [(answer, key_points) for answer in PARITY])
    found = page.evaluate("([a, kp]) => window.__quiz.shared(a, kp)", ["改的是步长。零拷贝！", KP[0]])
    assert found == [["改的是步长。", ["步长"]], ["零拷贝！", ["零拷贝"]]]  # the JS finds, not only agrees


def right_answer(d: dict) -> dict | str:
    return ({"faster": d["faster"], "factor": str(d["factor"])} if d["format"] == "faster"
            else d["answer"] if d["format"] == "exception" else d["answer_text"])


def answer_drill(page, d: dict, answer) -> None:
    if d["format"] == "faster":
        page.locator(f"input[type=radio][value='{answer['faster']}']").check()
        page.get_by_label("大约几倍").fill(answer.get("factor") or "")
    else:
        page.get_by_label("你的预测").fill(answer)
    page.get_by_role("button", name="对照观测值").click()


def test_drills_check_the_prediction_against_the_observation(page, full_bank):
    drills = {d["id"]: d for d in full_bank["drills"]}
    assert {d["format"] for d in drills.values()} == {"value", "faster", "exception"}
    for right in (True, False):
        page.get_by_role("tab", name="预测输出").click()
        page.locator("input[name=n]").fill(str(len(drills)))
        page.get_by_role("button", name="开始预测输出").click()
        for _ in drills:
            code = page.locator("pre.quiz-code").inner_text()
            d = next(d for d in drills.values() if d["code"] == code)
            wrong = {"faster": "same"} if d["format"] == "faster" else "(9, 9)"
            answer_drill(page, d, right_answer(d) if right else wrong)
            result = page.locator(".quiz-drill-result")
            assert page.get_by_test_id("verdict").inner_text() == ("✓ 预测对了" if right else "✗ 预测错了"), d["id"]
            assert d["device"] in result.inner_text() and "torch " + d["torch"] in result.inner_text()
            assert d["sentence"].replace("`", "") in result.inner_text()
            suggested = page.locator(".quiz-rating button.suggested").get_attribute("data-grade")
            assert suggested == ("3" if right else "1")
            page.locator(f".quiz-rating button[data-grade='{suggested}']").click()
        assert page.locator("#quiz-app h2").first.inner_text() == "本轮小结"
    log = [r for r in stored(page)["log"] if r["id"].startswith("drill:")]
    assert len(log) == 2 * len(drills) and [r["correct"] for r in log] == [True] * len(drills) + [False] * len(drills)


def _verify(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIFY_")} | {"NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "verify.cli", "quiz", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)


def _ms(at: str) -> int:  # a review's time as the browser keeps it
    return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)


def test_a_browser_export_imported_into_the_terminal_shows_the_same_reviews(page, root, tmp_path):
    start_mock(page, "memory")
    answer_mock(page, "expand 只改 stride")
    page.locator(".quiz-mark[data-mark='missed']").first.click()
    page.locator(".quiz-mark[data-mark='said']").nth(1).click()
    page.get_by_role("button", name="记下自评").click()
    page.get_by_role("tab", name="预测输出").click()
    page.locator("input[name=n]").fill("1")
    page.get_by_role("button", name="开始预测输出").click()
    page.locator("input[name=prediction], input[type=radio]").first.click()  # any answer: the review is what counts
    page.get_by_role("button", name="对照观测值").click()
    page.locator(".quiz-rating button[data-grade='4']").click()
    page.get_by_role("tab", name="进度").click()
    with page.expect_download() as dl:
        page.get_by_role("button", name="导出进度（JSON）").click()
    (browser_file := tmp_path / "browser.json").write_bytes(Path(dl.value.path()).read_bytes())
    browser_log = json.loads(browser_file.read_text(encoding="utf-8"))["log"]

    db = tmp_path / "terminal.sqlite3"
    res = _verify(root, "import", str(browser_file), "--db", str(db))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "已导入 2 张卡片的进度、2 条自评" in res.stdout
    rows = sqlite3.connect(db).execute("SELECT question_id, rating, reviewed_at FROM reviews ORDER BY id").fetchall()
    assert [(q, r, _ms(at)) for q, r, at in rows] == [(e["id"], e["rating"], _ms(e["at"])) for e in browser_log]
    stats = _verify(root, "stats", "--db", str(db))
    assert "学习中" in stats.stdout and "预测输出：已练 1 /" in stats.stdout, stats.stdout

    # and back: the terminal's export imports into a browser with no progress
    terminal_file = tmp_path / "terminal.json"
    assert _verify(root, "export", str(terminal_file), "--db", str(db)).returncode == 0
    page.evaluate("localStorage.clear()")
    page.reload()
    page.get_by_role("tab", name="进度").click()
    upload(page, "terminal.json", terminal_file.read_bytes())
    page.locator(".quiz-status").filter(has_text="已导入 2 张").wait_for()
    tally = page.locator(".quiz-tally").inner_text()
    assert tally.startswith("已练 1 / 4 题，预测输出 1 /") and "共 2 次自评" in tally
    assert [(e["id"], e["rating"], _ms(e["at"])) for e in stored(page)["log"]] == \
        [(e["id"], e["rating"], _ms(e["at"])) for e in browser_log]


def test_a_pages_link_opens_the_quiz_on_that_question(browser, site):
    """练这道题: #q=<id> picks the question; every try gives that one, not a draw."""
    ctx = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
    pg = ctx.new_page()
    for _ in range(3):
        pg.goto(site + "/quiz/#q=compile-demo")
        pg.reload()
        assert pg.locator("select[name=question]").input_value() == "compile-demo"
        assert pg.locator("input[name=n]").is_disabled()
        pg.get_by_role("button", name="开始模拟面试").click()
        assert pg.locator(".quiz-question").inner_text() == "torch.compile 为什么能加速"
    ctx.close()


def test_on_a_phone_the_tabs_stay_on_one_line_and_the_start_button_is_in_view(browser, site):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN", is_mobile=True)
    pg = ctx.new_page()
    pg.goto(site + "/quiz/")
    tabs = pg.locator(".quiz-tabs button")
    tops = {round(tabs.nth(i).bounding_box()["y"]) for i in range(tabs.count())}
    heights = {round(tabs.nth(i).bounding_box()["height"]) for i in range(tabs.count())}
    assert len(tops) == 1 and max(heights) < 60, (tops, heights)  # one line, no character per line
    start = pg.get_by_role("button", name="开始模拟面试").bounding_box()
    assert start["y"] + start["height"] <= 844, start
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / "quiz-5-phone.png"))
    ctx.close()


def test_the_drill_tab_has_one_question_picker_and_its_code_wraps_on_a_phone(browser, site, full_bank):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN", is_mobile=True)
    pg = ctx.new_page()
    pg.goto(site + "/quiz/")
    pg.get_by_role("tab", name="预测输出").click()
    assert pg.locator("#quiz-app select[name=question]").count() == 1
    drills = full_bank["drills"]
    one = pg.locator("#quiz-app select[name=question]")
    asked = {o.get_attribute("value") for o in one.locator("option").all()} - {""}
    assert asked == {d["question"] for d in drills}  # the questions that have drills, each once
    one.select_option(drills[0]["question"])
    pg.get_by_role("button", name="开始预测输出").click()
    code = pg.locator("pre.quiz-code")
    assert code.inner_text() in {d["code"] for d in drills}
    pg.evaluate("""() => { const c = document.querySelector('pre.quiz-code code');
                           c.textContent = c.textContent + '\\nx = ' + 'a_long_name + '.repeat(20) + '1'; }""")
    wide = pg.evaluate("""() => Array.from(document.querySelectorAll('pre.quiz-code, pre.quiz-code code'))
                                     .map(e => [e.scrollWidth, e.clientWidth])""")
    assert len(wide) == 2 and all(w <= c for w, c in wide), wide  # a line longer than the phone wraps, not cut or scrolled
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    ctx.close()


@pytest.fixture(scope="module")
def real_bank() -> dict:
    from tests._project import REPO_SETTINGS  # noqa: PLC0415
    from verify.quiz.bank import build_bank  # noqa: PLC0415

    return build_bank(REPO_SETTINGS.docs_dir, html=False).to_json()


def test_the_browser_finds_the_sentences_the_terminal_finds_on_the_inversion_set(page, real_bank):
    from tests._inversions import INVERSIONS  # noqa: PLC0415

    questions = {q["id"]: q for q in real_bank["questions"]}
    _same_sentences(page, [(answer, questions[qid]["key_points"]) for qid, _i, answer in INVERSIONS])


def test_no_mark_is_pre_selected_on_any_inverted_answer(browser, site, real_bank):
    """The quiz page with the real questions: after each inverted answer no mark is chosen, the
    confirm button waits for the candidate, and the answer's sentence shows under its point."""
    from tests._inversions import INVERSIONS  # noqa: PLC0415
    from verify.quiz.schema import KeyPoint  # noqa: PLC0415
    from verify.quiz.scoring import shared  # noqa: PLC0415

    questions = {q["id"]: q for q in real_bank["questions"]}

    def with_real_questions(route):
        response = route.fetch()
        html = response.text()
        bank = json.loads(re.search(r'<script type="application/json" id="quiz-bank">(.*?)</script>', html, re.S).group(1))
        bank.update(questions=real_bank["questions"], tags=real_bank["tags"])
        inline = json.dumps(bank, ensure_ascii=False).replace("</", "<\\/")
        html = re.sub(r'(<script type="application/json" id="quiz-bank">).*?(</script>)',
                      lambda m: m.group(1) + inline + m.group(2), html, flags=re.S)
        route.fulfill(response=response, body=html)

    ctx = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.route(re.compile(r".*/quiz/$"), with_real_questions)
    pg.goto(site + "/quiz/")
    for qid, index, answer in INVERSIONS:
        pg.get_by_role("tab", name="模拟面试").click()
        pg.locator("select[name=question]").select_option(qid)
        pg.get_by_role("button", name="开始模拟面试").click()
        answer_mock(pg, answer)
        assert nothing_marked(pg), (qid, answer)
        n = pg.locator(".quiz-point").count()
        assert pg.get_by_test_id("verdict").inner_text() == f"还有 {n} 个考察点没标。"
        assert pg.get_by_role("button", name="记下自评").is_disabled()
        shown = pg.locator(".quiz-point").nth(index).locator(".quiz-found").inner_text()
        expected = shared(answer, KeyPoint.of(questions[qid]["key_points"][index]))
        assert expected and shown.startswith(FIND_RULES["label"] + "："), (qid, shown)
        assert all(f"「{s}」（含 {'、'.join(w)}）" in shown for s, w in expected), (qid, shown)
    ctx.close()
    assert not errors, errors


def test_judge_items_in_the_browser_check_the_answer_as_the_terminal_does(page, full_bank):
    """判断与计算: 对 on a claim's true sentence is right, 对 on one with a wrong value is wrong; the terminal's rule."""
    from verify.quiz.objective import check  # noqa: PLC0415
    from verify.quiz.schema import Objective  # noqa: PLC0415

    items = full_bank["objective"]
    assert items and {o["kind"] for o in items} == {"judge"}  # the sample site has no calculators
    page.get_by_role("tab", name="判断与计算").click()
    page.locator("select[name=question]").select_option("expand-demo")
    page.locator("input[name=n]").fill("3")
    page.get_by_role("button", name="开始判断与计算").click()
    mine = [o for o in items if o["question"] == "expand-demo"]
    results = []
    for _ in range(min(3, len(mine))):
        prompt = page.locator(".quiz-prompt").inner_text().split("\n", 1)[1].strip()
        item = next(o for o in mine if o["prompt"].replace("`", "") == prompt)  # code marks are shown as <code>
        page.get_by_role("button", name="对", exact=True).click()
        verdict = page.get_by_test_id("verdict").inner_text()
        assert verdict == ("答对了：这句是对的" if item["answer"] else "答错了：这句是错的")
        assert check(Objective.from_json(item), "对") is verdict.startswith("答对了")
        results.append("对" if item["answer"] else "错")
        page.locator(".quiz-rating button.suggested").click()
    assert page.locator("h2").first.inner_text() == "本轮小结"
    # the summary says which were answered right, and the score
    assert [c.inner_text() for c in page.locator(".quiz-summary td[data-label=结果]").all()] == results
    assert page.locator(".quiz-score").inner_text() == f"答对 {results.count('对')} / {len(results)} 道"
    for answer in ("2.5", "2.52 GiB", "2.6", "", "1,280"):
        js = page.evaluate("([o, a]) => window.__quiz.checkObjective(o, a)",
                           [{"kind": "calc", "answer": 2.5, "tolerance": 0.01}, answer])
        py = check(Objective(id="x", kind="calc", question="q", prompt="", answer=2.5, answer_text="", tolerance=0.01), answer)
        assert js is py, answer


# --- the page carries an index of the bank; each item's part loads before the item is shown ---------------

def _part(url: str) -> str:
    """``q-compile-demo`` of ``…/quiz/bank/q-compile-demo.<digest>.js``."""
    return url.rsplit("/", 1)[1].split(".", 1)[0]


@pytest.fixture
def fresh(browser):
    """A page of its own (routes set before it loads), with the parts it asked for and its errors."""
    ctx = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
    pg = ctx.new_page()
    pg.asked, errors = [], []  # type: ignore[attr-defined]
    pg.on("request", lambda r: pg.asked.append(_part(r.url)) if "/quiz/bank/" in r.url else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    ctx.close()
    assert not errors, errors


def test_a_questions_part_loads_when_it_is_asked_for_and_before_it_shows(fresh, site, full_bank):
    pg = fresh
    pg.goto(site + "/quiz/#q=compile-demo")
    pg.wait_for_load_state("networkidle")
    assert pg.asked == []  # the picker, the counts and the due counts come from the page's index
    assert pg.locator("select[name=question] option").count() == 1 + len(full_bank["questions"])
    pg.get_by_role("button", name="开始模拟面试").click()
    assert pg.locator(".quiz-question").inner_text() == "torch.compile 为什么能加速"
    assert pg.asked == ["q-compile-demo"]
    answer_mock(pg, "编译成融合的 kernel")
    q = next(q for q in full_bank["questions"] if q["id"] == "compile-demo")
    assert pg.locator(".quiz-point").count() == len(q["key_points"])  # what the part carried
    assert q["key_points"][0]["point"] in pg.locator(".quiz-points").inner_text()
    assert q["follow_ups"][0]["q"] in pg.locator(".quiz-followup").inner_text()

    pg.get_by_role("tab", name="预测输出").click()  # the tab's part is asked for as the tab opens
    pg.locator("select[name=question]").select_option("")
    pg.locator("input[name=n]").fill("1")
    pg.get_by_role("button", name="开始预测输出").click()
    assert pg.locator("pre.quiz-code").inner_text() in {d["code"] for d in full_bank["drills"]}
    assert sorted(pg.asked) == ["drills", "q-compile-demo"]


@pytest.mark.parametrize("tab, start, shown", [("预测输出", "开始预测输出", "pre.quiz-code"),
                                                ("判断与计算", "开始判断与计算", ".quiz-prompt")])
def test_a_part_that_does_not_load_is_said_and_the_next_try_loads_it(fresh, site, tab, start, shown):
    pg = fresh
    broken = re.compile(r".*/quiz/bank/(q-compile-demo|drills|objective)\.[0-9a-f]+\.js$")
    pg.route(broken, lambda route: route.abort())
    pg.goto(site + "/quiz/#q=compile-demo")
    status = pg.locator(".quiz-status")
    pg.get_by_role("button", name="开始模拟面试").click()
    status.filter(has_text="题目没有载入").wait_for()
    assert "q-compile-demo" in status.inner_text() and "再试一次" in status.inner_text()
    assert pg.locator(".quiz-question").count() == 0 and pg.get_by_role("button", name="开始模拟面试").is_enabled()

    pg.get_by_role("tab", name=tab).click()  # a start before the tab's part is in waits for it, and says why not
    pg.locator("select[name=question]").select_option("")
    pg.locator("input[name=n]").fill("1")
    pg.get_by_role("button", name=start).click()
    status.filter(has_text="题目没有载入").wait_for()
    assert pg.locator(shown).count() == 0 and pg.get_by_role("button", name=start).is_enabled()

    pg.unroute(broken)
    pg.get_by_role("button", name=start).click()
    pg.locator(shown).wait_for()
    assert status.inner_text() == ""
    pg.get_by_role("tab", name="模拟面试").click()
    pg.get_by_role("button", name="开始模拟面试").click()
    assert pg.locator(".quiz-question").inner_text() == "torch.compile 为什么能加速"
