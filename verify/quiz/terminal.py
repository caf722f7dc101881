"""``verify quiz``: the mock interview and flashcards in a terminal, and the Anki export.

Only typer and rich are imported at module level: the quiz shows its first question well under
half a second after the command starts and never imports torch. jieba's dictionary loads in a
background thread while the user types the first answer.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from verify.quiz.loading import Answers, load_bank, load_outline

quiz_app = typer.Typer(help="模拟面试与闪卡（终端），以及导出 Anki 牌组。", no_args_is_help=True,
                       add_completion=False)
console = Console(highlight=False)

NOpt = Annotated[int, typer.Option("--n", "-n", help="how many questions")]
TagOpt = Annotated[list[str], typer.Option("--tag", help="only questions with this tag (repeatable)")]
DiffOpt = Annotated[str | None, typer.Option("--difficulty", help="a level or a range: 2, 1-3")]
DueOpt = Annotated[bool, typer.Option("--due", help="only cards that are due for review")]
DbOpt = Annotated[Path | None, typer.Option("--db", help="progress database (default: the user's data dir)")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="random seed, for a repeatable order")]
DocsOpt = Annotated[Path | None, typer.Option("--docs", help="docs folder holding questions/*.md")]


def _difficulty_range(spec: str | None) -> tuple[int, int]:
    if not spec:
        return 1, 5
    try:
        lo, _, hi = spec.partition("-")
        return int(lo), int(hi or lo)
    except ValueError:
        raise typer.BadParameter(f"expected 2 or 1-3, got {spec!r}", param_hint="--difficulty") from None


def _open_progress(db: Path | None):
    from verify.quiz.progress import Progress  # noqa: PLC0415

    opened = Progress.open(db)
    if opened.moved_aside:
        console.print(f"进度数据库已损坏，无法读取：已移到 {opened.moved_aside}，并新建了一个空的进度库。",
                      style="yellow", markup=False)
    return opened.store


def _pick(questions, store, n: int, tags: list[str], difficulty: str | None, due: bool,
          seed: int | None) -> list[dict[str, Any]]:
    lo, hi = _difficulty_range(difficulty)
    pool = [q for q in questions if lo <= q["difficulty"] <= hi and (not tags or set(tags) & set(q["tags"]))]
    by_id = {q["id"]: q for q in pool}
    rng = random.Random(seed)
    due_ids = store.due(list(by_id))
    if due:
        return [by_id[i] for i in due_ids][:n]
    # what the schedule brings back first, then what was never seen, then the rest
    new = [q for q in pool if store.card(q["id"]) is None]
    rest = [q for q in pool if q["id"] not in due_ids and q not in new]
    rng.shuffle(new)
    rng.shuffle(rest)
    return ([by_id[i] for i in due_ids] + new + rest)[:n]


def _read_answer(prompt: str) -> str:
    """Lines until an empty line; EOF ends the quiz."""
    console.print(prompt, style="dim", markup=False)
    lines: list[str] = []
    while True:
        line = input("> " if not lines else "  ")
        if not line.strip():
            return "\n".join(lines).strip()
        lines.append(line)


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def _rate(store, qid: str, coverage: float | None, seconds: float | None) -> int:
    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    choices = " / ".join(f"{k} {v}" for k, v in RATINGS.items())
    while True:
        raw = input(f"自评 [{choices}]: ").strip()
        if raw in ("1", "2", "3", "4"):
            card = store.review(qid, int(raw), coverage=coverage, seconds=seconds)
            local = card.due.astimezone()
            console.print(f"已记录：{RATINGS[int(raw)]}，下次复习 {local:%Y-%m-%d %H:%M}", markup=False)
            return int(raw)
        console.print("请输入 1、2、3 或 4。", style="yellow")


def _header(i: int, n: int, q: dict[str, Any]) -> Panel:
    meta = f"第 {i}/{n} 题 · 难度 {q['difficulty']} · " + " ".join(f"#{t}" for t in q["tags"])
    src = "；".join(f"{s['company']} {s['round']}" for s in q["sources"])
    body = q["question"] + f"\n\n来源：{src}"
    return Panel(body, title=meta, title_align="left", border_style="cyan")


def _ask(i: int, n: int, q: dict[str, Any], answers: Answers) -> None:
    console.print(_header(i, n, q))
    answers.start()  # the page bodies are read while the candidate thinks


def _show_answers(q: dict[str, Any], answers: Answers) -> None:
    from rich.markdown import Markdown  # noqa: PLC0415  (markdown-it: not on the start path)

    q = answers.of(q["id"])
    console.print(Panel(Markdown(q["ordinary_answer"]), title="普通回答", title_align="left", border_style="dim"))
    console.print(Panel(Markdown(q["better_answer"]), title="更好的回答", title_align="left", border_style="green"))
    console.print(f"页面与证据：{q['url']}（{q['file']}）", style="dim", markup=False)


def _show_score(q: dict[str, Any], result) -> None:
    table = Table("考察点", "覆盖", "命中 / 遗漏", title=f"考察点覆盖率 {result.coverage:.0%}", title_justify="left")
    mark = {"covered": "[green]✓ 覆盖[/]", "partial": "[yellow]◐ 部分[/]", "missed": "[red]✗ 遗漏[/]"}
    for p in result.points:
        hit = "、".join(f"{k}（{v}）" if v != k else k for k, v in p.hits.items() if v)
        miss = "、".join(p.missing)
        table.add_row(p.point, mark[p.status], (f"命中 {hit}" if hit else "") + ("  " if hit and miss else "")
                      + (f"遗漏 {miss}" if miss else ""))
    console.print(table)


def _summary(rows: list[dict[str, Any]], mock: bool) -> None:
    if not rows:
        return
    table = Table("题目", "覆盖率" if mock else "", "用时" if mock else "", "自评", title="本轮小结",
                  title_justify="left")
    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    for r in rows:
        table.add_row(r["q"]["title"], f"{r['coverage']:.0%}" if mock else "", _clock(r["seconds"]) if mock else "",
                      RATINGS[r["rating"]])
    console.print(table)
    if not mock:
        return
    weak = sorted(((p.fraction, p.point, r["q"]) for r in rows for p in r["score"].points if p.fraction < 1),
                  key=lambda t: t[0])
    if weak:
        console.print("最薄弱的考察点：", style="bold")
        for frac, point, q in weak[:5]:
            console.print(f"  {frac:.0%}  {point}  → {q['url']}", markup=False)
    else:
        console.print("所有考察点都覆盖到了。", style="green")


@contextlib.contextmanager
def _session(store: Any, rows: list[dict[str, Any]], mock: bool) -> Iterator[None]:
    """Around a quiz loop: Ctrl-D or Ctrl-C ends it quietly; the summary shows and the store closes."""
    try:
        yield
    except (EOFError, KeyboardInterrupt):
        console.print("\n已退出，已评分的题目都已保存。", style="yellow")
    finally:
        _summary(rows, mock=mock)
        store.close()


def _start(docs: Path | None, db: Path | None, n: int, tag: list[str], difficulty: str | None, due: bool,
           seed: int | None) -> tuple[Any, list[dict[str, Any]], Answers] | None:
    """Progress store, the picked questions and their answers to come; None (store closed, reason
    printed) when none fit."""
    questions = load_outline(docs)
    store = _open_progress(db)
    picked = _pick(questions, store, n, tag, difficulty, due, seed)
    if not picked:
        store.close()
        console.print("没有到期的卡片。" if due else "没有符合条件的题目。", style="yellow")
        return None
    return store, picked, Answers(docs)


@quiz_app.command()
def mock(n: NOpt = 5, tag: TagOpt = [], difficulty: DiffOpt = None, due: DueOpt = False,  # noqa: B006
         seconds: Annotated[int, typer.Option(help="time per question, in seconds")] = 180,
         db: DbOpt = None, seed: SeedOpt = None, docs: DocsOpt = None) -> None:
    """模拟面试：计时作答、追问、考察点覆盖率、参考答案、自评（FSRS 安排复习）。"""
    opened = _start(docs, db, n, tag, difficulty, due, seed)
    if opened is None:
        return
    store, picked, answers = opened
    rng = random.Random(seed)
    from verify.quiz import scoring  # noqa: PLC0415  (jieba is imported lazily inside)

    warm = threading.Thread(target=scoring.warm_up, daemon=True)
    rows: list[dict[str, Any]] = []
    with _session(store, rows, mock=True):
        for i, q in enumerate(picked, 1):
            _ask(i, len(picked), q, answers)
            console.print(f"限时 {_clock(seconds)}。用自己的话回答，空行结束。", style="bold")
            if not warm.is_alive() and i == 1:
                warm.start()
            start = time.monotonic()
            answer = _read_answer("开始作答：")
            took = time.monotonic() - start
            over = took > seconds
            console.print(f"用时 {_clock(took)}" + ("（超时）" if over else ""), style="red" if over else "dim",
                          markup=False)
            fu = rng.choice(q["follow_ups"])
            console.print(Panel(fu["q"], title="追问", title_align="left", border_style="magenta"))
            follow = _read_answer("回答追问：")
            warm.join()
            result = scoring.score(answer + "\n" + follow, q["key_points"])
            _show_score(q, result)
            _show_answers(q, answers)
            console.print(Panel(fu["a"], title="追问参考", title_align="left", border_style="magenta"))
            rating = _rate(store, q["id"], result.coverage, took)
            rows.append({"q": q, "coverage": result.coverage, "seconds": took, "rating": rating, "score": result})


@quiz_app.command()
def cards(n: NOpt = 10, tag: TagOpt = [], difficulty: DiffOpt = None, due: DueOpt = False,  # noqa: B006
          db: DbOpt = None, seed: SeedOpt = None, docs: DocsOpt = None) -> None:
    """闪卡：看题、回想、翻面对照普通回答与更好的回答、自评。"""
    opened = _start(docs, db, n, tag, difficulty, due, seed)
    if opened is None:
        return
    store, picked, answers = opened
    rows: list[dict[str, Any]] = []
    with _session(store, rows, mock=False):
        for i, q in enumerate(picked, 1):
            _ask(i, len(picked), q, answers)
            input("想好后按回车翻面 ")
            _show_answers(q, answers)
            console.print("考察点：\n" + "\n".join(f"  • {kp['point']}" for kp in q["key_points"]), markup=False)
            rows.append({"q": q, "rating": _rate(store, q["id"], None, None)})


@quiz_app.command()
def stats(db: DbOpt = None, docs: DocsOpt = None) -> None:
    """复习进度：每张卡片的下次复习时间与平均覆盖率。"""
    questions = load_bank(docs)["questions"]
    store = _open_progress(db)
    weak = {q: (c, n) for q, c, n in store.weakest(limit=1000)}
    table = Table("题目", "状态", "下次复习", "平均覆盖率", "次数", title=f"进度：{store.path}")
    for q in questions:
        card = store.card(q["id"])
        c, n = weak.get(q["id"], (None, 0))
        table.add_row(q["title"], card.state.name if card else "New",
                      f"{card.due.astimezone():%Y-%m-%d %H:%M}" if card else "-",
                      f"{c:.0%}" if c is not None else "-", str(n))
    console.print(table)
    store.close()


@quiz_app.command()
def anki(out: Annotated[Path, typer.Option("--out", "-o", help="the .apkg to write")] = Path("interview-quiz.apkg"),
         site_url: Annotated[str | None, typer.Option(help="the published site, to make links absolute")] = None,
         docs: DocsOpt = None) -> None:
    """导出 Anki 牌组（.apkg）：按题目 id 生成稳定的 GUID，重新导出会更新而不是重复。"""
    from verify.quiz.anki import export  # noqa: PLC0415

    bank = load_bank(docs, html=True)  # HTML for the card backs
    path = export(bank, out, site_url=site_url)
    console.print(f"已写出 {path}：{len(bank['questions'])} 张笔记。", markup=False)
