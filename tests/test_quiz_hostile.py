"""The terminal quiz against hostile progress files and situations: a FIFO or /dev/zero to import, a full
disk under an export, two processes rating one card, reviews without their card, escape codes in ids.

The hostile file contents both readers refuse with the same words are in tests/_progress_files.py
(test_quiz_progress.py and test_quiz_browser.py read them); here are the situations around them.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import fsrs
import pytest
from typer.testing import CliRunner

from tests._progress_files import BROWSER_EXPORT
from verify.quiz import progress
from verify.quiz.progress import Progress
from verify.quiz.progress_file import MAX_REVIEWS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    from tests._quiz_samples import write_sample_docs  # noqa: PLC0415

    write_sample_docs(tmp_path / "docs")
    return tmp_path


def quiz(*args: str):
    from verify.cli.quiz import quiz_app  # noqa: PLC0415

    return CliRunner().invoke(quiz_app, list(args))


def _import(root: Path, source: Path, db: Path):
    return quiz("import", str(source), "--db", str(db), "--root", str(root))


# --- reading: only a regular file, capped while read -------------------------------------------------

@pytest.mark.timeout(30)
def test_importing_dev_zero_is_refused_without_reading_it(docs, tmp_path):
    """``st_size`` is 0 for a device: the 16 MiB check let /dev/zero be read until memory ran out."""
    started = time.perf_counter()
    result = _import(docs, Path("/dev/zero"), tmp_path / "p.sqlite3")
    assert result.exit_code == 2, result.output
    assert "只能导入普通文件" in result.output and "现有进度未改动" in result.output
    assert time.perf_counter() - started < 5


@pytest.mark.timeout(30)
def test_importing_a_fifo_is_refused_without_waiting_for_a_writer(docs, tmp_path):
    fifo = tmp_path / "progress.json"
    os.mkfifo(fifo)
    result = _import(docs, fifo, tmp_path / "p.sqlite3")
    assert result.exit_code == 2 and "是管道" in result.output, result.output


def test_importing_a_folder_or_nothing_is_a_message(docs, tmp_path):
    assert "是文件夹" in _import(docs, tmp_path, tmp_path / "p.sqlite3").output
    missing = _import(docs, tmp_path / "nowhere.json", tmp_path / "p.sqlite3")
    assert missing.exit_code == 2 and "不存在" in missing.output


# --- reviews without their card: refused and counted, not imported then dropped -----------------------

def test_reviews_without_their_card_are_refused_and_counted(docs, tmp_path):
    """199,999 reviews of a card the file does not have were imported, and the next export had none."""
    orphans = copy.deepcopy(BROWSER_EXPORT)
    orphans["log"] += [{"id": "compile-demo", "rating": 3, "at": f"2026-01-01T00:{m // 60:02d}:{m % 60:02d}.000Z"}
                       for m in range(1000)]
    (tmp_path / "in.json").write_text(json.dumps(orphans), encoding="utf-8")
    result = _import(docs, tmp_path / "in.json", tmp_path / "p.sqlite3")
    assert result.exit_code == 2
    assert "log 里有 1000 条自评没有对应的卡片（如 「compile-demo」）" in result.output.replace("\n", "")


def test_two_hundred_thousand_reviews_are_refused_quickly_by_the_count_cap(docs, tmp_path):
    many = {"version": 1, "cards": {}, "log": [{"id": "compile-demo", "rating": 3, "at": "2026-01-01T00:00:00.000Z"}]
            * 199_999}
    (tmp_path / "in.json").write_text(json.dumps(many), encoding="utf-8")
    started = time.perf_counter()
    result = _import(docs, tmp_path / "in.json", tmp_path / "p.sqlite3")
    took = time.perf_counter() - started
    assert result.exit_code == 2 and f"log 太多（最多 {MAX_REVIEWS} 项）" in result.output
    assert took < 5, took
    assert not Progress.open(tmp_path / "p.sqlite3").store.reviews()


def test_what_a_file_brings_in_goes_out_again(docs, tmp_path):
    """Import then export keeps every review of a known id (each has its card)."""
    (tmp_path / "in.json").write_text(json.dumps(BROWSER_EXPORT), encoding="utf-8")
    db = tmp_path / "p.sqlite3"
    assert _import(docs, tmp_path / "in.json", db).exit_code == 0
    assert quiz("export", str(tmp_path / "out.json"), "--db", str(db)).exit_code == 0
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert out["log"] == [BROWSER_EXPORT["log"][0]] and set(out["cards"]) == {"expand-demo"}


# --- terminal safety: ids from a file are shown, not obeyed -------------------------------------------

def test_escape_codes_and_markup_in_unknown_ids_are_shown_escaped(docs, tmp_path):
    fake = "\x1b[2J\x1b[H已导入 5 张卡片\x1b]8;;https://evil.example\x07"
    hostile = copy.deepcopy(BROWSER_EXPORT)
    card = hostile["cards"]["expand-demo"]
    hostile["cards"] = {fake: card, "[link=https://evil.example]expand-demo[/link]": card}
    hostile["log"] = [{"id": fake, "rating": 3, "at": "2026-01-01T00:00:00.000Z"}]
    (tmp_path / "in.json").write_text(json.dumps(hostile), encoding="utf-8")
    result = _import(docs, tmp_path / "in.json", tmp_path / "p.sqlite3")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b[2J\\x1b[H已导入 5 张卡片" in result.output
    assert "[link=https://evil.example]expand-demo[/link]" in result.output  # the id as it is, not a link


def test_an_id_in_a_refusal_is_shown_escaped(docs, tmp_path):
    hostile = copy.deepcopy(BROWSER_EXPORT)
    hostile["cards"]["\x1b[31mred"] = dict(hostile["cards"]["expand-demo"], stability=0)
    (tmp_path / "in.json").write_text(json.dumps(hostile), encoding="utf-8")
    result = _import(docs, tmp_path / "in.json", tmp_path / "p.sqlite3")
    assert result.exit_code == 2 and "\x1b" not in result.output
    assert "cards.\\x1b[31mred.stability 应 ≥ 0.001" in result.output


# --- writing: atomic, 0644, and a full disk leaves the earlier export whole --------------------------------

def _store_with(db: Path, reviews: int) -> None:
    store = Progress.open(db).store
    for k in range(reviews):
        store.review(f"q{k % 50}", 3)
    store.close()


def test_an_export_is_written_whole_with_mode_0644(tmp_path):
    db, out = tmp_path / "p.sqlite3", tmp_path / "out.json"
    _store_with(db, 3)
    old = os.umask(0o022)
    try:
        assert quiz("export", str(out), "--db", str(db)).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out.json")] == ["out.json"]  # no temporary left
    progress.read(out.read_bytes())


def test_an_export_onto_a_full_disk_leaves_the_earlier_export_whole(tmp_path):
    """A real write limit (RLIMIT_FSIZE, as a full disk): the earlier export is not truncated."""
    db, out = tmp_path / "p.sqlite3", tmp_path / "out.json"
    _store_with(db, 3)
    assert quiz("export", str(out), "--db", str(db)).exit_code == 0
    earlier = out.read_bytes()
    _store_with(db, 400)  # the next export is far larger than the limit below
    script = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(earlier) + 512}, {len(earlier) + 512}))
        from verify.cli.quiz import quiz_app
        quiz_app(["export", {str(out)!r}, "--db", {str(db)!r}])
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "导出失败" in run.stdout and "原有文件未改动" in run.stdout
    assert out.read_bytes() == earlier
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out.json")] == ["out.json"]


# --- two processes rating one card: the card stays in step with its log -----------------------------------

_RATER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from verify.quiz.progress import Progress
    db, go, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    store = Progress.open(db).store
    while not go.exists():
        time.sleep(0.001)
    for k in range(n):
        store.review("shared", 1 + k % 4)
    store.close()
""")


def _replayed(reviews: list[dict]) -> fsrs.Card:
    """The card the reviews make, rated in the order they were recorded."""
    from datetime import datetime  # noqa: PLC0415

    scheduler = fsrs.Scheduler(enable_fuzzing=False)
    first = datetime.fromisoformat(reviews[0]["at"])
    card = fsrs.Card(card_id=progress.card_id("shared"), due=first)
    for r in reviews:
        card, _ = scheduler.review_card(card, fsrs.Rating(r["rating"]), review_datetime=datetime.fromisoformat(r["at"]))
    return card


@pytest.mark.parametrize("attempt", range(3))
def test_two_processes_rating_one_card_lose_nothing(tmp_path, attempt):
    db, go, n = tmp_path / "p.sqlite3", tmp_path / "go", 40
    Progress.open(db).store.close()
    procs = [subprocess.Popen([sys.executable, "-c", _RATER, str(db), str(go), str(n)], cwd=ROOT) for _ in range(2)]
    time.sleep(1.0)  # both imported and waiting
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = Progress.open(db).store
    rows = store.conn.execute("SELECT rating, reviewed_at FROM reviews WHERE question_id = 'shared' ORDER BY id").fetchall()
    reviews = [{"rating": r, "at": at} for r, at in rows]
    assert len(reviews) == 2 * n
    card, replayed = store.card("shared"), _replayed(reviews)
    store.close()
    assert (card.stability, card.difficulty, card.due, card.last_review) == (
        replayed.stability, replayed.difficulty, replayed.due, replayed.last_review)


def test_the_anki_deck_is_written_whole_with_mode_0644(docs, tmp_path):
    out = tmp_path / "deck" / "quiz.apkg"
    old = os.umask(0o022)
    try:
        for _ in range(2):  # the second over the first
            result = quiz("anki", "--out", str(out), "--root", str(docs))
            assert result.exit_code == 0, result.output
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [p.name for p in out.parent.iterdir()] == ["quiz.apkg"]  # no temporary left
