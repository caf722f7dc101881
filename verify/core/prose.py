"""What a page's prose says about evidence: the claims it shows, its bound values, its typed numbers.

One pass over a page (markdown-it with inline parsing, the admonition rule of
:mod:`verify.core.pages`) finds:

- ``claim`` fences, and those hidden inside an HTML comment (an error: a reader never sees them);
- bound values (```#!v claim.id key```) and marked inputs (```#!in 64 MiB```);
- hand-typed measurements: a number with a unit in prose, outside code, tables, HTML, bound
  values and the page's title (the question, e.g. "训练一个 7B 模型要多少显存"). A question page must have none (``verify.site.session`` fails the strict build on them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from verify.core import binding
from verify.core.pages import _NEWLINES, _claims, _split, _tokens

if TYPE_CHECKING:
    from markdown_it.token import Token

BOUND = "#!v "
INPUT = "#!in "
_COMMENT_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*claim\b[^\n]*\n\s*([^\s`~]*)", re.M)


@dataclass
class Prose:
    """One page's evidence-related facts; lines are 1-based lines of the file."""

    claims: list[tuple[str, int]] = field(default_factory=list)
    hidden_claims: list[tuple[str, int]] = field(default_factory=list)
    refs: list[tuple[binding.Ref, int]] = field(default_factory=list)
    bad_refs: list[tuple[str, int]] = field(default_factory=list)  # (problem, line)
    inputs: int = 0
    measurements: list[tuple[str, int]] = field(default_factory=list)  # (text, line)


def read(path: Path) -> Prose:
    return read_text(Path(path).read_text(encoding="utf-8"))


def read_text(text: str) -> Prose:
    _front, body, offset = _split(_NEWLINES.sub("\n", text))
    lines = body.split("\n")
    tokens = _tokens(body, inline=True)
    out = Prose(claims=[(cid, offset + start + 1) for cid, start, _end in _claims(tokens) if cid])
    in_table = 0
    in_title = False  # the question itself (the H1, equal to the title) states no measured fact
    for tok in tokens:
        if tok.type == "heading_open":
            in_title = tok.tag == "h1"
        elif tok.type == "heading_close":
            in_title = False
        if tok.type == "table_open":
            in_table += 1
        elif tok.type == "table_close":
            in_table -= 1
        elif tok.type == "html_block" and tok.map:
            for m in _COMMENT_FENCE.finditer(tok.content):
                if "<!--" in tok.content[:m.start()]:
                    out.hidden_claims.append((m.group(2), offset + tok.map[0] + tok.content[:m.start()].count("\n") + 1))
        elif tok.type == "inline" and tok.map:
            _inline(tok, lines, offset, out, measure=not in_table and not in_title)
    return out


def _line_of(needle: str, lines: list[str], start: int, end: int, offset: int) -> int:
    for i in range(start, max(end, start + 1)):
        if i < len(lines) and needle in lines[i]:
            return offset + i + 1
    return offset + start + 1


def _inline(tok: Token, lines: list[str], offset: int, out: Prose, measure: bool) -> None:
    start, end = tok.map or (0, 0)
    for child in tok.children or []:
        if child.type == "code_inline" and child.content.startswith(BOUND):
            line = _line_of(child.content[len(BOUND):].split()[0] if child.content[len(BOUND):].split() else BOUND,
                            lines, start, end, offset)
            try:
                out.refs.append((binding.parse_inline(child.content[len(BOUND):]), line))
            except binding.BindError as exc:
                out.bad_refs.append((str(exc), line))
        elif child.type == "code_inline" and child.content.startswith(INPUT):
            out.inputs += 1
        elif child.type == "text" and measure:
            for found in binding.measurements(child.content):
                out.measurements.append((found, _line_of(found, lines, start, end, offset)))


def shown(pages: dict[str, Prose]) -> dict[str, list[str]]:
    """claim id -> pages (in sorted order) whose ``claim`` fences show it; a page showing it twice is listed twice."""
    out: dict[str, list[str]] = {}
    for rel, page in sorted(pages.items()):
        for cid, _line in page.claims:
            out.setdefault(cid, []).append(rel)
    return out
