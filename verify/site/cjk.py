"""Markdown extension: a line break between two CJK characters is no space.

Browsers render the newline of a source line break as a space, which reads as a stray gap inside
a Chinese sentence. After inline processing, this removes a newline (and the indentation after
it) whose neighbours are both CJK characters or CJK punctuation, outside ``pre`` and ``code``.
Used as ``- verify.site.cjk`` in ``markdown_extensions``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from typing import Any

from markdown import Extension
from markdown.treeprocessors import Treeprocessor

_CJK = r"\u2e80-\u9fff\u3000-\u303f\uf900-\ufaff\uff00-\uffef"
_BREAK = re.compile(rf"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])")
_SKIP = {"pre", "code", "script", "style"}


def join(text: str) -> str:
    return _BREAK.sub("", text)


class _Join(Treeprocessor):
    def run(self, root: etree.Element) -> None:
        self._walk(root)

    def _walk(self, el: etree.Element) -> None:
        if el.tag in _SKIP:
            return
        if el.text:
            el.text = join(el.text)
        for child in el:
            self._walk(child)
            if child.tail:
                child.tail = join(child.tail)


class CJKExtension(Extension):
    def extendMarkdown(self, md: Any) -> None:  # noqa: N802  (Python-Markdown's name)
        md.treeprocessors.register(_Join(md), "verify_cjk", 5)


def makeExtension(**kwargs: Any) -> CJKExtension:  # noqa: N802
    return CJKExtension(**kwargs)
