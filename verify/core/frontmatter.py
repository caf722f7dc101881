"""A page's front matter alone: what the terminal quiz needs to start, without the page parser.

:mod:`verify.core.pages` reads whole pages and re-exports these; the quiz's outline imports only
this module (its start is measured: tests/test_bench_quiz.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from verify.errors import ClaimError

NEWLINES = re.compile(r"\r\n?")


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


def front_matter(path: Path) -> tuple[str | None, Any]:
    """Only the front matter of a page: (YAML text or None, loaded value), without tokenising the body.

    The terminal quiz shows its first question from this alone. Raises PageError on invalid YAML.
    """
    front, _body, _offset = split(NEWLINES.sub("\n", Path(path).read_text(encoding="utf-8")))
    return front, load_yaml(front, Path(path)) if front is not None else None


def load_yaml(front: str, path: Path) -> Any:
    import yaml  # noqa: PLC0415  (not on the terminal's start path)

    try:
        # libyaml's safe loader when PyYAML was built with it: the same documents, about 9x faster
        return yaml.load(front, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except yaml.YAMLError as exc:
        raise PageError(path, f"front matter: not valid YAML ({exc})".replace("\n", " ")) from exc


def split(text: str) -> tuple[str | None, str, int]:
    """(front matter YAML or None, body, index of the body's first line in ``text``)."""
    lines = text.split("\n")
    if not text.startswith("---") or lines[0].strip() != "---":
        return None, text, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            front = "".join(line + "\n" for line in lines[1:i])
            return front, "\n".join(lines[i + 1:]), i + 1
    return None, text, 0
