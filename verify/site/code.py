"""The code a claim shows: its decorated function's source, and that source highlighted.

Both are read on every build for every claim a page shows, so both are remembered: the spans of a
file's decorated functions come from the scan cache (no second ``ast.parse``), the file's lines are
kept while its stamp (with ctime) holds, and highlighted HTML is kept on disk by content
(``<cache>/render/code/``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from verify import settings as settings_mod
from verify.storage import scan
from verify.storage.fs import DiskMemo, Memo, stamp, text_memo

_SPANS: Memo[tuple[list[str], tuple[tuple[int, int, int], ...]]] = Memo()


def function_source(path: Path, line: int) -> str:
    """The decorated function whose decorators span ``line`` (as the scan cache located it).

    The file's lines and spans are remembered while its stamp (with ctime) holds: a page shows many
    claims of one file. This only picks the code to show; the hash that decides a verdict is not here.
    """
    settings = settings_mod.for_site()

    def read() -> tuple[list[str], tuple[tuple[int, int, int], ...]]:
        return path.read_text(encoding="utf-8").splitlines(), scan.facts(settings).get(path).functions

    lines, spans = _SPANS.get(path, stamp([path]), read)
    for first, def_line, last in spans:
        if first <= line <= def_line:
            return "\n".join(lines[first - 1:last])
    return ""


def _memo() -> DiskMemo[str]:
    return text_memo(settings_mod.for_site().render_dir / "code", ".html")


def _key(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:20]


def highlight(code: str) -> str:
    """Pygments HTML for a claim's code, cached on disk by content: a warm build skips the lexer."""

    def lex() -> str:
        from pygments import highlight  # noqa: PLC0415
        from pygments.formatters import HtmlFormatter  # noqa: PLC0415
        from pygments.lexers import PythonLexer  # noqa: PLC0415

        body = highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))
        return f'<div class="highlight"><pre><code>{body}</code></pre></div>'

    return _memo().get(_key(code), lex)


def keep_highlight(code: str) -> None:
    """This build shows ``code`` (its claim's HTML came from the render cache): keep its highlighting."""
    _memo().keep(_key(code))
