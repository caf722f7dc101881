"""One reading of a docs page: front matter, H1, H2 sections and ``claim`` fences.

Built on markdown-it-py (CommonMark plus tables) with one extra block rule for MkDocs admonitions
(``!!! note "title"``, ``???``/``???+`` details): their 4-space-indented bodies are parsed as blocks,
as Python-Markdown does on the site, so a fence inside a callout is a fence and not indented code.
Fences inside code or HTML comments are not fences. markdown-it and PyYAML are imported on first
use: the terminal quiz's start path loads neither.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.errors import ClaimError

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.token import Token

# Python-Markdown's admonition and pymdownx.details openers, as one whole line
_ADMONITION = re.compile(r'(?:!!!|\?\?\?\+?) ?[\w-]+(?: +[\w-]+)*(?: +".*")? *')
_ATTR_LIST = re.compile(r"\s*\{[^}]*\}\s*$")
_NEWLINES = re.compile(r"\r\n?")


class PageError(ClaimError):
    """A page that cannot be read; the message names the file.

    Attributes:
        path: the page.
        problem: what is wrong, without the file name, e.g. ``front matter: not valid YAML (...)``.
    """

    def __init__(self, path: Path, problem: str):
        super().__init__(f"{Path(path).as_posix()}: {problem}")
        self.path = Path(path)
        self.problem = problem


@dataclass(frozen=True)
class Page:
    """A page read once.

    Attributes:
        path: the file.
        front_matter: the YAML text between the ``---`` lines, or None when the page has none.
        meta: the front matter loaded with ``yaml.safe_load``; None when the page has none.
        body: the text after the front matter (newlines normalised to ``\\n``).
        h1: the first top-level ``# `` heading's text, or None.
        sections: H2 title (attr_list suffix such as ``{#x}`` removed) -> raw Markdown of the section.
        order: the H2 titles in page order.
        claims: (claim id, 1-based line of the opening fence in the file) for every ``claim`` fence.
    """

    path: Path
    front_matter: str | None
    meta: Any
    body: str
    h1: str | None
    sections: dict[str, str]
    order: list[str]
    claims: list[tuple[str, int]]


def parse(path: Path) -> Page:
    """Read and parse one page. Raises PageError when its front matter is not valid YAML."""
    return parse_text(Path(path).read_text(encoding="utf-8"), Path(path))


def parse_text(text: str, path: Path) -> Page:
    """Parse a page's text; ``path`` only names it. Raises PageError on front matter that is not YAML."""
    front, body, offset = _split(_NEWLINES.sub("\n", text))
    meta: Any = _load_yaml(front, path) if front is not None else None
    tokens = _tokens(body)
    h1, sections, order = _sections(tokens, body.split("\n"))
    claims = [(cid, offset + start + 1) for cid, start, _end in _claims(tokens)]
    return Page(Path(path), front, meta, body, h1, sections, order, claims)


def front_matter(path: Path) -> tuple[str | None, Any]:
    """Only the front matter of a page: (YAML text or None, loaded value), without tokenising the body.

    The terminal quiz shows its first question from this alone. Raises PageError on invalid YAML.
    """
    front, _body, _offset = _split(_NEWLINES.sub("\n", Path(path).read_text(encoding="utf-8")))
    return front, _load_yaml(front, Path(path)) if front is not None else None


def _load_yaml(front: str, path: Path) -> Any:
    import yaml  # noqa: PLC0415  (not on the terminal's start path)

    try:
        # libyaml's safe loader when PyYAML was built with it: the same documents, about 9x faster
        return yaml.load(front, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except yaml.YAMLError as exc:
        raise PageError(path, f"front matter: not valid YAML ({exc})".replace("\n", " ")) from exc


def strip_claims(markdown_text: str) -> tuple[str, list[str]]:
    """Remove ``claim`` fences; return the text and their claim ids (:func:`replace_claims` with no sentence)."""
    return replace_claims(markdown_text, lambda _cid: None)


def replace_claims(markdown_text: str, sentence: Callable[[str], str | None]) -> tuple[str, list[str]]:
    """Each ``claim`` fence replaced by ``sentence(claim id)`` as a paragraph (dropped where it gives None).

    Runs of three or more newlines left behind collapse to one blank line; the text is stripped.
    """
    text = _NEWLINES.sub("\n", markdown_text)
    lines = text.split("\n")
    out: list[str] = []
    ids: list[str] = []
    pos = 0
    for cid, start, end in _claims(_tokens(text)):
        out += lines[pos:start]
        said = sentence(cid) if cid else None
        if said:
            out += ["", said, ""]
        if cid:
            ids.append(cid)
        pos = end
    out += lines[pos:]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip(), ids


# --- internals ----------------------------------------------------------------------------

def _split(text: str) -> tuple[str | None, str, int]:
    """(front matter YAML or None, body, index of the body's first line in ``text``)."""
    lines = text.split("\n")
    if not text.startswith("---") or lines[0].strip() != "---":
        return None, text, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            front = "".join(line + "\n" for line in lines[1:i])
            return front, "\n".join(lines[i + 1:]), i + 1
    return None, text, 0


def _claims(tokens: list[Token]) -> list[tuple[str, int, int]]:
    """(claim id or '' when the fence is empty, first line, line after the fence) per ``claim`` fence."""
    out: list[tuple[str, int, int]] = []
    for tok in tokens:
        if tok.type == "fence" and tok.info.split()[:1] == ["claim"] and tok.map:
            words = tok.content.split()
            out.append((words[0] if words else "", tok.map[0], tok.map[1]))
    return out


def _sections(tokens: list[Token], lines: list[str]) -> tuple[str | None, dict[str, str], list[str]]:
    """(H1 text, {H2 title: text}, H2 titles in order) from top-level headings only.

    A section runs from its heading to the next top-level H2 or the first H1; sections with the
    same title are joined.
    """
    h1: str | None = None
    marks: list[tuple[str | None, int, int]] = []  # (H2 title, or None for the H1; heading lines)
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.level != 0 or not tok.map:
            continue
        title = tokens[i + 1].content.strip()
        if tok.tag == "h1" and h1 is None:
            h1 = title
            marks.append((None, tok.map[0], tok.map[1]))
        elif tok.tag == "h2":
            marks.append((_ATTR_LIST.sub("", title), tok.map[0], tok.map[1]))
    parts: dict[str, list[str]] = {}
    order: list[str] = []
    for k, (h2, _start, end) in enumerate(marks):
        if h2 is None:
            continue
        stop = marks[k + 1][1] if k + 1 < len(marks) else len(lines)
        order.append(h2)
        parts.setdefault(h2, []).extend(lines[end:stop])
    return h1, {t: "\n".join(v).strip() for t, v in parts.items()}, order


def _tokens(text: str, inline: bool = False) -> list[Token]:
    return _parser(inline).parse(text)


@lru_cache(maxsize=2)
def _parser(inline: bool = False) -> MarkdownIt:
    from markdown_it import MarkdownIt  # noqa: PLC0415  (not on the terminal's start path)

    md = MarkdownIt("commonmark").enable("table")
    if not inline:
        md.core.ruler.disable("inline")  # block structure is all most readers need; inline text stays raw
    md.block.ruler.before("fence", "admonition", _admonition, {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


def _admonition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Block rule: an admonition line and the lines indented 4 more under it, parsed as nested blocks."""
    if state.is_code_block(start):
        return False
    line = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    if not _ADMONITION.fullmatch(line):
        return False
    if silent:
        return True
    indent = state.blkIndent + 4
    last = start + 1
    for nxt in range(start + 1, end):
        if state.isEmpty(nxt):
            continue
        if state.sCount[nxt] < indent:
            break
        last = nxt + 1
    saved = state.lineMax, state.blkIndent
    opener = state.push("admonition_open", "div", 1)
    opener.map = [start, last]
    opener.info = line
    state.lineMax, state.blkIndent = last, indent
    state.md.block.tokenize(state, start + 1, last)
    state.push("admonition_close", "div", -1)
    state.lineMax, state.blkIndent = saved
    state.line = last
    return True
