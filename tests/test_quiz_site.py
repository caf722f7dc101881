"""A tiny site of the sample pages and their claims: quiz.json with drills, the deck, the quiz page's link.

``build_sample_site`` is shared with the browser and Anki tests.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests._project import MKDOCS_YML, mkdocs_build, write
from tests._quiz_samples import write_interview_page, write_sample_docs, write_sample_snippets

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
QUIZ_FENCE = "        - {name: quizbank, class: quizbank, format: !!python/name:verify.build.quizbank_fence }\n"
SITE_YML = (MKDOCS_YML.replace("          format: !!python/name:verify.build.ledger_fence\n",
                               "          format: !!python/name:verify.build.ledger_fence\n" + QUIZ_FENCE)
            + "  - admonition\n  - attr_list\n  - md_in_html\n  - toc: {permalink: true}\n")


def build_sample_site(root: Path, site_url: str | None = None) -> Path:
    """The sample pages, their claims (run here) and the real quiz page, built strictly into ``root/site``;
    called again on the same ``root``, it builds the pages as they are now."""
    if not (root / "mkdocs.yml").exists():
        yml = SITE_YML + (f"site_url: {site_url}\n" if site_url else "")
        write(root, {"mkdocs.yml": yml, "docs/index.md": "# 首页\n"})
        write_sample_docs(root / "docs")
        write_interview_page(root / "docs")
        write_sample_snippets(root)
        shutil.copy(REPO / "docs" / "quiz.md", root / "docs" / "quiz.md")
        shutil.copytree(REPO / "docs" / "assets" / "quiz", root / "docs" / "assets" / "quiz")
    out = mkdocs_build(root)
    assert out.returncode == 0, out.stderr[-4000:]
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_sample_site(tmp_path_factory.mktemp("quizsite"), site_url="https://example.org/quiz-site/")


def test_drills_of_every_kind_answered_by_the_evidence(site):
    bank = json.loads((site / "site" / "quiz.json").read_text(encoding="utf-8"))
    ledger = {c["id"]: c for c in json.loads((site / "site" / "evidence.json").read_text(encoding="utf-8"))["claims"]}
    assert {d["format"] for d in bank["drills"]} == {"value", "faster", "exception"}
    for d in bank["drills"]:
        row = ledger[d["claim"]]
        if d["format"] == "exception":
            assert d["answer"] == row["observed"]["exception"].split(":")[0]
        else:
            assert d["answer"] == row["observed"][d["key"]]
        assert (d["device"], d["torch"]) == (row["device"], row["torch"])
        assert d["sentence"] == row["statement"]
        assert d["page_url"] == "https://example.org/quiz-site/" + d["url"]


def test_the_deck_is_built_and_linked_from_the_quiz_page(site):
    deck = site / "site" / "interview-quiz.apkg"
    assert deck.stat().st_size > 1000
    html = (site / "site" / "quiz" / "index.html").read_text(encoding="utf-8")
    link = re.search(r'<a href="([^"]+)" download>下载 Anki 牌组', html)
    assert link and (site / "site" / "quiz" / link.group(1)).resolve() == deck.resolve()
    whole = json.loads((site / "site" / "quiz.json").read_text(encoding="utf-8"))
    assert page_bank(site / "site") == {k: v for k, v in whole.items() if k != "evidence"}


def page_bank(site_dir: Path) -> dict:
    """The bank as the quiz page holds it once every part has arrived: its index, each item completed by the
    part it names (what ``QuizUI.arrive`` does), without the index's own bookkeeping (``parts``, ``part``)."""
    html = (site_dir / "quiz" / "index.html").read_text(encoding="utf-8")
    index = json.loads(re.search(r'<script type="application/json" id="quiz-bank">(.*?)</script>', html, re.S).group(1))
    by_id = {item["id"]: item for kind in ("questions", "drills", "objective") for item in index[kind]}
    for name, path in index.pop("parts").items():
        called = re.fullmatch(r"QuizUI\.arrive\((\"[^\"]+\"),(.*)\);\n", (site_dir / path).read_text(encoding="utf-8"), re.S)
        assert called and json.loads(called.group(1)) == name, path
        for kind, items in json.loads(called.group(2)).items():
            for item in items:
                assert by_id[item["id"]]["part"] == name and item["id"] in {i["id"] for i in index[kind]}
                by_id[item["id"]].update(item)
    for item in by_id.values():
        del item["part"]
    return index


def test_the_quiz_page_carries_only_an_index_and_each_part_holds_its_items(site):
    """The page holds what the pickers and the progress table read; answers, code and prompts are in parts."""
    from verify.site.quiz import INDEX_FIELDS  # noqa: PLC0415

    html = (site / "site" / "quiz" / "index.html").read_text(encoding="utf-8")
    index = json.loads(re.search(r'<script type="application/json" id="quiz-bank">(.*?)</script>', html, re.S).group(1))
    whole = json.loads((site / "site" / "quiz.json").read_text(encoding="utf-8"))
    for kind, fields in INDEX_FIELDS.items():
        assert [i["id"] for i in index[kind]] == [i["id"] for i in whole[kind]] and index[kind], kind
        assert all(set(i) <= {*fields, "part"} for i in index[kind]), kind
    assert "evidence" not in index and "key_points" not in html and "better_answer_html" not in html
    parts = index["parts"]
    assert set(parts) == {f"q-{q['id']}" for q in whole["questions"]} | {"drills", "objective"}
    assert all(re.fullmatch(r"quiz/bank/[a-z0-9-]+\.[0-9a-f]{12}\.js", path) for path in parts.values()), parts


def test_the_real_quiz_page_is_under_a_megabyte(tmp_path):
    """The checkout's questions with their answers rendered, as the site builds them (no drills or 判断题
    here: they need the claims' records): their index on the page is a small fraction of their parts."""
    from verify.quiz.bank import bank_json, build_bank  # noqa: PLC0415
    from verify.site.quiz import browser_parts  # noqa: PLC0415

    bank = json.loads(bank_json(build_bank(REPO / "docs", cache_dir=tmp_path)))
    index, parts = browser_parts(bank)
    page = len(json.dumps(index, ensure_ascii=False).encode())
    carried = sum(len(t.encode()) for t in parts.values())
    assert carried > 500_000 and page < carried / 20, (page, carried)
    assert page < 100_000, page  # with drills and 判断题 and the page's own markup, still well under 1 MB


# quiz.json as the browser quiz (docs/assets/quiz/*.js) reads it, for the sample site. Written from
# ``steady(bank)`` when the shape was last meant to change; a change to the shape changes the JS too.
GOLDEN = Path(__file__).with_name("quiz-sample-site.json")
_SPEEDUP = re.compile(r"快 \d+(?:\.\d+)? 倍")


def steady(bank: dict) -> dict:
    """``bank`` without what differs between runs and machines: where and when a claim ran, measured speed-ups."""
    bank = json.loads(json.dumps(bank))
    for d in bank["drills"]:
        d["prompt"] = d["prompt"].replace(d["device"], "…")
        d.update(date="…", device="…", torch="…", torch_build="…")
        if d["format"] == "faster":
            d.update(answer="…", factor="…", answer_text="…", faster="…", same="…")
    for ev in bank["evidence"].values():
        ev["where"] = "…"
    return json.loads(_SPEEDUP.sub("快 … 倍", json.dumps(bank, ensure_ascii=False)))


def test_quiz_json_keeps_the_shape_the_browser_reads(site):
    bank = json.loads((site / "site" / "quiz.json").read_text(encoding="utf-8"))
    assert steady(bank) == json.loads(GOLDEN.read_text(encoding="utf-8"))
