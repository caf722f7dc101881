"""What the terminal quiz draws: question headers, the score beside the self-rating, folded answers, links.

Only rich is imported at module level; Markdown (markdown-it) and Syntax (pygments) on first use.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

console = Console(highlight=False)
HINT = "这个分数只按关键词和说反的说法粗略估计，是提示，不是评分：请以你的自评为准。"
_MARK = {"covered": "[green]✓ 覆盖[/]", "partial": "[yellow]◐ 部分[/]", "missed": "[red]✗ 遗漏[/]",
         "contradicted": "[bold red]✗ 说反了[/]"}


def header(i: int, n: int, q: dict[str, Any], what: str = "题") -> Panel:
    meta = f"第 {i}/{n} {what} · 难度 {q['difficulty']} · " + " ".join(f"#{t}" for t in q["tags"])
    src = "；".join(f"{s['company']} {s['round']}" for s in q["sources"])
    return Panel(q["question"] + f"\n\n来源：{src}", title=meta, title_align="left", border_style="cyan")


def link(q: dict[str, Any], label: str = "页面与证据") -> None:
    """The page's address, clickable where the terminal supports it; the file where the address is unknown."""
    url = q.get("page_url")
    if url:
        console.print(Text.assemble((f"{label}：", "dim"), (url, f"link {url} underline")))
    else:
        console.print(f"{label}：{q['url']}（{q['file']}；在 mkdocs.yml 设 site_url 后这里显示完整网址）",
                      style="dim", markup=False)


def score_table(result) -> None:
    table = Table("考察点", "覆盖", "命中 / 遗漏", title=f"考察点覆盖率 {result.coverage:.0%}", title_justify="left")
    mistakes = []
    for p in result.points:
        if p.contradicted:
            table.add_row(p.point, _MARK[p.status], Text(f"你说「{p.contradicted['said']}」", style="red"))
            mistakes.append(p)
            continue
        hit = "、".join(f"{k}（{v}）" if v != k else k for k, v in p.hits.items() if v)
        miss = "、".join(p.missing)
        listed = "、".join(p.listed)
        cell = "  ".join(x for x in ((f"命中 {hit}" if hit else ""), (f"遗漏 {miss}" if miss else ""),
                                      (f"只在关键词罗列里（减半）：{listed}" if listed else "")) if x)
        table.add_row(p.point, _MARK[p.status], cell)
    console.print(table)
    for p in mistakes:
        console.print(Text.assemble(("✗ 说反了：", "bold red"), f"你说「{p.contradicted['said']}」，这与考察点相反"
                                    f"（{p.contradicted['statement']}）。正确的是：{p.point}"))
    console.print(HINT, style="dim", markup=False)


def sections(markdown_text: str) -> tuple[str, list[tuple[str, str]]]:
    """(what comes before the first ``###``, [(title, body)]) of an answer."""
    parts = re.split(r"^### +(.+)$", markdown_text, flags=re.M)
    intro, rest = parts[0].strip(), parts[1:]
    return intro, [(rest[i].strip(), rest[i + 1].strip()) for i in range(0, len(rest), 2)]


def show_folded(title: str, markdown_text: str, style: str, ask: bool = True) -> None:
    """A long answer as its introduction and a numbered list of folded sections to open one by one."""
    from rich.markdown import Markdown  # noqa: PLC0415  (markdown-it: not on the start path)

    intro, parts = sections(markdown_text)
    if not parts or len(markdown_text) < 1200 or not ask:
        console.print(Panel(Markdown(markdown_text), title=title, title_align="left", border_style=style))
        return
    outline = "\n".join(f"  [{n}] {t}（{len(b)} 字）" for n, (t, b) in enumerate(parts, 1))
    console.print(Panel(Markdown(intro) if intro else Text(""), title=title, title_align="left", border_style=style,
                        subtitle=f"共 {len(parts)} 节，已折叠", subtitle_align="left"))
    console.print(outline, markup=False)
    while True:
        raw = input("输入编号展开一节（如 2 或 1,3），a 全部展开，p 用分页器看全文，回车继续：").strip().lower()
        if not raw:
            return
        if raw == "p":
            with console.pager(styles=True):
                console.print(Markdown(markdown_text))
            continue
        picked = range(1, len(parts) + 1) if raw == "a" else [int(x) for x in re.findall(r"\d+", raw)]
        for n in picked:
            if 1 <= n <= len(parts):
                t, b = parts[n - 1]
                console.print(Panel(Markdown(b), title=f"[{n}] {t}", title_align="left", border_style=style))
            else:
                console.print(f"没有第 {n} 节。", style="yellow")


def show_answers(q: dict[str, Any], ask: bool = True) -> None:
    from rich.markdown import Markdown  # noqa: PLC0415

    console.print(Panel(Markdown(q["ordinary_answer"]), title="普通回答", title_align="left", border_style="dim"))
    show_folded("更好的回答", q["better_answer"], "green", ask=ask)
    link(q)


def show_drill(i: int, n: int, d: dict[str, Any]) -> None:
    from rich.syntax import Syntax  # noqa: PLC0415

    title = f"第 {i}/{n} 道 · 预测输出 · {d['title']}"
    console.print(Panel(Syntax(d["code"], "python", theme="ansi_dark", background_color="default"),
                        title=title, title_align="left", border_style="cyan", subtitle=f"{d['snippet']}:{d['line']}",
                        subtitle_align="left"))
    console.print(d["prompt"], style="bold", markup=False)


def reveal_drill(d: dict[str, Any], right: bool) -> None:
    from verify.quiz.cards import drill_where  # noqa: PLC0415

    console.print("✓ 对了" if right else "✗ 不对", style="bold green" if right else "bold red")
    console.print(f"观测值：{d['answer_text']}", markup=False)
    console.print(f"观测于 {drill_where(d)}" + ("（构建本站的机器）" if d.get("here") else "（记录自另一台机器）"),
                  style="dim", markup=False)
    console.print(Panel(d["sentence"], title="页面上的这句话", title_align="left", border_style="green"))
    link(dict(d, file=d["snippet"]), "这句话在网页上")
