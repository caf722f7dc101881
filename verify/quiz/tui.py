"""What the terminal quiz draws and reads: question headers, the candidate's marks of each key point,
folded answers, links, drills; and an answer typed under a live countdown.

Only rich is imported at module level; Markdown (markdown-it) and Syntax (pygments) on first use.

In a terminal the keys of an answer are read one by one (cbreak mode: Ctrl-C still interrupts) and
the answer so far is drawn under a clock that ticks every quarter second, turning red with
「超时 +m:ss」 when the time is up. An empty line ends the answer; Ctrl-D ends the quiz. Where there
is no terminal (a pipe, ``TERM=dumb``, Windows) the answer is read line by line and each new
line's prompt shows the time left.
"""

from __future__ import annotations

import codecs
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

if TYPE_CHECKING:
    from verify.quiz.schema import Drill, KeyPoint, Question

console = Console(highlight=False)


def header(i: int, n: int, q: Question, what: str = "题") -> Panel:
    meta = f"第 {i}/{n} {what} · 难度 {q.difficulty} · " + " ".join(f"#{t}" for t in q.tags)
    src = "；".join(f"{s.company} {s.round}" for s in q.sources)
    return Panel(q.question + f"\n\n来源：{src}", title=meta, title_align="left", border_style="cyan")


def link(page_url: str | None, url: str, file: str, label: str = "页面与证据") -> None:
    """The page's address, clickable where the terminal supports it; the file where the address is unknown."""
    if page_url:
        console.print(Text.assemble((f"{label}：", "dim"), (page_url, f"link {page_url} underline")))
    else:
        console.print(f"{label}：本站的 {url}（{file}）",
                      style="dim", markup=False)


def assess(answer: str, key_points: Sequence[KeyPoint]) -> list[str]:
    """The candidate marks each key point 说到了 / 没说到 / 说错了; nothing is chosen for them.

    Beside each point: the sentences of ``answer`` that contain one of its words, said to be only that.
    """
    from verify.quiz.scoring import FIND_RULES, MARKS, shared, words  # noqa: PLC0415

    keys = list(MARKS)
    choices = " / ".join(f"{i} {MARKS[k]}" for i, k in enumerate(keys, 1))
    console.print("对照考察点，给自己的回答打标记", style="bold")
    console.print(FIND_RULES["why"], style="dim", markup=False)
    marks = []
    for n, kp in enumerate(key_points, 1):
        console.print(Text.assemble((f"[{n}] ", "bold"), kp.point))
        found = shared(answer, kp)
        if found:
            console.print(f"    {FIND_RULES['label']}：", style="dim", markup=False)
            for sentence, said in found:
                console.print(f"      「{sentence}」（含 {'、'.join(said)}）", markup=False)
        else:
            console.print(f"    {FIND_RULES['none']}（{'、'.join(words(kp))}）。", style="dim", markup=False)
        while (raw := input(f"    [{choices}]: ").strip()) not in ("1", "2", "3"):
            console.print("    请输入 1、2 或 3。", style="yellow")
        mark = keys[int(raw) - 1]
        # the candidate's own choice, in one neutral style: no colour that reads as right or wrong
        console.print(Text(f"    → {MARKS[mark]}", style="bold"))
        marks.append(mark)
    return marks


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


def show_answers(q: Question, ask: bool = True) -> None:
    from rich.markdown import Markdown  # noqa: PLC0415

    console.print(Panel(Markdown(q.ordinary_answer), title="普通回答", title_align="left", border_style="dim"))
    show_folded("更好的回答", q.better_answer, "green", ask=ask)
    if q.deeper_answer:
        show_folded("逐点展开", q.deeper_answer, "green", ask=ask)
    link(q.page_url, q.url, q.file)


def show_drill(i: int, n: int, d: Drill) -> None:
    from rich.syntax import Syntax  # noqa: PLC0415

    title = f"第 {i}/{n} 道 · 预测输出 · {d.title}"
    # long lines wrap: a cut line could hide the very expression the drill asks about
    console.print(Panel(Syntax(d.code, "python", theme="ansi_dark", background_color="default", word_wrap=True),
                        title=title, title_align="left", border_style="cyan", subtitle=f"{d.snippet}:{d.line}",
                        subtitle_align="left"))
    console.print(d.prompt, style="bold", markup=False)


def reveal_drill(d: Drill, right: bool) -> None:
    console.print("✓ 预测对了" if right else "✗ 预测错了", style="bold green" if right else "bold red")
    console.print(f"观测值：{d.answer_text}", markup=False)
    console.print(f"观测于 {d.where}" + ("（构建本站的机器）" if d.here else "（记录自另一台机器）"),
                  style="dim", markup=False)
    console.print(Panel(d.sentence, title="页面上的这句话", title_align="left", border_style="green"))
    link(d.page_url, d.url, d.snippet, "这句话在网页上")


# --- typing an answer ----------------------------------------------------------------------

SHOWN_LINES = 12  # the live view shows the last lines of a long answer; all of it is printed at the end


def clock(seconds: float) -> str:
    s = int(abs(seconds))
    return f"{s // 60}:{s % 60:02d}"


def remaining(limit: float, started: float) -> Text:
    left = limit - (time.monotonic() - started)
    if left >= 0:
        return Text(f"剩余 {clock(left)}", style="bold cyan")
    return Text(f"超时 +{clock(-left)}", style="bold red")


def live_capable() -> bool:
    return os.name == "posix" and sys.stdin.isatty() and console.is_terminal and not console.is_dumb_terminal


def read_answer(prompt: str, limit: float | None = None, started: float | None = None) -> str:
    """Lines until an empty line; EOFError on Ctrl-D (the quiz ends), KeyboardInterrupt on Ctrl-C."""
    started = time.monotonic() if started is None else started
    console.print(prompt, style="dim", markup=False)
    if limit is not None and live_capable():
        return _live(limit, started)
    lines: list[str] = []
    while True:
        left = f"[{clock(max(0.0, limit - (time.monotonic() - started)))}] " if limit is not None else ""
        line = input(left + ("> " if not lines else "  "))
        if not line.strip():
            return "\n".join(lines).strip()
        lines.append(line)


def _view(lines: list[str], current: str, limit: float, started: float) -> Group:
    body = [*lines, current]
    shown = body[-SHOWN_LINES:]
    text = Text()
    if len(body) > SHOWN_LINES:
        text.append(f"（前面还有 {len(body) - SHOWN_LINES} 行）\n", style="dim")
    for i, line in enumerate(shown):
        first = i == 0 and len(body) <= SHOWN_LINES
        text.append(("> " if first else "  ") + line)
        text.append("▏\n" if i == len(shown) - 1 else "\n", style="bold")
    return Group(remaining(limit, started), text)


def _keys(fd: int, decoder: codecs.IncrementalDecoder, wait: float) -> str:
    import select  # noqa: PLC0415

    ready, _, _ = select.select([fd], [], [], wait)
    return decoder.decode(os.read(fd, 1024)) if ready else ""


def _edit(chars: str, lines: list[str], current: str) -> tuple[str, bool]:
    """Apply typed characters; (current line, finished)."""
    escape = False
    for ch in chars:
        if escape:  # an arrow or function key: ESC [ ... final letter
            escape = not (ch.isalpha() or ch == "~")
            continue
        if ch == "\x1b":
            escape = True
        elif ch == "\x04":
            raise EOFError
        elif ch in "\r\n":
            if not current.strip():
                return current, True
            lines.append(current)
            current = ""
        elif ch in "\x7f\x08":
            current = current[:-1]
        elif ch == "\x15":  # Ctrl-U: clear the line
            current = ""
        elif ch >= " ":
            current += ch
    return current, False


def _live(limit: float, started: float) -> str:
    import termios  # noqa: PLC0415
    import tty  # noqa: PLC0415

    from rich.live import Live  # noqa: PLC0415

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines: list[str] = []
    current = ""
    try:
        tty.setcbreak(fd)
        with Live(_view(lines, current, limit, started), console=console, auto_refresh=False, transient=True) as live:
            done = False
            while not done:
                current, done = _edit(_keys(fd, decoder, 0.25), lines, current)
                live.update(_view(lines, current, limit, started), refresh=True)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    answer = "\n".join(lines).strip()
    for i, line in enumerate(answer.splitlines() or [""]):
        console.print(("> " if i == 0 else "  ") + line, markup=False, highlight=False)
    return answer
