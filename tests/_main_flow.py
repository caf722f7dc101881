"""How long a question page's main flow is: what a reader reads without opening a fold.

Counted: the page's text after the front matter and before 证据 (prose, tables, code), less every
collapsed fold (``??? note …`` and its indented body), plus the statement of every claim it shows
outside a fold (a claim fence renders its sentence). A ```#!see claim.id``` reference counts nothing:
it renders as a small scope chip (「CPU」) beside the sentence, not prose (the 300-character spoken
answer is measured the same way, ``tests/test_page_bar.py``).
``python tests/_main_flow.py [PAGE…]`` prints each page's count, longest first.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

LIMIT = 12_000  # characters: a study page, not a reference (issue 35)

_FOLD = re.compile(r"^\?\?\?\+? ")
_CLAIM = re.compile(r"```claim\n(.*?)```", re.S)
_SEE = re.compile(r" ?`#!see [^`\n]+`")


def main_flow(text: str) -> tuple[str, list[str]]:
    """The page's main-flow text (claim fences removed) and the ids of the claims it shows there."""
    body = text.split("\n---\n", 1)[1] if text.startswith("---") else text
    body = _SEE.sub("", body.split("\n## 证据")[0])
    kept: list[str] = []
    folded = False
    for line in body.splitlines():
        if _FOLD.match(line):
            folded = True
            continue
        if folded and (line.startswith("    ") or not line.strip()):
            continue
        folded = False
        kept.append(line)
    flow = "\n".join(kept)
    ids = [cid for block in _CLAIM.findall(flow) for cid in block.split()]
    return _CLAIM.sub("", flow), ids


def length(path: Path, statements: dict[str, str]) -> int:
    flow, ids = main_flow(path.read_text(encoding="utf-8"))
    return len(flow) + sum(len(statements.get(cid, "")) for cid in ids)


def _statements(root: Path) -> dict[str, str]:
    from verify.settings import Settings  # noqa: PLC0415
    from verify.storage import scan  # noqa: PLC0415

    return {cid: spec.statement for cid, spec in scan.load_registry(Settings.for_root(root)).claims.items()}


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    pages = [Path(p) for p in sys.argv[1:]] or sorted((root / "docs" / "questions").glob("*.md"))
    said = _statements(root)
    for n, page in sorted(((length(p, said), p) for p in pages), reverse=True):
        print(f"{n:>7,}  {'over ' if n > LIMIT else '     '}{page.name}")
