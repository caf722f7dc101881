"""A round of practice in the terminal: what is picked, the mock interview, flashcards, drills, the rating.

The commands (`verify/cli/quiz.py`) read the bank and open the progress store; a round here asks,
shows the answers, takes the candidate's marks and records each self-rating as it is given. The
first question shows from the front matter alone; the answers, which need the page bodies, are
read in a thread (:class:`Answers`) while the candidate thinks.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from verify.quiz import tui
from verify.quiz.tui import Panel, clock, console, read_answer

if TYPE_CHECKING:
    from verify.quiz.progress import Progress
    from verify.quiz.schema import Bank, Drill, Objective, Question


class Schedulable(Protocol):
    """What the schedule picks by: a card's id, its difficulty and its tags (a question, a drill, an objective item,
    a 手撕 problem)."""

    @property
    def id(self) -> str: ...
    @property
    def difficulty(self) -> int: ...
    @property
    def tags(self) -> tuple[str, ...]: ...


Item = TypeVar("Item", bound=Schedulable)


def open_progress(db: Any) -> Progress:
    """The progress store at ``db`` (default: the user's), saying what was moved aside or skipped."""
    from verify.quiz.progress import Progress  # noqa: PLC0415  (fsrs: not before the first question)

    opened = Progress.open(db)
    if opened.moved_aside:
        console.print(f"进度数据库已损坏，无法读取：已移到 {opened.moved_aside}，并新建了一个空的进度库。",
                      style="yellow", markup=False)
    if opened.skipped:  # rows of a hand-edited database: their text shown with control characters escaped
        from verify.shown import safe  # noqa: PLC0415

        console.print(f"进度库里有 {len(opened.skipped)} 行无法读取，已跳过（其余进度都保留）：" +
                      "；".join(safe(row) for row in opened.skipped[:5]), style="yellow", markup=False)
    return opened.store


def pick(items: Sequence[Item], store: Progress, n: int, tags: list[str], difficulty: tuple[int, int], due: bool,
         seed: int | None) -> list[Item]:
    """What the schedule brings back first, then what was never seen, then the rest (only due ones with ``due``)."""
    lo, hi = difficulty
    pool = [q for q in items if lo <= q.difficulty <= hi and (not tags or set(tags) & set(q.tags))]
    by_id = {q.id: q for q in pool}
    rng = random.Random(seed)
    due_ids = store.due(list(by_id))
    if due:
        return [by_id[i] for i in due_ids][:n]
    new = [q for q in pool if store.card(q.id) is None]
    rest = [q for q in pool if q.id not in due_ids and q not in new]
    rng.shuffle(new)
    rng.shuffle(rest)
    return ([by_id[i] for i in due_ids] + new + rest)[:n]


@dataclass(frozen=True)
class Row:
    """One rated item of the round, for the summary."""

    title: str
    link: str
    rating: int
    seconds: float = 0.0
    marks: tuple[str, ...] = ()  # the candidate's mark of each key point (a mock interview)
    points: tuple[str, ...] = ()  # the key points marked
    right: bool | None = None  # an item with one right answer (a drill, a 判断题, a 计算题): whether it was


def _record(store: Progress, qid: str, rating: int, coverage: float | None, seconds: float | None) -> int:
    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    card = store.review(qid, rating, coverage=coverage, seconds=seconds)
    console.print(f"已记录：{RATINGS[rating]}，下次复习 {card.due.astimezone():%Y-%m-%d %H:%M}", markup=False)
    return rating


def _rate(store: Progress, qid: str, coverage: float | None, seconds: float | None, default: int | None = None) -> int:
    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    choices = " / ".join(f"{k} {v}" for k, v in RATINGS.items())
    suggestion = f"（回车 = {RATINGS[default]}）" if default else ""
    while True:
        raw = input(f"自评 [{choices}]{suggestion}: ").strip() or (str(default) if default else "")
        if raw in ("1", "2", "3", "4"):
            return _record(store, qid, int(raw), coverage, seconds)
        console.print("请输入 1、2、3 或 4。", style="yellow")


#: how the summary says whether an item with one right answer was answered right
RESULT = {True: "对", False: "错"}


def score(checked: list[bool]) -> str:
    """The round's score line under the summary (the browser writes the same: ``quiz.js``'s summary)."""
    return f"答对 {sum(checked)} / {len(checked)} 道"


def _summary(rows: list[Row], mock: bool) -> None:
    if not rows:
        return
    from rich.table import Table  # noqa: PLC0415

    from verify.quiz.progress import RATINGS  # noqa: PLC0415

    from verify.quiz.scoring import MARKS  # noqa: PLC0415

    checked = [r.right for r in rows if r.right is not None]
    head = ["题目", *(["说到了", "没说到", "说错了", "用时"] if mock else []), *(["结果"] if checked else []), "自评"]
    table = Table(*head, title="本轮小结", title_justify="left")
    for r in rows:
        counts = [str(r.marks.count(m)) for m in MARKS] + [clock(r.seconds)] if mock else []
        result = [RESULT[r.right] if r.right is not None else ""] if checked else []
        table.add_row(r.title, *counts, *result, RATINGS[r.rating])
    console.print(table)
    if checked:
        console.print(score(checked), style="bold", markup=False)
    if not mock:
        return
    weak = [(m, point, r.link) for m in ("wrong", "missed") for r in rows for point, x in zip(r.points, r.marks) if x == m]
    if weak:
        console.print("要补的考察点：", style="bold")
        for mark, point, link in weak[:8]:
            console.print(f"  {MARKS[mark]}  {point}  → {link}", markup=False)
    else:
        console.print("每个考察点你都标了「说到了」。", style="green")


@contextlib.contextmanager
def _round(store: Progress, rows: list[Row], mock: bool) -> Iterator[None]:
    """Around a quiz loop: Ctrl-D or Ctrl-C ends it quietly; the summary shows and the store closes."""
    try:
        yield
    except (EOFError, KeyboardInterrupt):
        console.print("\n已退出，已评分的题目都已保存。", style="yellow")
    finally:
        _summary(rows, mock=mock)
        store.close()


class Answers:
    """The full bank (answers need the page bodies), read in the background once the first question shows.

    ``load`` makes the bank; what it raises (a bank that does not validate) is raised by :meth:`of`.
    """

    def __init__(self, load: Callable[[], Bank]):
        self.load = load
        self.bank: Bank | None = None
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._load, daemon=True)

    def _load(self) -> None:
        try:
            self.bank = self.load()
        except Exception as exc:  # noqa: BLE001  (raised again where the answer is wanted)
            self.error = exc

    def start(self) -> None:
        if not self.thread.is_alive() and self.bank is None and self.error is None:
            self.thread.start()

    def of(self, qid: str) -> Question:
        self.start()
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.bank is not None
        return self.bank.question(qid)


def mock(store: Progress, picked: list[Question], answers: Answers, seconds: int, seed: int | None) -> None:
    """The mock interview: a timed answer, a follow-up, the answers, the candidate's marks and the rating they give."""
    from verify.quiz import scoring  # noqa: PLC0415
    from verify.quiz.progress import RATINGS as RATING_WORDS  # noqa: PLC0415

    rng = random.Random(seed)
    rows: list[Row] = []
    with _round(store, rows, mock=True):
        for i, q in enumerate(picked, 1):
            console.print(tui.header(i, len(picked), q))
            answers.start()  # the page bodies are read while the candidate thinks
            console.print(f"限时 {clock(seconds)}。用自己的话回答，空行结束。", style="bold")
            start = time.monotonic()
            answer = read_answer("开始作答：", seconds, start)
            took = time.monotonic() - start
            over = took > seconds
            console.print(f"用时 {clock(took)}" + ("（超时）" if over else ""), style="red" if over else "dim",
                          markup=False)
            fu = rng.choice(q.follow_ups)
            console.print(Panel(fu.q, title="追问", title_align="left", border_style="magenta"))
            follow = read_answer("回答追问：")
            full = answers.of(q.id)
            tui.show_answers(full)
            console.print(Panel(fu.a, title="追问参考", title_align="left", border_style="magenta"))
            marks = tui.assess(answer + "\n" + follow, full.key_points)
            rating = scoring.rating(marks, over_time=over)
            console.print(f"按你的标记：{RATING_WORDS[rating]}" + ("（超时了，全部说到也只记「良好」）" if over else ""),
                          style="bold", markup=False)
            _record(store, q.id, rating, sum(m == "said" for m in marks) / len(marks), took)
            rows.append(Row(full.title, full.page_url or full.url, rating, took, tuple(marks),
                            tuple(kp.point for kp in full.key_points)))


def flashcards(store: Progress, picked: list[Question], answers: Answers) -> None:
    """Flashcards: the question, a moment to recall, the answers folded by section, the self-rating."""
    rows: list[Row] = []
    with _round(store, rows, mock=False):
        for i, q in enumerate(picked, 1):
            console.print(tui.header(i, len(picked), q))
            answers.start()
            input("想好后按回车翻面 ")
            full = answers.of(q.id)
            tui.show_answers(full)
            console.print("考察点：\n" + "\n".join(f"  • {kp.point}" for kp in full.key_points), markup=False)
            rows.append(Row(full.title, full.page_url or full.url, _rate(store, q.id, None, None)))


def _predict(d: Drill) -> Any:
    """The candidate's prediction: text, or for a performance drill {"faster", "factor"}."""
    if d.format != "faster" or not d.options:
        return input("你的预测：").strip()
    a, b = d.options
    while True:
        raw = input(f"哪个更快？[1 {a} / 2 {b} / 3 差不多]: ").strip()
        if raw in ("1", "2", "3"):
            break
        console.print("请输入 1、2 或 3。", style="yellow")
    if raw == "3":
        return {"faster": "same", "factor": None}
    return {"faster": (a, b)[int(raw) - 1], "factor": input("慢的一方耗时大约是快的一方的几倍？").strip()}


def drills(store: Progress, picked: list[Drill]) -> None:
    """Predict the output: the code, a prediction checked against the observation, the self-rating."""
    from verify.quiz.drills import check  # noqa: PLC0415

    rows: list[Row] = []
    with _round(store, rows, mock=False):
        for i, d in enumerate(picked, 1):
            tui.show_drill(i, len(picked), d)
            right = check(d, _predict(d))
            tui.reveal_drill(d, right)
            rating = _rate(store, d.id, None, None, default=3 if right else 1)
            rows.append(Row(f"{d.title} · {d.claim}", d.page_url or d.url, rating, right=right))


def objective_feedback(item: Objective, right: bool) -> str:
    """What a checked 判断题 or 计算题 says: whether the candidate was right, then the answer."""
    said = "答对了" if right else "答错了"
    if item.kind == "judge":
        return f"{said}：这句是{item.answer_text}的"
    return f"{said}：答案{'' if right else '是'} {item.answer_text}（允许 ±{item.tolerance:.1%}，或两位有效数字）"


def objective_reveal(item: Objective) -> list[tuple[str, str]]:
    """What follows the verdict, ``(label, text)`` then a note (label ""): a 判断题's true sentence (the
    correction, for a false one) and the claim that observed its values; a 计算题's formula, this item's
    numbers in it, what counts as right, and its claim. The browser says the same (``quiz-objective.js``:
    ``reveals``)."""
    if item.kind != "judge":
        mine = item.params.get("worked", "")
        return [("公式：", item.explain), *([("本题：", mine)] if mine else []),
                ("", f"与答案相差不超过 ±{item.tolerance * 100:g}%，或是答案四舍五入到两位有效数字，都算对。"
                     f"这个公式由论断 {item.claim} 核对过。")]
    if item.answer:
        return [("原句：", item.explain), ("", f"句中的值是论断 {item.claim} 运行时观测到的。")]
    said, true = item.params.get("said", ""), item.params.get("true", "")
    where = f"错在「{said}」，应为「{true}」。" if said and true else ""
    return [("正确的说法：", item.explain),
            ("", f"{where}句中的值是论断 {item.claim} 运行时观测到的；改后的值，论断的期望不接受。")]


def objective(store: Progress, picked: list[Objective]) -> None:
    """判断与计算: a statement to call right or wrong, or a number to compute; checked, then the self-rating."""
    from verify.quiz.objective import check  # noqa: PLC0415

    rows: list[Row] = []
    with _round(store, rows, mock=False):
        for i, item in enumerate(picked, 1):
            judge = item.kind == "judge"
            console.print(Panel(("这句话对吗？\n" if judge else "") + item.prompt,
                                title=f"第 {i}/{len(picked)} 道 · {'判断题' if judge else '计算题'} · {item.title}",
                                title_align="left", border_style="cyan"))
            if judge:
                while (raw := input("对还是错？[1 对 / 2 错]: ").strip()) not in ("1", "2", "对", "错"):
                    console.print("请输入 1（对）或 2（错）。", style="yellow")
                answer = {"1": "对", "2": "错"}.get(raw, raw)
            else:
                answer = input(f"你的答案（{item.unit}）：").strip()
            right = check(item, answer)
            console.print(objective_feedback(item, right), style="green" if right else "red", markup=False)
            for label, text in objective_reveal(item):
                console.print(label + text, style="" if label else "dim", markup=False)
            tui.link(item.page_url, item.url, f"docs/questions/{item.question}.md",
                     label="论断所在的页面" if judge else "页面与证据")
            rows.append(Row(f"{item.title} · {'判断' if judge else '计算'}", item.page_url or item.url,
                            _rate(store, item.id, None, None, default=3 if right else 1), right=right))
