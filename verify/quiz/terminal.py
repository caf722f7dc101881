"""``verify quiz``: the mock interview, flashcards and drills in a terminal, progress files, the Anki export.

Only typer and rich are imported at module level: the quiz shows its first question well under
half a second after the command starts and never imports torch. jieba's dictionary loads in a
background thread while the user types the first answer.
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from verify.quiz import tui
from verify.quiz.liveinput import clock, read_answer
from verify.quiz.loading import Answers, load_outline

console = tui.console
quiz_app = typer.Typer(help="模拟面试、闪卡和预测输出练习（终端），进度文件的导入导出，以及 Anki 牌组。",
                       no_args_is_help=True, add_completion=False)

NOpt = Annotated[int, typer.Option("--n", "-n", help="练几道")]
TagOpt = Annotated[list[str], typer.Option("--tag", help="只练带这个标签的题（可重复）")]
DiffOpt = Annotated[str | None, typer.Option("--difficulty", help="难度：一个数或一段，如 2、1-3")]
DueOpt = Annotated[bool, typer.Option("--due", help="只练到期该复习的")]
DbOpt = Annotated[Path | None, typer.Option("--db", help="进度数据库（默认在用户数据目录下）")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="随机种子，让顺序可重复")]
DocsOpt = Annotated[Path | None, typer.Option("--docs", help="放 questions/*.md 的 docs 目录")]
UrlOpt = Annotated[str | None, typer.Option("--site-url", help="站点地址，让链接成为完整网址（默认读 mkdocs.yml 的 site_url）")]


def _chinese_help() -> None:
    """Chinese titles and help for ``--help`` (imported only when help is asked for: not on the start path)."""
    import typer.rich_utils as ru  # noqa: PLC0415

    ru.OPTIONS_PANEL_TITLE, ru.COMMANDS_PANEL_TITLE, ru.ARGUMENTS_PANEL_TITLE = "选项", "命令", "参数"
    core = getattr(typer, "core", None)
    command = getattr(core, "TyperCommand", None)
    for cls in {c for c in (command, getattr(core, "TyperGroup", None)) if c is not None}:
        original = cls.get_help_option

        def get_help_option(self, ctx, _original=original):  # type: ignore[no-untyped-def]
            option = _original(self, ctx)
            if option is not None:
                option.help = "显示这段帮助并退出。"
            return option

        cls.get_help_option = get_help_option


if "--help" in sys.argv or "-h" in sys.argv:
    _chinese_help()


def _difficulty_range(spec: str | None) -> tuple[int, int]:
    if not spec:
        return 1, 5
    try:
        lo, _, hi = spec.partition("-")
        return int(lo), int(hi or lo)
    except ValueError:
        raise typer.BadParameter(f"应为 2 或 1-3 这样的写法，而不是 {spec!r}", param_hint="--difficulty") from None


def _open_progress(db: Path | None):
    from verify.quiz.progress import Progress  # noqa: PLC0415

    opened = Progress.open(db)
    if opened.moved_aside:
        console.print(f"进度数据库已损坏，无法读取：已移到 {opened.moved_aside}，并新建了一个空的进度库。",
                      style="yellow", markup=False)
    if opened.skipped:
        console.print(f"进度库里有 {len(opened.skipped)} 行无法读取，已跳过（其余进度都保留）：" +
                      "；".join(opened.skipped[:5]), style="yellow", markup=False)
    return opened.store


def _pick(items, store, n: int, tags: list[str], difficulty: str | None, due: bool,
          seed: int | None) -> list[dict[str, Any]]:
    lo, hi = _difficulty_range(difficulty)
    pool = [q for q in items if lo <= q["difficulty"] <= hi and (not tags or set(tags) & set(q["tags"]))]
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


def _rate(store, qid: str, coverage: float | None, seconds: float | None, default: int | None = None) -> int:
    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    choices = " / ".join(f"{k} {v}" for k, v in RATINGS.items())
    suggestion = f"（回车 = {RATINGS[default]}）" if default else ""
    while True:
        raw = input(f"自评 [{choices}]{suggestion}: ").strip() or (str(default) if default else "")
        if raw in ("1", "2", "3", "4"):
            card = store.review(qid, int(raw), coverage=coverage, seconds=seconds)
            local = card.due.astimezone()
            console.print(f"已记录：{RATINGS[int(raw)]}，下次复习 {local:%Y-%m-%d %H:%M}", markup=False)
            return int(raw)
        console.print("请输入 1、2、3 或 4。", style="yellow")


def _summary(rows: list[dict[str, Any]], mock: bool) -> None:
    if not rows:
        return
    from rich.table import Table  # noqa: PLC0415

    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    table = Table("题目", "覆盖率" if mock else "", "用时" if mock else "", "自评", title="本轮小结", title_justify="left")
    for r in rows:
        table.add_row(r["q"]["title"], f"{r['coverage']:.0%}" if mock else "", clock(r["seconds"]) if mock else "",
                      RATINGS[r["rating"]])
    console.print(table)
    if not mock:
        return
    weak = sorted(((p.fraction, p.point, r["q"]) for r in rows for p in r["score"].points if p.fraction < 1),
                  key=lambda t: t[0])
    if weak:
        console.print("最薄弱的考察点：", style="bold")
        for frac, point, q in weak[:5]:
            console.print(f"  {frac:.0%}  {point}  → {q.get('page_url') or q['url']}", markup=False)
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
         seconds: Annotated[int, typer.Option(help="每题限时（秒）")] = 180,
         db: DbOpt = None, seed: SeedOpt = None, docs: DocsOpt = None) -> None:
    """模拟面试：倒计时作答、追问、考察点覆盖率（只是提示）、参考答案、自评（FSRS 安排复习）。"""
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
            console.print(tui.header(i, len(picked), q))
            answers.start()  # the page bodies are read while the candidate thinks
            console.print(f"限时 {clock(seconds)}。用自己的话回答，空行结束。", style="bold")
            if not warm.is_alive() and i == 1:
                warm.start()
            start = time.monotonic()
            answer = read_answer(console, "开始作答：", seconds, start)
            took = time.monotonic() - start
            over = took > seconds
            console.print(f"用时 {clock(took)}" + ("（超时）" if over else ""), style="red" if over else "dim",
                          markup=False)
            fu = rng.choice(q["follow_ups"])
            console.print(tui.Panel(fu["q"], title="追问", title_align="left", border_style="magenta"))
            follow = read_answer(console, "回答追问：")
            warm.join()
            full = answers.of(q["id"])
            result = scoring.score(answer + "\n" + follow, full["key_points"])
            tui.score_table(result)
            tui.show_answers(full)
            console.print(tui.Panel(fu["a"], title="追问参考", title_align="left", border_style="magenta"))
            rating = _rate(store, q["id"], result.coverage, took)
            rows.append({"q": full, "coverage": result.coverage, "seconds": took, "rating": rating, "score": result})


@quiz_app.command()
def cards(n: NOpt = 10, tag: TagOpt = [], difficulty: DiffOpt = None, due: DueOpt = False,  # noqa: B006
          db: DbOpt = None, seed: SeedOpt = None, docs: DocsOpt = None) -> None:
    """闪卡：看题、回想、翻面对照普通回答与更好的回答（按节折叠）、自评。"""
    opened = _start(docs, db, n, tag, difficulty, due, seed)
    if opened is None:
        return
    store, picked, answers = opened
    rows: list[dict[str, Any]] = []
    with _session(store, rows, mock=False):
        for i, q in enumerate(picked, 1):
            console.print(tui.header(i, len(picked), q))
            answers.start()
            input("想好后按回车翻面 ")
            full = answers.of(q["id"])
            tui.show_answers(full)
            console.print("考察点：\n" + "\n".join(f"  • {kp['point']}" for kp in full["key_points"]), markup=False)
            rows.append({"q": full, "rating": _rate(store, q["id"], None, None)})


from verify.quiz import commands  # noqa: E402,F401  (drill, stats, import, export, anki: registered on quiz_app)
