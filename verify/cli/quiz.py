"""``verify quiz``: the mock interview, flashcards and drills in a terminal, progress files, the Anki export.

Only typer and rich are imported at module level, and torch never: the quiz reads the bank the last
site build left in the project cache, checked current by one ``stat`` per source file
(:mod:`verify.quiz.built`), so no snippet is scanned and the machine is not probed. Without a current
one the quiz makes the bank itself, saying 「正在生成题库…」 (the claims' sentences and drills from a
ledger made from the cache, nothing run), and leaves it for the next start. The commands hand the bank
to :mod:`verify.quiz.practice`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from verify.cli import zh
from verify.cli.common import settings_for
from verify.quiz import practice
from verify.quiz.tui import console

if TYPE_CHECKING:
    from verify.quiz.claims import ClaimFacts
    from verify.quiz.progress import Progress
    from verify.quiz.schema import Bank, Question
    from verify.settings import Settings

log = logging.getLogger("verify.quiz")
quiz_app = typer.Typer(help="模拟面试、闪卡和预测输出练习（终端），进度文件的导入导出，以及 Anki 牌组。",
                       cls=zh.Group, no_args_is_help=True, add_completion=False,
                       context_settings={"help_option_names": ["--help", "-h"]})

NOpt = Annotated[int, typer.Option("--count", "-n", metavar="<题数>", help="练几道")]
TagOpt = Annotated[list[str], typer.Option("--tag", metavar="<标签>", help="只练带这个标签的题（可重复）")]
DiffOpt = Annotated[str | None, typer.Option("--difficulty", metavar="<难度>", help="难度：一个数或一段，如 2、1-3")]
DueOpt = Annotated[bool, typer.Option("--due", help="只练到期该复习的")]
DbOpt = Annotated[Path | None, typer.Option("--db", metavar="<文件>", help="进度数据库（默认在用户数据目录下）")]
SeedOpt = Annotated[int | None, typer.Option("--seed", metavar="<整数>", help="随机种子，让顺序可重复")]
UrlOpt = Annotated[str | None, typer.Option("--site-url", metavar="<网址>",
                                            help="站点地址，让链接成为完整网址（默认读 mkdocs.yml 的 site_url）")]
QuestionOpt = Annotated[str | None, typer.Option("--question", metavar="<题目 id>",
                                                 help="只练这道题（id 即 questions/ 下页面的文件名，如 python-overhead）")]
RootOpt = Annotated[Path | None, typer.Option("--root", metavar="<目录>",
                                              help="站点目录；默认从当前目录往上找 mkdocs.yml")]
FileArg = Annotated[Path, typer.Argument(metavar="进度文件", help="进度文件（JSON，和网页上「导出进度」的格式相同）")]


# --- the bank ---------------------------------------------------------------------------------

def _fail(message: str) -> typer.Exit:
    console.print(message, style="red", markup=False, soft_wrap=True)
    return typer.Exit(2)


#: said while the terminal makes the bank itself, which takes seconds on a fresh cache
BUILDING = ("正在生成题库…（没有与当前页面、代码片段和证据一致的题库，要扫描代码片段、读取本机信息；"
            "构建过一次网站后，练习直接读它留下的题库）")


def claim_facts(settings: Settings) -> tuple[ClaimFacts, str | None]:
    """Every claim's sentence, the pages' bound values and the drills, from what the cache holds (nothing
    is run), and the fingerprint of the machine they were read for; empty and None where nothing can be
    read (no snippets, no torch)."""
    from verify.errors import ClaimError  # noqa: PLC0415
    from verify.quiz.claims import ClaimFacts, gather  # noqa: PLC0415
    from verify.running import engine  # noqa: PLC0415

    try:
        ledger = engine.verify(settings, run=False)
        return gather(ledger, settings.docs_dir), ledger.probe.fingerprint
    except (ClaimError, OSError, RuntimeError) as exc:  # answers without claims
        log.debug("quiz: claim facts unavailable: %s", exc)
        return ClaimFacts(), None


def site_url(settings: Settings, given: str | None = None) -> str | None:
    """The site's address, ending in ``/``: ``given`` (an option), else ``site_url`` of the checkout's mkdocs.yml."""
    from verify.settings import site_config  # noqa: PLC0415

    return given.rstrip("/") + "/" if given else site_config(settings.root).site_url


def machine(settings: Settings) -> str:
    """This machine's fingerprint as the probe takes it (torch's version and place, the CPU, the GPUs):
    the key of its cached evidence. Cheap: nothing is imported or run."""
    from verify.running import probe  # noqa: PLC0415

    return probe._fingerprint(settings)


def built_bank(settings: Settings, url: str | None = None) -> Bank | None:
    """The bank the last site build (or quiz) left, when it is current for the checkout and this machine
    (:mod:`verify.quiz.built`); None otherwise."""
    from verify.quiz import built  # noqa: PLC0415

    return built.read(settings, site_url=site_url(settings, url), machine=lambda: machine(settings))


def make_bank(settings: Settings, url: str | None = None) -> Bank:
    """The bank made here, as a site build makes it (the claims' facts from the cache, nothing run), and
    left for the next start; raises BankError."""
    from verify.quiz import built  # noqa: PLC0415
    from verify.quiz.bank import build_bank  # noqa: PLC0415

    digest = built.sources_digest(settings)  # before reading them: a file changed meanwhile leaves it stale
    facts, fingerprint = claim_facts(settings)
    link = site_url(settings, url)
    bank = build_bank(settings.docs_dir, html=False, facts=facts, site_url=link)
    if fingerprint is not None:
        built.write(settings, bank, built.Made(digest, fingerprint, live=False, site_url=link))
    return bank


def load_bank(settings: Settings, *, url: str | None = None, quiet: bool = False) -> Bank:
    """The validated bank (answers, drills, absolute links when the site's address is known): the one the
    site build left while it is current, else made here (「正在生成题库…」 said first unless ``quiet``);
    exit 2 with every problem printed."""
    bank = built_bank(settings, url)
    if bank is None:
        from verify.quiz.bank import BankError  # noqa: PLC0415  (the bank's code: only when it is made here)

        if not quiet:
            console.print(BUILDING, style="dim", markup=False, soft_wrap=True)
        try:
            bank = make_bank(settings, url)
        except BankError as exc:
            raise _fail(str(exc)) from None
    if not bank.questions:
        raise _fail("题库为空：没有找到 questions/*.md。")
    return bank


def load_outline(settings: Settings) -> list[Question]:
    """The questions' front matter, validated (enough to pick and ask); exit 2 with every problem."""
    from verify.quiz.schema import BankError, outline  # noqa: PLC0415

    try:
        questions = outline(settings.docs_dir)
    except BankError as exc:
        raise _fail(str(exc)) from None
    if not questions:
        raise _fail("题库为空：没有找到 questions/*.md。")
    return questions


def _difficulty_range(spec: str | None) -> tuple[int, int]:
    if not spec:
        return 1, 5
    try:
        lo, _, hi = spec.partition("-")
        return int(lo), int(hi or lo)
    except ValueError:
        raise typer.BadParameter(f"应为 2 或 1-3 这样的写法，而不是 {spec!r}", param_hint="--difficulty") from None


def _nothing(due: bool) -> None:
    console.print("没有到期的卡片。" if due else "没有符合条件的题目。", style="yellow")


def check_known(questions: Sequence[Question], question: str | None, tags: Sequence[str]) -> None:
    """A ``--question`` or ``--tag`` the bank does not have: exit 2, naming it and the nearest ones the bank has."""
    ids = sorted(q.id for q in questions)
    if question is not None and question not in ids:
        near = zh.nearest(question, ids)
        raise typer.BadParameter(f"题库里没有 id 为 {question!r} 的题；" +
                                 (f"最接近的：{'、'.join(near)}。" if near else f"现有的题：{'、'.join(ids)}。"),
                                 param_hint="--question")
    known = sorted({t for q in questions for t in q.tags})
    for tag in tags:
        if tag not in known:
            near = zh.nearest(tag, known)
            raise typer.BadParameter(f"没有带 {tag!r} 标签的题" + (f"；最接近的：{'、'.join(near)}。" if near else "。"),
                                     param_hint="--tag")


class _Answers(practice.Answers):
    """The bank made in the background while the first question is answered; the candidate who reaches
    the answers before it is ready is told what is being waited for."""

    def of(self, qid: str) -> Question:
        self.start()
        if self.thread.is_alive():
            console.print(BUILDING, style="dim", markup=False, soft_wrap=True)
        return super().of(qid)


def _start(root: Path | None, db: Path | None, n: int, question: str | None, tag: list[str], difficulty: str | None,
           due: bool, seed: int | None) -> tuple[Progress, list[Question], practice.Answers] | None:
    """The progress store, the picked questions and their answers; None (store closed, reason printed) when
    none fit. The questions come from the bank a build left when it is current; else from the front
    matter alone, and the bank is made while the first one is answered."""
    settings = settings_for(root)
    span = _difficulty_range(difficulty)
    bank = built_bank(settings)
    questions = list(bank.questions) if bank is not None else load_outline(settings)
    check_known(questions, question, tag)
    if question is not None:
        questions = [q for q in questions if q.id == question]
    store = practice.open_progress(db)
    picked = practice.pick(questions, store, n, tag, span, due, seed)
    if not picked:
        store.close()
        _nothing(due)
        return None
    answers = practice.Answers(lambda: bank) if bank is not None else _Answers(lambda: load_bank(settings, quiet=True))
    return store, picked, answers


def _practise(pool: list[Any], run: Callable[[Progress, list[Any]], None], db: Path | None, n: int, tag: list[str],
              span: tuple[int, int], due: bool, seed: int | None) -> None:
    """Pick from ``pool`` by the schedule and run the round; the store closed and the reason said when none fit."""
    store = practice.open_progress(db)
    picked = practice.pick(pool, store, n, tag, span, due, seed)
    if not picked:
        store.close()
        _nothing(due)
        return
    run(store, picked)


# --- the commands -------------------------------------------------------------------------------

@quiz_app.command(cls=zh.Command)
def mock(n: NOpt = 5, question: QuestionOpt = None, tag: TagOpt = [], difficulty: DiffOpt = None,  # noqa: B006
         due: DueOpt = False, seconds: Annotated[int, typer.Option(metavar="<秒>", help="每题限时（秒）")] = 180,
         db: DbOpt = None, seed: SeedOpt = None, root: RootOpt = None) -> None:
    """模拟面试：计时作答、追问，对照参考答案自己标记考察点。

    每个考察点标成说到了、没说到或说错了，机器不预选；标记给出自评，FSRS 据此安排复习。
    """
    started = _start(root, db, n, question, tag, difficulty, due, seed)
    if started is not None:
        store, picked, answers = started
        practice.mock(store, picked, answers, seconds, seed)


@quiz_app.command(cls=zh.Command)
def cards(n: NOpt = 10, question: QuestionOpt = None, tag: TagOpt = [], difficulty: DiffOpt = None,  # noqa: B006
          due: DueOpt = False, db: DbOpt = None, seed: SeedOpt = None, root: RootOpt = None) -> None:
    """闪卡：看题、回想、翻面对照答案，自评。

    普通回答与更好的回答按节折叠。
    """
    started = _start(root, db, n, question, tag, difficulty, due, seed)
    if started is not None:
        store, picked, answers = started
        practice.flashcards(store, picked, answers)


@quiz_app.command(cls=zh.Command)
def drill(n: NOpt = 10, question: QuestionOpt = None,
          tag: TagOpt = [], difficulty: DiffOpt = None, due: DueOpt = False,  # noqa: B006
          db: DbOpt = None, seed: SeedOpt = None, root: RootOpt = None, site_url: UrlOpt = None) -> None:
    """预测输出：看代码，预测观测值，对照真实观测。

    预测形状、stride、异常或哪个更快；观测值来自论断运行时的记录。
    """
    span = _difficulty_range(difficulty)
    bank = load_bank(settings_for(root), url=site_url)
    check_known(bank.questions, question, tag)
    pool = [d for d in bank.drills if not question or d.question == question]
    if not pool:
        console.print(f"「{bank.question(question).title}」没有预测输出题。" if question and bank.drills else
                      "没有可练的预测输出题：先运行 `verify run`（或构建一次网站）把观测值记下来。", style="yellow")
        return
    _practise(pool, practice.drills, db, n, tag, span, due, seed)


@quiz_app.command(cls=zh.Command)
def objective(n: NOpt = 10, kind: Annotated[str | None, typer.Option(metavar="judge|calc", help="judge（判断题）或 calc（计算题）；默认混着练")] = None,
              question: QuestionOpt = None,
              tag: TagOpt = [], difficulty: DiffOpt = None, due: DueOpt = False,  # noqa: B006
              db: DbOpt = None, seed: SeedOpt = None, root: RootOpt = None, site_url: UrlOpt = None) -> None:
    """判断题和计算题：每题有唯一正确答案。

    计算题的公式由论断核对过，参数每题不同。
    """
    if kind not in (None, "judge", "calc"):
        raise typer.BadParameter(f"应为 judge 或 calc，而不是 {kind!r}", param_hint="--kind")
    span = _difficulty_range(difficulty)
    bank = load_bank(settings_for(root), url=site_url)
    check_known(bank.questions, question, tag)
    pool = [o for o in bank.objective if (not kind or o.kind == kind) and (not question or o.question == question)]
    if not pool and question and any(not kind or o.kind == kind for o in bank.objective):  # others have some
        what = {"judge": "判断题", "calc": "计算题"}.get(kind or "", "判断题或计算题")
        console.print(f"「{bank.question(question).title}」没有{what}。", style="yellow")
        return
    if not pool:  # both kinds are what claims observed: none before the claims ran
        what = {"judge": "判断题", "calc": "计算题"}.get(kind or "", "判断题或计算题")
        console.print(f"没有可练的{what}：它们来自论断的观测值，先运行 `verify run`（或构建一次网站）。", style="yellow")
        return
    _practise(pool, practice.objective, db, n, tag, span, due, seed)


@quiz_app.command(cls=zh.Command)
def handwrite(n: Annotated[int, typer.Option("-n", metavar="<题数>", help="本轮题数")] = 1,
              problem: Annotated[str | None, typer.Option("--problem", "-p", metavar="<题目>",
                                                          help="只练这道手撕题（verify judge list 列出全部）")] = None,
              question: QuestionOpt = None, tag: TagOpt = [], difficulty: DiffOpt = None,  # noqa: B006
              due: DueOpt = False, db: DbOpt = None, seed: SeedOpt = None, root: RootOpt = None) -> None:
    """手撕：读题，在 $EDITOR 里写解答，本地评测器判对错。

    通过后给出参考解；核函数题的报告里有编译或模拟得到的 GPU 一节，与参考解并列。
    一次通过默认自评「良好」，改过才通过为「困难」，放弃为「重来」；FSRS 据此安排复习。
    """
    from verify.judge import problem as problems  # noqa: PLC0415
    from verify.quiz import handwrite as hw  # noqa: PLC0415

    settings = settings_for(root)
    found = problems.all_problems(settings.root)
    if problem is not None and problem not in {p.id for p in found}:
        raise _fail(f"没有这道手撕题：{problem}（verify judge list 列出全部）")
    questions = load_outline(settings)
    check_known(questions, question, tag)
    pool = [c for c in hw.items(found, questions)
            if (problem is None or c.problem == problem) and (question is None or c.question == question)]
    if not pool:
        console.print("没有符合条件的手撕题。", style="yellow")
        return
    store = practice.open_progress(db)
    picked = practice.pick(pool, store, n, tag, _difficulty_range(difficulty), due, seed)
    if not picked:
        store.close()
        _nothing(due)
        return
    hw.run(store, store.path.parent, picked)


@quiz_app.command(cls=zh.Command)
def stats(db: DbOpt = None, root: RootOpt = None) -> None:
    """复习进度：每道题的状态和下次复习时间。

    还有平均标为「说到了」的比例，以及预测输出练了多少。
    """
    from rich.table import Table  # noqa: PLC0415

    from verify.quiz.progress import STATE_NAMES  # noqa: PLC0415

    bank = load_bank(settings_for(root))
    store = practice.open_progress(db)
    weak = {q: (c, k) for q, c, k in store.weakest(limit=1000)}
    table = Table("题目", "状态", "下次复习", "平均说到了", "次数", title=f"进度：{store.path}")
    for q in bank.questions:
        card = store.card(q.id)
        c, k = weak.get(q.id, (None, len(store.reviews(q.id))))
        table.add_row(q.title, STATE_NAMES[card.state.value] if card else "新卡",
                      f"{card.due.astimezone():%Y-%m-%d %H:%M}" if card else "-",
                      f"{c:.0%}" if c is not None else "-", str(k))
    console.print(table)
    drills = [d.id for d in bank.drills]
    seen = [i for i in drills if store.card(i) is not None]
    console.print(f"预测输出：已练 {len(seen)} / {len(drills)} 道，到期 {len(store.due(drills))} 道。", markup=False)
    store.close()


@quiz_app.command("import", cls=zh.Command)
def import_(file: FileArg, db: DbOpt = None, root: RootOpt = None) -> None:
    """导入进度文件：网页上导出的，或 export 写的。

    题库里没有的 id 会列出并跳过。
    """
    from verify.shown import safe  # noqa: PLC0415
    from verify.quiz import progress  # noqa: PLC0415

    try:
        read = progress.read_path(file)  # a regular file, capped while read: a FIFO or /dev/zero is refused
    except FileNotFoundError:
        raise _fail(f"导入失败：{safe(file)} 不存在。现有进度未改动。") from None
    except progress.NotAProgressFile as exc:
        raise _fail(f"导入失败：{safe(file)}：{safe(exc, 400)}。现有进度未改动。") from None
    known = load_bank(settings_for(root)).known()
    store = practice.open_progress(db)
    try:
        done = progress.import_into(store, read, known)
    finally:
        store.close()
    console.print(f"已导入 {done.cards} 张卡片的进度、{done.reviews} 条自评" +
                  (f"；{done.kept} 张卡片这里的更新，保留了这里的" if done.kept else "") + "。", markup=False, soft_wrap=True)
    if done.unknown:  # ids from the file: shown with their control characters escaped
        hint = ("（预测输出题要有观测值才在题库里：先运行 `verify run`）"
                if any(i.startswith("drill:") for i in done.unknown) else "")
        console.print(f"跳过 {len(done.unknown)} 个题库里没有的 id：" + "、".join(safe(i, 80) for i in done.unknown[:10]) +
                      hint, style="yellow", markup=False, soft_wrap=True)


@quiz_app.command("export", cls=zh.Command)
def export_(file: FileArg, db: DbOpt = None) -> None:
    """导出进度文件：网页上的「导入进度…」可以读它。"""
    from verify.quiz import progress  # noqa: PLC0415
    from verify.storage.fs import atomic_write_text  # noqa: PLC0415

    store = practice.open_progress(db)
    try:
        data = progress.export(store)
    finally:
        store.close()
    try:  # beside the file, fsynced, renamed over it: a full disk leaves the earlier export whole
        atomic_write_text(file, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    except OSError as exc:
        raise _fail(f"导出失败：{file} 写不了（{exc.strerror}），原有文件未改动。") from None
    console.print(f"已导出 {len(data['cards'])} 张卡片、{len(data['log'])} 条自评到 {file}。", markup=False, soft_wrap=True)


@quiz_app.command(cls=zh.Command)
def anki(out: Annotated[Path, typer.Option("--out", "-o", metavar="<文件>", help="写出的 .apkg 文件")] = Path("interview-quiz.apkg"),
         site_url: UrlOpt = None, root: RootOpt = None) -> None:
    """导出 Anki 牌组（.apkg）。

    每个考察点、追问和预测输出一张卡；GUID 由 id 生成，重新导入会更新而不是重复。
    """
    from collections import Counter  # noqa: PLC0415

    from verify.quiz.deck import KINDS, cards_of, export  # noqa: PLC0415

    bank = load_bank(settings_for(root), url=site_url)
    counts = Counter(c.kind for c in cards_of(bank))
    path = export(bank, out)
    detail = "、".join(f"{KINDS[k]} {counts[k]}" for k in KINDS)
    console.print(f"已写出 {sum(counts.values())} 张笔记（{detail}）：{path}", markup=False, soft_wrap=True)
    if not bank.site_url:  # said to whoever exports the deck, once, not on every card a candidate reads
        console.print("卡片上的链接是站内路径：在 mkdocs.yml 设 site_url，或导出时加 --site-url，链接就是完整网址。",
                      style="dim", markup=False, soft_wrap=True)
