"""The code a claim shows: its decorated function's source, and that source highlighted.

Both are read on every build for every claim a page shows, so both are remembered: the spans of a
file's decorated functions come from the scan cache (no second ``ast.parse``), the file's lines are
kept while its stamp (with ctime) holds, and highlighted HTML is kept on disk by content.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from verify import settings as settings_mod
from verify.storage import scan
from verify.storage.fs import Memo, atomic_write_text, stamp

_SPANS: Memo[tuple[list[str], list[list[int]]]] = Memo()


def function_source(path: Path, line: int) -> str:
    """The decorated function whose decorators span ``line`` (as the scan cache located it).

    The file's lines and spans are remembered while its stamp (with ctime) holds: a page shows many
    claims of one file. This only picks the code to show; the hash that decides a verdict is not here.
    """
    settings = settings_mod.for_site()

    def read() -> tuple[list[str], list[list[int]]]:
        return path.read_text(encoding="utf-8").splitlines(), scan.facts(settings).get(path).get("functions", [])

    lines, spans = _SPANS.get(path, stamp([path]), read)
    for first, def_line, last in spans:
        if first <= line <= def_line:
            return "\n".join(lines[first - 1:last])
    return ""


def highlight(code: str) -> str:
    """Pygments HTML for a claim's code, cached on disk by content: a warm build skips the lexer."""
    key = hashlib.sha256(code.encode()).hexdigest()[:20]
    path = settings_mod.for_site().cache_dir / "render" / f"{key}.html"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    from pygments import highlight  # noqa: PLC0415
    from pygments.formatters import HtmlFormatter  # noqa: PLC0415
    from pygments.lexers import PythonLexer  # noqa: PLC0415

    body = highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))
    html = f'<div class="highlight"><pre><code>{body}</code></pre></div>'
    atomic_write_text(path, html)
    return html


