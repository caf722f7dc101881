"""Type an answer under a live countdown (rich ``Live``), in a real terminal; plain lines elsewhere.

In a terminal the keys are read one by one (cbreak mode: Ctrl-C still interrupts) and the answer
so far is drawn under a clock that ticks every quarter second, turning red with 「超时 +m:ss」 when
the time is up. An empty line ends the answer, as before; Ctrl-D ends the quiz. Where there is no
terminal (a pipe, ``TERM=dumb``, Windows) the answer is read line by line and each new line's
prompt shows the time left.
"""

from __future__ import annotations

import codecs
import os
import sys
import time
from rich.console import Console, Group
from rich.text import Text

SHOWN_LINES = 12  # the live view shows the last lines of a long answer; all of it is printed at the end


def clock(seconds: float) -> str:
    s = int(abs(seconds))
    return f"{s // 60}:{s % 60:02d}"


def remaining(limit: float, started: float) -> Text:
    left = limit - (time.monotonic() - started)
    if left >= 0:
        return Text(f"剩余 {clock(left)}", style="bold cyan")
    return Text(f"超时 +{clock(-left)}", style="bold red")


def live_capable(console: Console) -> bool:
    return os.name == "posix" and sys.stdin.isatty() and console.is_terminal and not console.is_dumb_terminal


def read_answer(console: Console, prompt: str, limit: float | None = None, started: float | None = None) -> str:
    """Lines until an empty line; EOFError on Ctrl-D (the quiz ends), KeyboardInterrupt on Ctrl-C."""
    started = time.monotonic() if started is None else started
    console.print(prompt, style="dim", markup=False)
    if limit is not None and live_capable(console):
        return _live(console, limit, started)
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


def _live(console: Console, limit: float, started: float) -> str:
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
