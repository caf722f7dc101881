"""The terminal quiz reads the bank a site build left, while it is current, without scanning snippets,
probing the machine or importing torch; a stale bank is not used (verify/quiz/built.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests._project import cold_cache
from tests._quiz_samples import write_interview_page, write_sample_docs
from verify.cli import quiz as cli_quiz
from verify.quiz import built
from verify.quiz.schema import Bank
from verify.settings import Settings

GOLDEN = Path(__file__).with_name("quiz-sample-site.json")  # a bank of the sample pages, drills and 判断题 included
SITE_URL = "https://example.org/quiz-site/"
MARK = "（构建时留下的题库）"
BUILDING = "正在生成题库"

# Runs `verify quiz ...` and says afterwards whether snippets were scanned, the machine probed, torch imported.
DRIVER = """
import sys
from verify.running import probe
from verify.storage import scan

calls = []
real_scan, real_ask = scan.load_registry, probe._ask
def scanning(*a, **k):
    calls.append("scan")
    return real_scan(*a, **k)
def asking(*a, **k):
    calls.append("probe")
    return real_ask(*a, **k)
scan.load_registry, probe._ask = scanning, asking
from verify.cli import main
sys.argv = ["verify", "quiz", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("\\nCALLS[" + ",".join(calls) + "] TORCH[" + str("torch" in sys.modules) + "]")
"""


def environ(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIFY_")}
    return env | {"VERIFY_CACHE_DIR": str(root / "cache"), "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "110",
                  "XDG_DATA_HOME": str(root / "data")}


def quiz(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, list[str], bool]:
    """(what the quiz printed, the calls it made: scan / probe, whether torch was imported); stdin is empty,
    so the quiz shows its first item and ends."""
    out = subprocess.run([sys.executable, "-c", DRIVER, *args, "--db", str(root / "progress.sqlite3")], cwd=root,
                         env=env or environ(root), input="", capture_output=True, text=True, timeout=300)
    text = out.stdout
    tail = text.rsplit("CALLS[", 1)
    assert len(tail) == 2, text + out.stderr
    calls, torch = tail[1].split("] TORCH[")
    return tail[0], [c for c in calls.split(",") if c], torch.startswith("True")


def settings_of(root: Path, **env: str) -> Settings:
    return Settings.for_root(root, environ=environ(root) | env)


def golden_bank() -> Bank:
    bank = Bank.from_json(json.loads(GOLDEN.read_text(encoding="utf-8")))
    # a mark only the left bank has: the quiz that shows it read that bank, not the pages
    return replace(bank, questions=tuple(replace(q, question=q.question + MARK) for q in bank.questions))


@pytest.fixture
def project(tmp_path) -> Path:
    """The sample pages in a checkout of their own, its cache holding this machine's probe, and the bank
    a site build of it would leave, current."""
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "mkdocs.yml").write_text(f"site_name: sample\nsite_url: {SITE_URL}\n", encoding="utf-8")
    write_sample_docs(root / "docs")
    write_interview_page(root / "docs")
    cold_cache(root / "cache")
    leave(settings_of(root))
    return root


def leave(settings: Settings, bank: Bank | None = None, **made: object) -> None:
    fields = {"sources": built.sources_digest(settings), "machine": cli_quiz.machine(settings), "live": False,
              "site_url": SITE_URL} | made
    built.write(settings, bank or golden_bank(), built.Made(**fields))  # type: ignore[arg-type]


def read(settings: Settings) -> Bank | None:
    return built.read(settings, site_url=SITE_URL, machine=lambda: cli_quiz.machine(settings))


# --- in the terminal ------------------------------------------------------------------------------------

FIRST = {"mock": "第 1/1 题", "cards": "第 1/1 题", "drill": "第 1/1 道 · 预测输出", "objective": "第 1/1 道 · 判断题"}


@pytest.mark.parametrize("mode", list(FIRST))
def test_every_mode_reads_a_current_bank_without_scanning_probing_or_torch(project, mode):
    shown, calls, torch = quiz(project, mode, "-n", "1", "--seed", "1")
    assert FIRST[mode] in shown, shown
    assert BUILDING not in shown and calls == [] and not torch, (shown, calls)
    if mode in ("mock", "cards"):
        assert MARK in shown  # the question as the left bank has it


def test_a_stale_bank_is_not_used_and_the_quiz_says_it_is_building(project):
    page = next((project / "docs" / "questions").glob("*.md"))
    page.write_text(page.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    shown, calls, torch = quiz(project, "drill", "-n", "1")
    assert BUILDING in shown and "scan" in calls, (shown, calls)
    assert "第 1/1 道" not in shown and "没有可练的预测输出题" in shown  # these pages alone have no drills
    shown, calls, _torch = quiz(project, "mock", "-n", "1", "--question", "expand-demo")
    assert "第 1/1 题" in shown and MARK not in shown  # the first question from the page, the bank made meanwhile


# --- what counts as current ------------------------------------------------------------------------------

def test_a_bank_left_current_is_read_back_as_it_was_left_without_the_pages_html(project):
    settings = settings_of(project)
    bank = read(settings)
    assert bank is not None and bank.to_json() == built.text_only(golden_bank()).to_json()
    html = golden_bank()
    html = replace(html, questions=tuple(replace(q, better_answer_html="<p>x</p>") for q in html.questions))
    leave(settings, html)
    again = read(settings)
    assert again is not None and all(q.better_answer_html is None for q in again.questions)


CHANGES = {
    "a question page": lambda root: (root / "docs" / "questions" / "expand-demo.md").touch(),
    "a page outside questions/": lambda root: (root / "docs" / "index.md").write_text("# 首页\n", encoding="utf-8"),
    "a snippet": lambda root: (root / "snippets" / "demo").mkdir(parents=True) or
    (root / "snippets" / "demo" / "a.py").write_text("x = 1\n", encoding="utf-8"),
    "a committed record": lambda root: (root / "evidence").mkdir() or
    (root / "evidence" / "cpu-x.json").write_text("{}", encoding="utf-8"),
    "a cached record": lambda root: (root / "cache" / "evidence" / "env").mkdir(parents=True) or
    (root / "cache" / "evidence" / "env" / "a.b.json").write_text("{}", encoding="utf-8"),
    "mkdocs.yml": lambda root: (root / "mkdocs.yml").write_text(
        f"site_name: sample\nsite_url: {SITE_URL}\n# x\n", encoding="utf-8"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_to_any_source_makes_the_bank_stale(project, change):
    settings = settings_of(project)
    assert read(settings) is not None
    CHANGES[change](project)
    assert read(settings) is None


def test_a_page_removed_makes_it_stale_too(project):
    settings = settings_of(project)
    (project / "docs" / "questions" / "compile-demo.md").unlink()
    assert read(settings) is None


def test_another_machine_links_live_build_or_version_is_not_current(project):
    settings = settings_of(project)
    assert read(settings) is not None
    # the device setting is part of the probe's fingerprint: another key for the cached evidence
    assert read(settings_of(project, VERIFY_DEVICE="cpu")) is None
    assert built.read(settings, site_url="https://elsewhere.example/", machine=lambda: cli_quiz.machine(settings)) is None
    assert built.read(settings, site_url=SITE_URL, machine=lambda: "another machine") is None
    for made in ({"live": True}, {"version": -1}, {"site_url": None}):
        leave(settings, **made)
        assert read(settings) is None, made
    leave(settings)
    assert read(settings) is not None


@pytest.mark.parametrize("text", ["", "{", "[]", '{"made": {}, "bank": {}}', '{"made": 1}'])
def test_an_unreadable_bank_file_is_not_used(project, text):
    settings = settings_of(project)
    built.path_of(settings).write_text(text, encoding="utf-8")
    assert read(settings) is None


def test_the_terminal_leaves_the_bank_it_made_for_its_next_start(project, monkeypatch):
    from verify.quiz.claims import ClaimFacts  # noqa: PLC0415

    settings = settings_of(project)
    built.path_of(settings).unlink()
    monkeypatch.setattr(cli_quiz, "claim_facts", lambda s: (ClaimFacts(), cli_quiz.machine(s)))
    made = cli_quiz.make_bank(settings)
    assert read(settings) == made and [q.id for q in made.questions] == [q.id for q in golden_bank().questions]
    # facts that could not be read (no torch, no snippets): nothing is left, the next start builds again
    built.path_of(settings).unlink()
    monkeypatch.setattr(cli_quiz, "claim_facts", lambda s: (ClaimFacts(), None))
    cli_quiz.make_bank(settings)
    assert not built.path_of(settings).exists()
