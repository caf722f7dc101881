"""``verify quiz drill | stats | import | export | anki``: registered on :data:`verify.quiz.terminal.quiz_app`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from verify.quiz import tui
from verify.quiz.loading import load_bank
from verify.quiz.terminal import (
    DbOpt,
    DiffOpt,
    DocsOpt,
    DueOpt,
    NOpt,
    SeedOpt,
    TagOpt,
    UrlOpt,
    _open_progress,
    _pick,
    _rate,
    _session,
    quiz_app,
)

console = tui.console
FileArg = Annotated[Path, typer.Argument(help="进度文件（JSON，和网页上「导出进度」的格式相同）")]


def _predict(d: dict[str, Any]) -> Any:
    """The candidate's prediction: text, or for a performance drill {"faster", "factor"}."""
    if d["format"] != "faster":
        return input("你的预测：").strip()
    a, b = d["options"]
    while True:
        raw = input(f"哪个更快？[1 {a} / 2 {b} / 3 差不多]: ").strip()
        if raw in ("1", "2", "3"):
            break
        console.print("请输入 1、2 或 3。", style="yellow")
    if raw == "3":
        return {"faster": "same", "factor": None}
    return {"faster": (a, b)[int(raw) - 1], "factor": input("慢的一方耗时大约是快的一方的几倍？").strip()}


@quiz_app.command()
def drill(n: NOpt = 10, question: Annotated[str | None, typer.Option(help="只练这道题的")] = None,
          tag: TagOpt = [], difficulty: DiffOpt = None, due: DueOpt = False,  # noqa: B006
          db: DbOpt = None, seed: SeedOpt = None, docs: DocsOpt = None, site_url: UrlOpt = None) -> None:
    """预测输出：看代码，预测观测值（形状、stride、异常、哪个更快），对照构建时的真实观测，自评。"""
    from verify.quiz.drillcheck import check  # noqa: PLC0415

    bank = load_bank(docs, url=site_url)
    pool = [d for d in bank["drills"] if not question or d["question"] == question]
    if not pool:
        console.print("没有可练的预测输出题：先运行 `verify run`（或构建一次网站）把观测值记下来。", style="yellow")
        return
    store = _open_progress(db)
    picked = _pick(pool, store, n, tag, difficulty, due, seed)
    if not picked:
        store.close()
        console.print("没有到期的卡片。" if due else "没有符合条件的题目。", style="yellow")
        return
    rows: list[dict[str, Any]] = []
    with _session(store, rows, mock=False):
        for i, d in enumerate(picked, 1):
            tui.show_drill(i, len(picked), d)
            right = check(d, _predict(d))
            tui.reveal_drill(d, right)
            rows.append({"q": dict(d, title=f"{d['title']} · {d['claim']}"),
                         "rating": _rate(store, d["id"], None, None, default=3 if right else 1)})


@quiz_app.command()
def stats(db: DbOpt = None, docs: DocsOpt = None) -> None:
    """复习进度：每道题的状态、下次复习时间与平均覆盖率，以及预测输出练了多少。"""
    from rich.table import Table  # noqa: PLC0415

    from verify.quiz.progress import STATE_NAMES  # noqa: PLC0415

    bank = load_bank(docs)
    store = _open_progress(db)
    weak = {q: (c, k) for q, c, k in store.weakest(limit=1000)}
    table = Table("题目", "状态", "下次复习", "平均覆盖率", "次数", title=f"进度：{store.path}")
    for q in bank["questions"]:
        card = store.card(q["id"])
        c, k = weak.get(q["id"], (None, len(store.reviews(q["id"]))))
        table.add_row(q["title"], STATE_NAMES[card.state.value] if card else "新卡",
                      f"{card.due.astimezone():%Y-%m-%d %H:%M}" if card else "-",
                      f"{c:.0%}" if c is not None else "-", str(k))
    console.print(table)
    drills = [d["id"] for d in bank["drills"]]
    seen = [i for i in drills if store.card(i) is not None]
    console.print(f"预测输出：已练 {len(seen)} / {len(drills)} 道，到期 {len(store.due(drills))} 道。", markup=False)
    store.close()


def _known(bank: dict[str, Any]) -> set[str]:
    return {q["id"] for q in bank["questions"]} | {d["id"] for d in bank["drills"]}


@quiz_app.command("import")
def import_(file: FileArg, db: DbOpt = None, docs: DocsOpt = None) -> None:
    """导入进度文件（网页上导出的，或 `verify quiz export` 写的）：题库里没有的 id 会列出并跳过。"""
    from verify.quiz import transfer  # noqa: PLC0415

    try:
        if file.stat().st_size > transfer.MAX_BYTES:  # refused before it is read into memory
            raise transfer.NotAProgressFile(f"文件有 {file.stat().st_size:,} 字节，进度文件最多 {transfer.MAX_BYTES:,} 字节")
        obj = transfer.read(file.read_bytes())
    except OSError as exc:
        console.print(f"导入失败：{file} 读不了（{exc.strerror}）。现有进度未改动。", style="red", markup=False)
        raise typer.Exit(2) from None
    except transfer.NotAProgressFile as exc:
        console.print(f"导入失败：{file}：{exc}。现有进度未改动。", style="red", markup=False)
        raise typer.Exit(2) from None
    known = _known(load_bank(docs))
    store = _open_progress(db)
    try:
        done = transfer.import_into(store, obj, known)
    finally:
        store.close()
    console.print(f"已导入 {done.cards} 张卡片的进度、{done.reviews} 条自评" +
                  (f"；{done.kept} 张卡片这里的更新，保留了这里的" if done.kept else "") + "。", markup=False, soft_wrap=True)
    if done.unknown:
        hint = ("（预测输出题要有观测值才在题库里：先运行 `verify run`）"
                if any(i.startswith("drill:") for i in done.unknown) else "")
        console.print(f"跳过 {len(done.unknown)} 个题库里没有的 id：" + "、".join(done.unknown[:10]) + hint,
                      style="yellow", markup=False, soft_wrap=True)


@quiz_app.command("export")
def export_(file: FileArg, db: DbOpt = None) -> None:
    """导出进度文件：网页上的「导入进度…」可以读它。"""
    from verify.quiz import transfer  # noqa: PLC0415

    store = _open_progress(db)
    try:
        data = transfer.export(store)
    finally:
        store.close()
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    console.print(f"已导出 {len(data['cards'])} 张卡片、{len(data['log'])} 条自评到 {file}。", markup=False, soft_wrap=True)


@quiz_app.command()
def anki(out: Annotated[Path, typer.Option("--out", "-o", help="写出的 .apkg 文件")] = Path("interview-quiz.apkg"),
         site_url: UrlOpt = None, docs: DocsOpt = None) -> None:
    """导出 Anki 牌组（.apkg）：每个考察点、追问和预测输出一张卡；GUID 由 id 生成，重新导入会更新而不是重复。"""
    from collections import Counter  # noqa: PLC0415

    from verify.quiz.anki import export  # noqa: PLC0415
    from verify.quiz.cards import KINDS, cards_of  # noqa: PLC0415

    bank = load_bank(docs, url=site_url)
    counts = Counter(c.kind for c in cards_of(bank))
    path = export(bank, out)
    detail = "、".join(f"{KINDS[k]} {counts[k]}" for k in KINDS)
    console.print(f"已写出 {sum(counts.values())} 张笔记（{detail}）：{path}", markup=False, soft_wrap=True)
