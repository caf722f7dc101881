"""What a page's prose says about evidence: the claims it shows, its bound values, its typed numbers.

The page read once by :mod:`verify.core.pages` gives:

- ``claim`` fences, and those hidden inside an HTML comment (an error: a reader never sees them);
- bound values (```#!v claim.id key```) and marked inputs (```#!in 64 MiB```);
- hand-typed measurements: a number with a unit in prose, outside code, tables, HTML, bound
  values and the page's title (the question, e.g. "训练一个 7B 模型要多少显存"). A question page must have none (``verify.site.session`` fails the strict build on them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from verify.core import binding
from verify.core.pages import parse_text


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
    # the front matter is skipped, not loaded: a page whose YAML is broken still shows its claims
    doc = parse_text(text, Path("page.md"), load_meta=False).doc
    out = Prose(claims=[(f.word, f.line) for f in doc.by_kind.get("claim", ()) if f.word],
                hidden_claims=list(doc.hidden_claims), inputs=len(doc.refs_of("in")))
    for ref in doc.refs_of("v"):
        try:
            out.refs.append((binding.parse_inline(ref.source), ref.line))
        except binding.BindError as exc:
            out.bad_refs.append((str(exc), ref.line))
    lines = doc.lines
    for run in doc.texts:
        if run.table or run.heading == 1:  # the question itself (the H1, equal to the title) states no measured fact
            continue
        for found in binding.measurements(run.text):
            out.measurements.append((found, _line_of(found, lines, run.start, run.end, doc.offset)))
    return out


def _line_of(needle: str, lines: list[str], start: int, end: int, offset: int) -> int:
    for i in range(start, max(end, start + 1)):
        if i < len(lines) and needle in lines[i]:
            return offset + i + 1
    return offset + start + 1


def shown(pages: dict[str, Prose]) -> dict[str, list[str]]:
    """claim id -> pages (in sorted order) whose ``claim`` fences show it; a page showing it twice is listed twice."""
    out: dict[str, list[str]] = {}
    for rel, page in sorted(pages.items()):
        for cid, _line in page.claims:
            out.setdefault(cid, []).append(rel)
    return out
