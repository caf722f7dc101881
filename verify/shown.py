"""Untrusted text made safe to print: control characters escaped, rich markup neutralised.

An id, a message or a name read from a bundle, a progress file or an export can carry escape
codes (clear the screen, move the cursor, print a fake 「已导入」) or rich markup (``[link=…]`` that
hides the real id). Everything the terminal prints that came from a file goes through :func:`safe`
(plain output) or :func:`markup_safe` (inside rich markup).
"""

from __future__ import annotations

import re
import unicodedata

#: C0 and C1 controls (tab and newline included: one shown value is one line), DEL, and the
#: bidirectional overrides and isolates that reorder what a terminal shows.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object, limit: int = 200) -> str:
    """``text`` as one printable line: controls as ``\\xNN``/``\\uNNNN``, cut to ``limit`` characters."""
    shown = _CONTROL.sub(_escape, str(text))
    shown = "".join(ch if unicodedata.category(ch) != "Cs" else "\\ufffd" for ch in shown)  # lone surrogates
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def markup_safe(text: object, limit: int = 200) -> str:
    """:func:`safe` with rich's markup escaped, for text put inside a rich markup string."""
    from rich.markup import escape

    return escape(safe(text, limit))
