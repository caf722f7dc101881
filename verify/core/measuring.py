"""The measuring code of a Python file: what keys a record, without what only judges or explains it.

A record is keyed by the code that produced its observation, not by how it is judged or shown:
editing a claim's sentence, its expectation, a comment or a docstring keeps every cached and
every recorded record (a GPU's above all), because records are judged again on every load.

- In a snippet file, a claim's measuring text is the file without comments and docstrings, with
  the other claims' functions left out and its own ``@claim(...)`` reduced to its id and kind (the
  kind decides how the runner runs it: a perf claim runs alone; a ``measured`` fact runs as a
  ``fact`` does, so it keys as one). ``statement``, ``expect``,
  ``raises``, ``question``, ``needs`` and ``timeout`` are not part of it.
- A module a snippet or a benchmark imports counts whole, without comments and docstrings, but
  for the claim API itself (:data:`DECLARING`), which counts by its functions and classes: its
  module-level names (the kinds, the table of loaded claims) are read by the registry, not run.

Only token and line positions are used, never ``ast.unparse`` or ``ast.dump``, whose output
changes between Python versions: a GPU machine on another Python computes the same key.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import tokenize

Span = tuple[int, int]  # (start, end) character offsets into the text
DECLARING = frozenset({"verify/claim.py"})
#: a kind keyed as the kind it runs as: whether a fact's value may differ between machines is how it is
#: judged (``verify.core.room``), not what it runs
RUNS_AS = {"measured": "fact"}


def _line_starts(text: str) -> list[int]:
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


class _Text:
    """A source text with AST positions (UTF-8 byte columns) turned into character offsets."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = _line_starts(text)

    def offset(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode()[:col_bytes].decode(errors="replace"))

    def node(self, node: ast.AST) -> Span:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def lines_of(self, first: int, last: int) -> Span:
        return self.starts[first - 1], self.starts[min(last, len(self.lines))]


@functools.lru_cache(maxsize=4)  # one file's module and claim texts ask for the same tree's and text's, in turn
def _docstrings(tree: ast.Module) -> tuple[ast.stmt, ...]:
    found: list[ast.stmt] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.append(first)
    return tuple(found)


@functools.lru_cache(maxsize=4)
def _comments(text: str) -> tuple[Span, ...]:
    t = _Text(text)
    spans = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                spans.append((t.offset(tok.start[0], 0) + tok.start[1], t.offset(tok.end[0], 0) + tok.end[1]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return tuple(spans)


def _apply(text: str, cuts: list[tuple[int, int, str]]) -> str:
    """Replace each (start, end) by its text; a span inside an earlier one is already gone."""
    out, pos = [], 0
    for start, end, new in sorted(cuts, key=lambda c: (c[0], -c[1])):
        if start < pos:
            continue
        out += [text[pos:start], new]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _squeeze(text: str) -> str:
    """Trailing spaces and blank lines carry no meaning once comments are gone."""
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip()) + "\n"


def _strip(text: str, tree: ast.Module, cuts: list[tuple[int, int, str]]) -> str:
    t = _Text(text)
    cuts = cuts + [(*t.node(d), "") for d in _docstrings(tree)] + [(s, e, "") for s, e in _comments(text)]
    return _squeeze(_apply(text, cuts))


def claim_call(node: ast.expr) -> ast.Call | None:
    """The ``claim(...)`` call of a decorator, else ``None``."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return node if name == "claim" else None


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return min([d.lineno for d in node.decorator_list] + [node.lineno])


def module_text(rel: str, text: str, tree: ast.Module) -> str:
    """An imported module: all of it, less comments and docstrings (the claim API: :func:`code_text`)."""
    return code_text(text, tree) if rel in DECLARING else _strip(text, tree, [])


def code_text(text: str, tree: ast.Module) -> str:
    """A module's top-level functions and classes, less comments and docstrings."""
    t = _Text(text)
    keep = [t.lines_of(_first_line(n), n.end_lineno or n.lineno) for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    cuts, pos = [], 0
    for start, end in keep:
        cuts.append((pos, start, ""))
        pos = end
    cuts.append((pos, len(text), ""))
    return _strip(text, tree, [c for c in cuts if c[0] < c[1]])


def claim_texts(text: str, tree: ast.Module, kinds: dict[str, str]) -> dict[str, str]:
    """Claim id -> the measuring text of that claim in a snippet file (``kinds``: id -> kind)."""
    t = _Text(text)
    functions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[tuple[str, ast.Call]]]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            calls = []
            for deco in node.decorator_list:
                call = claim_call(deco)
                if call is not None and call.args and isinstance(call.args[0], ast.Constant):
                    calls.append((str(call.args[0].value), call))
            if calls:
                functions.append((node, calls))
    out: dict[str, str] = {}
    for cid, kind in kinds.items():
        kind = RUNS_AS.get(kind, kind)
        cuts: list[tuple[int, int, str]] = []
        for node, calls in functions:
            if cid not in {c for c, _ in calls}:
                cuts.append((*t.lines_of(_first_line(node), node.end_lineno or node.lineno), ""))
                continue
            for other, call in calls:
                if other == cid:
                    cuts.append((*t.node(call), f"claim({json.dumps(cid)}, kind={json.dumps(kind)})"))
                else:
                    start, end = t.node(call)
                    cuts.append((start - 1, end, ""))  # the other decorator, with its '@'
        out[cid] = _strip(text, tree, cuts)
    return out
