"""The one reading of a docs page: front matter, sections, fences by kind, inline references, admonitions.

Built on markdown-it-py (CommonMark plus tables, inline parsing on) with one extra block rule for
MkDocs admonitions (``!!! note "title"``, ``???``/``???+`` details): their 4-space-indented bodies
are parsed as blocks, as Python-Markdown does on the site, so a fence inside a callout is a fence
and not indented code. Fences inside code or HTML comments are not fences; a ```#!v`` inside a
fence is not a reference. markdown-it and PyYAML are imported on first use: the terminal quiz's
start path loads neither.

Everything that reads a page's Markdown reads it here:

- :func:`parse` / :func:`parse_text`: a page (:class:`Page`): its front matter, H1, H2 sections
  and its :class:`Doc`;
- :func:`read`: any Markdown text (a section, an answer) as a :class:`Doc`: its fences
  (:class:`Fence`, grouped by kind in :attr:`Doc.by_kind`), inline references
  (:class:`InlineRef`: ```#!v claim.id key```, ```#!in 64 MiB```), admonitions, headings, and the
  prose text runs in which hand-typed numbers are looked for;
- :func:`fence_options`: a fence's ``key: value`` option lines and its name line, the one reader
  of them (the ``bench`` and ``quizbank`` fences on the site, the bench figure off it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.core.frontmatter import NEWLINES as _NEWLINES  # noqa: F401  (re-exported for readers of pages)
from verify.core.frontmatter import PageError, front_matter, load_yaml as _load_yaml, split as _split  # noqa: F401

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.token import Token

# Python-Markdown's admonition and pymdownx.details openers, as one whole line
_ADMONITION = re.compile(r'(?P<marker>!!!|\?\?\?\+?) ?(?P<types>[\w-]+(?: +[\w-]+)*)(?: +"(?P<title>.*)")? *')
_ATTR_LIST = re.compile(r"\s*\{[^}]*\}\s*$")
_ATTR_ID = re.compile(r"(?:^|\s)(?:#|id=)([^\s}]+)")
_COMMENT_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*claim\b[^\n]*\n\s*([^\s`~]*)", re.M)
# the inline references a page may hold, by the kind of inline code they are
REF_KINDS = {"#!v ": "v", "#!in ": "in"}


@dataclass(frozen=True)
class FenceOptions:
    """What a fence's body says in lines: ``key: value`` options, and the one line that is none.

    Attributes:
        name: the last non-empty line that is not an option (a bench group), ``""`` when none.
        options: key -> value of every ``key: value`` line; ``# …`` comments removed.
    """

    name: str = ""
    options: Mapping[str, str] = field(default_factory=dict)


def fence_options(source: str) -> FenceOptions:
    """A fence body's name line and ``key: value`` options (a later line with the same key wins)."""
    name, options = "", {}
    for line in source.strip().splitlines():
        line = line.split("#", 1)[0].strip()
        key, sep, value = line.partition(":")
        if sep:
            options[key.strip()] = value.strip()
        elif line:
            name = line
    return FenceOptions(name, options)


@dataclass(frozen=True)
class Fence:
    """A fenced code block.

    Attributes:
        kind: the first word of its info string (``claim``, ``bench``, ``python``), ``""`` when none.
        info: the whole info string.
        source: its body, the block's indentation removed.
        start: the index of its opening line in the text read (the page's body for a page).
        end: the index of the line after its closing fence.
        line: the 1-based line of its opening fence in the file.
        indent: the whitespace before its opening fence (inside an admonition: four spaces or more).
    """

    kind: str
    info: str
    source: str
    start: int
    end: int
    line: int
    indent: str = ""

    @property
    def word(self) -> str:
        """The first word of its body: a ``claim`` fence's claim id, ``""`` when the body is empty."""
        words = self.source.split()
        return words[0] if words else ""

    @cached_property
    def options(self) -> FenceOptions:
        """Its body read as option lines (:func:`fence_options`)."""
        return fence_options(self.source)


@dataclass(frozen=True)
class InlineRef:
    """An inline reference: ```#!v claim.id key[:spec] [@device]``` or ```#!in 64 MiB```.

    Attributes:
        kind: ``"v"`` (a bound value) or ``"in"`` (a marked input).
        source: the text after the marker, as written (``claim.id key``, ``64 MiB``).
        line: the 1-based line of the file where it starts.
        span: (start, end) offsets of the whole code span, backticks included, in the text read
            (empty where its source could not be found: never seen in a page).
    """

    kind: str
    source: str
    line: int
    span: tuple[int, int]


@dataclass(frozen=True)
class Admonition:
    """An admonition (``!!! warning "title"``) or details block (``???``, ``???+``).

    Attributes:
        marker: ``!!!``, ``???`` or ``???+``.
        types: its type and classes (``("note", "inline")``).
        title: the quoted title (``""`` for ``""``), or None when the opener has none.
        start: the index of its opener line in the text read; ``end``: the line after its last indented line.
        line: the 1-based line of its opener in the file.
        top: not nested in another block (an admonition, a list, a quote).
    """

    marker: str
    types: tuple[str, ...]
    title: str | None
    start: int
    end: int
    line: int
    top: bool


@dataclass(frozen=True)
class Heading:
    """A heading, at any depth (inside admonitions too), as Python-Markdown's ``toc`` reads it.

    Attributes:
        level: 1 for ``#``, 2 for ``##``, ...
        title: its Markdown text with an attr_list suffix (``{#x}``) removed.
        text: its plain text (markup removed, code kept): what ``toc`` makes its id from.
        id: the id an attr_list suffix gives it (``{#x}``), or None.
        start, end: its lines in the text read (a setext heading has two); ``line``: its 1-based line in the file.
        top: not nested in another block.
    """

    level: int
    title: str
    text: str
    id: str | None
    start: int
    end: int
    line: int
    top: bool


@dataclass(frozen=True)
class TextRun:
    """A run of prose text (no code, no HTML, no inline reference) and where it stands.

    Attributes:
        text: the text.
        start, end: the block's lines in the text read.
        table: inside a table. heading: the level of the heading it is part of, 0 when none.
    """

    text: str
    start: int
    end: int
    table: bool
    heading: int


@dataclass(frozen=True)
class Doc:
    """Markdown text read once (see the module's docstring); lines count from ``offset`` in the file.

    Attributes:
        text: the text read (newlines normalised to ``\\n``).
        offset: the index in the file of its first line (the front matter's length for a page body).
        fences: every fence, in order (``by_kind`` groups them).
        refs: every inline reference, in order.
        admonitions: every admonition and details block, in order (nested ones after their parent).
        headings: every heading, in order.
        texts: every prose text run, in order.
        hidden_claims: (claim id, file line) of each ``claim`` fence inside an HTML comment.
    """

    text: str
    offset: int = 0
    fences: tuple[Fence, ...] = ()
    refs: tuple[InlineRef, ...] = ()
    admonitions: tuple[Admonition, ...] = ()
    headings: tuple[Heading, ...] = ()
    texts: tuple[TextRun, ...] = ()
    hidden_claims: tuple[tuple[str, int], ...] = ()

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def by_kind(self) -> dict[str, tuple[Fence, ...]]:
        """Kind -> its fences in order (``claim``, ``bench``, ``python``, ...)."""
        out: dict[str, list[Fence]] = {}
        for f in self.fences:
            out.setdefault(f.kind, []).append(f)
        return {k: tuple(v) for k, v in out.items()}

    def refs_of(self, kind: str) -> tuple[InlineRef, ...]:
        """The inline references of one kind (``"v"`` or ``"in"``), in order."""
        return tuple(r for r in self.refs if r.kind == kind)


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
        doc: the body read (:class:`Doc`): fences, inline references, admonitions, headings.
    """

    path: Path
    front_matter: str | None
    meta: Any
    body: str
    h1: str | None
    sections: dict[str, str]
    order: list[str]
    claims: list[tuple[str, int]]
    doc: Doc = field(repr=False)


def parse(path: Path) -> Page:
    """Read and parse one page. Raises PageError when its front matter is not valid YAML."""
    return parse_text(Path(path).read_text(encoding="utf-8"), Path(path))


def parse_text(text: str, path: Path, *, load_meta: bool = True) -> Page:
    """Parse a page's text; ``path`` only names it. Raises PageError on front matter that is not YAML,
    unless ``load_meta`` is False (``meta`` is then None: a reader of the body only)."""
    front, body, offset = _split(_NEWLINES.sub("\n", text))
    meta: Any = _load_yaml(front, path) if front is not None and load_meta else None
    doc = _read(body, offset)
    h1, sections, order = _sections(doc)
    claims = [(f.word, f.line) for f in doc.by_kind.get("claim", ())]
    return Page(Path(path), front, meta, body, h1, sections, order, claims, doc)


def read(markdown_text: str) -> Doc:
    """Markdown text without front matter (a section, an answer) read as a :class:`Doc`; lines from 1."""
    return _read(_NEWLINES.sub("\n", markdown_text), 0)


def splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, new text) edit applied; edits do not overlap."""
    out: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: e[:2]):
        out += [text[pos:start], new]
        pos = end
    return "".join(out) + text[pos:]


def replace_fences(doc: Doc, fences: list[Fence], said: Callable[[Fence], str | None]) -> list[tuple[int, int, str]]:
    """Edits (for :func:`splice`) putting ``said(fence)`` as a paragraph where each fence stands, at its
    indentation (inside an admonition it stays inside); a fence ``said`` gives None for is dropped."""
    starts = _line_starts(doc.text)
    edits = []
    for f in fences:
        new = said(f)
        last = f.end >= len(doc.lines)
        edits.append((starts[f.start], len(doc.text) if last else starts[f.end],
                      ("\n".join([f.indent.rstrip(), f.indent + new, f.indent.rstrip()]) if new else "")
                      + ("" if last or not new else "\n")))
    return edits


def strip_claims(markdown_text: str) -> tuple[str, list[str]]:
    """Remove ``claim`` fences; return the text and their claim ids (:func:`replace_claims` with no sentence)."""
    return replace_claims(markdown_text, lambda _cid: None)


def replace_claims(markdown_text: str, sentence: Callable[[str], str | None]) -> tuple[str, list[str]]:
    """Each ``claim`` fence replaced by ``sentence(claim id)`` as a paragraph (dropped where it gives None).

    Runs of three or more newlines left behind collapse to one blank line; the text is stripped.
    """
    doc = read(markdown_text)
    claims = list(doc.by_kind.get("claim", ()))
    text = splice(doc.text, replace_fences(doc, claims, lambda f: sentence(f.word) if f.word else None))
    return re.sub(r"\n{3,}", "\n\n", text).strip(), [f.word for f in claims if f.word]


# --- internals ----------------------------------------------------------------------------

def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


@lru_cache(maxsize=256)
def _read(text: str, offset: int) -> Doc:
    """One markdown-it pass over ``text`` (``\\n`` newlines), made into a :class:`Doc`."""
    tokens = _parser().parse(text)
    lines = text.split("\n")
    starts = _line_starts(text)
    fences: list[Fence] = []
    refs: list[InlineRef] = []
    admonitions: list[Admonition] = []
    headings: list[Heading] = []
    texts: list[TextRun] = []
    hidden: list[tuple[str, int]] = []
    table, heading = 0, 0
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            heading = int(tok.tag[1:])
            if tok.map:
                title = tokens[i + 1].content.strip()
                attr = _ATTR_LIST.search(title)
                hid = _ATTR_ID.search(attr.group(0).strip(" {}:")) if attr else None
                headings.append(Heading(heading, _ATTR_LIST.sub("", title), _plain(tokens[i + 1]),
                                        hid.group(1) if hid else None, tok.map[0], tok.map[1], offset + tok.map[0] + 1,
                                        tok.level == 0))
        elif tok.type == "heading_close":
            heading = 0
        elif tok.type == "table_open":
            table += 1
        elif tok.type == "table_close":
            table -= 1
        elif tok.type == "fence" and tok.map:
            start, end = tok.map
            fences.append(Fence((tok.info.split() or [""])[0], tok.info, tok.content, start, end,
                                offset + start + 1, re.match(r"\s*", lines[start]).group(0)))  # type: ignore[union-attr]
        elif tok.type == "admonition_open" and tok.map:
            m = _ADMONITION.fullmatch(tok.info)  # the line the block rule opened it on
            if m is None:
                continue
            admonitions.append(Admonition(m["marker"], tuple(m["types"].split()), m["title"], tok.map[0],
                                          tok.map[1], offset + tok.map[0] + 1, tok.level == 0))
        elif tok.type == "html_block" and tok.map:
            for m in _COMMENT_FENCE.finditer(tok.content):
                if "<!--" in tok.content[:m.start()]:
                    hidden.append((m.group(2), offset + tok.map[0] + tok.content[:m.start()].count("\n") + 1))
        elif tok.type == "inline" and tok.map:
            block = (starts[tok.map[0]], starts[tok.map[1]] if tok.map[1] < len(starts) else len(text))
            _inline(tok, text, block, offset, bool(table), heading, refs, texts)
    return Doc(text, offset, tuple(fences), tuple(refs), tuple(admonitions), tuple(headings), tuple(texts),
               tuple(hidden))


def _inline(tok: Token, text: str, block: tuple[int, int], offset: int, table: bool, heading: int,
            refs: list[InlineRef], texts: list[TextRun]) -> None:
    """The references and text runs of one inline token, whose source is ``text[block[0]:block[1]]``."""
    start, end = tok.map or (0, 0)
    cursor = block[0]
    for child in tok.children or []:
        if child.type == "text":
            texts.append(TextRun(child.content, start, end, table, heading))
            continue
        if child.type != "code_inline":
            continue
        marker = next((m for m in REF_KINDS if child.content.startswith(m)), None)
        if marker is None:
            continue
        # where the span stands in the source: its backticks around its words (a line break may stand for a space)
        words = r"\s+".join(re.escape(w) for w in child.content.split(" ") if w)
        tick = re.escape(child.markup)
        found = re.compile(rf"(?<!`){tick} ?{words} ?{tick}(?!`)").search(text, cursor, block[1])
        span = (found.start(), found.end()) if found else (cursor, cursor)
        cursor = span[1]
        refs.append(InlineRef(REF_KINDS[marker], child.content[len(marker):], offset + text.count("\n", 0, span[0]) + 1,
                              span))


def _plain(inline: Token) -> str:
    """A heading's text as ``toc`` takes it from the rendered heading: tags dropped, code kept, spaces collapsed."""
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join(_ATTR_LIST.sub("", "".join(parts)).split())


def _sections(doc: Doc) -> tuple[str | None, dict[str, str], list[str]]:
    """(H1 text, {H2 title: text}, H2 titles in order) from top-level headings only.

    A section runs from its heading to the next top-level H2 or the first H1; sections with the
    same title are joined.
    """
    h1: str | None = None
    marks: list[tuple[str | None, int, int]] = []  # (H2 title, or None for the H1; heading lines)
    for h in doc.headings:
        if not h.top:
            continue
        if h.level == 1 and h1 is None:
            h1 = h.title
            marks.append((None, h.start, h.end))
        elif h.level == 2:
            marks.append((h.title, h.start, h.end))
    lines = doc.lines
    parts: dict[str, list[str]] = {}
    order: list[str] = []
    for k, (h2, _start, end) in enumerate(marks):
        if h2 is None:
            continue
        stop = marks[k + 1][1] if k + 1 < len(marks) else len(lines)
        order.append(h2)
        parts.setdefault(h2, []).extend(lines[end:stop])
    return h1, {t: "\n".join(v).strip() for t, v in parts.items()}, order


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # noqa: PLC0415  (not on the terminal's start path)

    md = MarkdownIt("commonmark").enable("table")
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
