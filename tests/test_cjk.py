"""A line break inside a Chinese sentence renders as nothing, not as a stray space."""

from __future__ import annotations

import markdown

from verify.site.cjk import CJKExtension


def _html(text: str) -> str:
    return markdown.markdown(text, extensions=[CJKExtension()])


def test_a_break_between_chinese_characters_is_removed():
    assert _html("张量是一块存储\n加上元数据。") == "<p>张量是一块存储加上元数据。</p>"
    assert _html("逗号之后，\n接着写") == "<p>逗号之后，接着写</p>"


def test_a_break_next_to_latin_text_or_inside_code_stays():
    assert _html("一块 storage\n和 stride") == "<p>一块 storage\n和 stride</p>"
    assert _html("    中文\n    中文\n") == "<pre><code>中文\n中文\n</code></pre>"
    assert "<code>中\n文</code>" in _html("`中\n文`")
