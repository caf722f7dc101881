"""手撕 in the terminal: a problem's statement, its starter opened in ``$EDITOR``, the judge's verdict, the rating.

Each problem of ``snippets/judge/`` is a card like a question's (id ``handwrite:<problem>``), scheduled by the
same FSRS store; its difficulty and tags are those of the first question page it names. The candidate's
file lives in the progress store's folder, under ``handwrite/``, and is kept between rounds: a second
attempt opens what was written last time. After a pass (or when the candidate gives up) the reference
solution is shown, and the judge's report, whose GPU section for a kernel problem puts the reference
solution's numbers beside the candidate's.

The default rating follows the result: passed at the first judging 3 (Good), after a failed judging
2 (Hard), given up 1 (Again). The candidate can change it, as everywhere else in the quiz.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from verify.quiz import tui
from verify.quiz.tui import Panel, console

if TYPE_CHECKING:
    from verify.judge.problem import Problem
    from verify.quiz.progress import Progress
    from verify.quiz.schema import Question

PREFIX = "handwrite:"
#: the rating a result suggests: passed at once, passed after a failed judging, given up
RATING = {"first": 3, "later": 2, "gave_up": 1}


@dataclass(frozen=True)
class Handwrite:
    """One problem as a card: what ``practice.pick`` schedules (id, difficulty, tags) and how to show it."""

    id: str
    problem: str
    title: str
    question: str
    difficulty: int
    tags: tuple[str, ...]
    folder: str


def items(problems: list[Problem], questions: list[Question]) -> list[Handwrite]:
    """A card for each problem whose question page the outline knows (its difficulty and tags come from it)."""
    by_id = {q.id: q for q in questions}
    out = []
    for p in problems:
        q = next((by_id[qid] for qid in p.questions if qid in by_id), None)
        if q is not None:
            out.append(Handwrite(PREFIX + p.id, p.id, p.title, q.id, q.difficulty, q.tags, p.folder))
    return out


def workfile(folder: Path, problem: Problem) -> Path:
    """The candidate's file for ``problem`` under ``folder``: the starter the first time, then what was written."""
    path = folder / "handwrite" / f"{problem.id}{problem.starter.suffix}"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(problem.starter, path)
    return path


def edit(path: Path) -> None:
    """Open ``path`` in ``$VISUAL`` or ``$EDITOR``; without one, wait while the candidate edits it elsewhere."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        console.print(f"没有设置 $EDITOR：用你的编辑器打开 {path}，写完保存后回到这里按回车。", markup=False)
        input()
        return
    try:
        subprocess.run([*shlex.split(editor), str(path)], check=False)
    except OSError as exc:
        console.print(f"打不开编辑器 {editor!r}（{exc}）：请手动编辑 {path}，写完按回车。", style="yellow", markup=False)
        input()


def _ask() -> str:
    while (raw := input("再改一次还是看参考解？[1 再改 / 2 看参考解，算没做出来]: ").strip()) not in ("1", "2"):
        console.print("请输入 1 或 2。", style="yellow")
    return raw


def attempt(store_folder: Path, problem: Problem) -> tuple[str, str]:
    """Edit and judge until a pass or the candidate gives up: the result (a key of :data:`RATING`) and the
    text of the last report."""
    from verify.judge import judge, report  # noqa: PLC0415

    path = workfile(store_folder, problem)
    failed = False
    while True:
        edit(path)
        console.print("评测中……（PyTorch 题要先导入 torch，几秒钟）", style="dim", markup=False)
        result = judge.judge(problem, path, gpu=True)
        text = report.text(result, str(path))
        console.print(text, style="green" if result.verdict == "pass" else "red", markup=False, highlight=False,
                      soft_wrap=True)
        if result.verdict == "pass":
            return ("later" if failed else "first"), text
        failed = True
        if _ask() == "2":
            return "gave_up", text


def reference(problem: Problem) -> tuple[Path, str]:
    """The problem's first correct solution, to show after the round."""
    first = problem.solutions()[0]
    return first, first.read_text(encoding="utf-8")


def run(store: Progress, store_folder: Path, picked: list[Handwrite]) -> None:
    """A round of 手撕: each problem's statement, the editor, the judge, the reference and the rating."""
    from verify.judge import problem as problems  # noqa: PLC0415
    from verify.quiz.practice import Row, _rate, _round  # noqa: PLC0415

    rows: list[Row] = []
    with _round(store, rows, mock=False):
        for i, item in enumerate(picked, 1):
            p = problems.load(Path(item.folder))
            statement = (p.path / "statement.md").read_text(encoding="utf-8")
            console.print(Panel(statement, title=f"第 {i}/{len(picked)} 道 · 手撕 · {p.title}", title_align="left",
                                border_style="cyan"))
            outcome, _text = attempt(store_folder, p)
            path, code = reference(p)
            console.print(Panel(code, title=f"参考解（{p.id}/solutions/{path.name}）", title_align="left",
                                border_style="green"), markup=False)
            tui.link(None, f"judge.md#{p.id}", f"docs/questions/{item.question}.md", label="题目与原理")
            right = outcome != "gave_up"
            rows.append(Row(f"{p.title} · 手撕", f"judge.md#{p.id}", _rate(store, item.id, None, None,
                                                                          default=RATING[outcome]), right=right))
