"""The one Markdown reader for pages: front matter, sections, claim fences (verify.core.pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verify.errors import ClaimError
from verify.core.pages import PageError, parse, parse_text, strip_claims
from verify.core.prose import shown
from verify.storage.pages import read_all

ROOT = Path(__file__).resolve().parent.parent

PAGE = """---
id: demo
title: 演示
tags: [a, b]
---

# 演示问题

引言。

## 普通回答 {#ordinary}

一句话。

## 更好的回答

正文。

```claim
demo.first
```

```python
# 不是标题
## 也不是
```

~~~~markdown
```claim
demo.in-code
```
~~~~

<!--
```claim
demo.hidden
```
-->

!!! warning "常见说法不准确"
    纠正一句。

    ```claim
    demo.in-admonition
    ```

    ## 提示里的标题

## 证据

```evidence
demo
```
"""


def test_front_matter_is_read_once_into_meta():
    page = parse_text(PAGE, Path("docs/questions/demo.md"))
    assert page.meta == {"id": "demo", "title": "演示", "tags": ["a", "b"]}
    assert page.front_matter == "id: demo\ntitle: 演示\ntags: [a, b]\n"
    assert page.body.startswith("\n# 演示问题\n")
    assert page.path == Path("docs/questions/demo.md")


def test_page_without_front_matter():
    page = parse_text("# 标题\n\n---\n\n正文\n", Path("index.md"))
    assert page.meta is None and page.front_matter is None
    assert page.h1 == "标题" and page.body == "# 标题\n\n---\n\n正文\n"


def test_h1_and_sections_in_order_with_attr_list_removed():
    page = parse_text(PAGE, Path("demo.md"))
    assert page.h1 == "演示问题"
    assert page.order == ["普通回答", "更好的回答", "证据"]
    assert page.sections["普通回答"] == "一句话。"
    assert page.sections["证据"] == "```evidence\ndemo\n```"


def test_headings_inside_code_fences_and_admonitions_are_not_sections():
    page = parse_text(PAGE, Path("demo.md"))
    better = page.sections["更好的回答"]
    assert "# 不是标题\n## 也不是" in better
    assert "    ## 提示里的标题" in better
    assert "也不是" not in page.order and "提示里的标题" not in page.order


def test_claims_in_order_with_file_lines():
    page = parse_text(PAGE, Path("demo.md"))
    lines = PAGE.split("\n")
    assert [cid for cid, _ in page.claims] == ["demo.first", "demo.in-admonition"]
    for cid, line in page.claims:
        assert lines[line - 1].strip() == "```claim" and lines[line].strip() == cid


def test_claim_fence_inside_html_comment_does_not_count():
    page = parse_text("<!--\n```claim\nx.hidden\n```\n-->\n\n```claim\nx.shown\n```\n", Path("p.md"))
    assert [cid for cid, _ in page.claims] == ["x.shown"]


def test_claim_fence_inside_admonition_counts():
    text = '!!! note "细节"\n    ```claim\n    x.tight\n    ```\n\n???+ tip\n    文字\n\n    ```claim\n    x.details\n    ```\n'
    assert [cid for cid, _ in parse_text(text, Path("p.md")).claims] == ["x.tight", "x.details"]
    nested = "!!! note\n    !!! warning\n        ```claim\n        x.nested\n        ```\n"
    assert [cid for cid, _ in parse_text(nested, Path("p.md")).claims] == ["x.nested"]


def test_indented_code_is_not_a_fence():
    text = "段落。\n\n    ```claim\n    x.code\n    ```\n"
    assert parse_text(text, Path("p.md")).claims == []


def test_strip_claims_removes_fences_and_collapses_blank_lines():
    text = ("第一段。\n\n```claim\na.one\n```\n\n\n第二段。\n\n!!! note\n    说明。\n\n    ```claim\n    a.two\n    ```\n\n"
            "```python\nx = 1\n```\n")
    cleaned, ids = strip_claims(text)
    assert ids == ["a.one", "a.two"]
    assert cleaned == "第一段。\n\n第二段。\n\n!!! note\n    说明。\n\n```python\nx = 1\n```"
    assert strip_claims("  \n无论断\n\n") == ("无论断", [])


def test_strip_claims_keeps_fences_in_code_and_comments():
    text = "<!--\n```claim\nc.hidden\n```\n-->\n\n````md\n```claim\nc.code\n```\n````"
    assert strip_claims(text) == (text, [])


def test_broken_yaml_front_matter_names_the_file(tmp_path):
    bad = tmp_path / "docs" / "questions" / "broken.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nid: broken\ntags: [a, b\n---\n\n# 标题\n", encoding="utf-8")
    with pytest.raises(PageError) as info:
        parse(bad)
    assert isinstance(info.value, ClaimError)
    assert str(info.value).startswith(f"{bad.as_posix()}: front matter: not valid YAML (")
    assert info.value.problem.startswith("front matter: not valid YAML (") and "\n" not in info.value.problem
    assert info.value.path == bad


def test_unclosed_front_matter_is_body():
    page = parse_text("---\nid: x\n\n# 标题\n", Path("p.md"))
    assert page.front_matter is None and page.h1 == "标题"


def test_shown_claims_lists_pages_relative_to_docs(tmp_path):
    docs = tmp_path / "docs"
    (docs / "questions").mkdir(parents=True)
    (docs / "index.md").write_text("```claim\nq.a\n```\n<!--\n```claim\nq.hidden\n```\n-->\n", encoding="utf-8")
    # front matter is skipped, not loaded: a page with broken YAML still shows its claims here
    (docs / "questions" / "one.md").write_text("---\nbad: [\n---\n\n```claim\nq.a\n```\n\n```claim\nq.b\n```\n",
                                               encoding="utf-8")
    (docs / "notes.txt").write_text("```claim\nq.txt\n```\n", encoding="utf-8")
    assert shown(read_all(docs)) == {"q.a": ["index.md", "questions/one.md"], "q.b": ["questions/one.md"]}


def test_real_pages_show_every_claim_their_page_lists():
    docs = ROOT / "docs"
    pages = sorted((docs / "questions").glob("*.md"))
    if not pages:
        pytest.skip("no question pages yet")
    shown_on = shown(read_all(docs))
    for path in pages:
        page = parse(path)
        assert isinstance(page.meta, dict) and page.h1 and page.claims, path
        rel = path.relative_to(docs).as_posix()
        assert all(rel in shown_on[cid] for cid, _ in page.claims)


def test_the_question_in_the_title_is_not_a_measurement():
    from verify.core import prose  # noqa: PLC0415

    facts = prose.read_text("---\nid: q\n---\n\n# 训练一个 7B 模型要多少显存？\n\n一个 7B 模型。\n")
    assert [m for m, _line in facts.measurements] == ["7B"]  # the body's, not the title's
