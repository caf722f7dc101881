"""The one Markdown reader for pages (verify.core.pages): front matter, sections, fences by kind, inline
references, admonitions; and the site's mkdocs.yml as the project reads it (verify.settings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verify.errors import ClaimError
from verify.core.pages import FenceOptions, PageError, fence_options, parse, parse_text, read, strip_claims
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


# --- the one reading: fences by kind, inline references, admonitions, headings --------------------

READ = """---
id: read
title: 读一遍
---

# 读一遍

## 普通回答

值是 `#!v a.one timings.x`，输入是 `#!in 64 MiB`；代码 `x = 1` 不是引用。

```bench
expand-vs-repeat   # the group
x: size
plot: time
```

```python
s = "`#!v not.a ref`"
```

| 列 | 值 |
|---|---|
| 表里 | `#!v a.two n` |

跨行的 `#!v a.three
key` 也算。

!!! note "细节"
    提示里 `#!v a.four k:.1f @cuda`。

    ```claim
    a.inside
    ```

    ???+ tip
        嵌套。

## 证据 {#evidence}

```claim
a.last
```
"""


def _file_line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def test_fences_grouped_by_kind_with_file_lines_and_options():
    doc = parse_text(READ, Path("p.md")).doc
    assert [f.kind for f in doc.fences] == ["bench", "python", "claim", "claim"]
    assert set(doc.by_kind) == {"bench", "python", "claim"}
    assert [f.word for f in doc.by_kind["claim"]] == ["a.inside", "a.last"]
    inside, last = doc.by_kind["claim"]
    assert inside.indent == "    " and inside.source == "a.inside\n" and last.indent == ""
    for f in doc.fences:
        assert READ.split("\n")[f.line - 1].strip().startswith("```" + f.kind)
        assert doc.lines[f.start].strip().startswith("```") and doc.lines[f.end - 1].strip() == "```"
    bench = doc.by_kind["bench"][0]
    assert bench.options == FenceOptions("expand-vs-repeat", {"x": "size", "plot": "time"})


def test_fence_options_are_read_by_one_function():
    assert fence_options("compare: here here-1thread  # two runs\nthreshold: 0.2\n") == \
        FenceOptions("", {"compare": "here here-1thread", "threshold": "0.2"})
    assert fence_options("docs: C:/site/docs\n") == FenceOptions("", {"docs": "C:/site/docs"})
    assert fence_options("\n  group-a\n# a comment\ngroup-b\nx: 1\nx: 2\n") == FenceOptions("group-b", {"x": "2"})
    assert fence_options("") == FenceOptions()


def test_inline_references_with_file_lines_and_spans():
    doc = parse_text(READ, Path("p.md")).doc
    got = [(r.kind, r.source, r.line) for r in doc.refs]
    assert got == [("v", "a.one timings.x", _file_line(READ, "a.one")), ("in", "64 MiB", _file_line(READ, "64 MiB")),
                   ("v", "a.two n", _file_line(READ, "a.two")), ("v", "a.three key", _file_line(READ, "a.three")),
                   ("v", "a.four k:.1f @cuda", _file_line(READ, "a.four"))]
    assert [doc.text[slice(*r.span)] for r in doc.refs][:3] == ["`#!v a.one timings.x`", "`#!in 64 MiB`", "`#!v a.two n`"]
    assert doc.text[slice(*doc.refs[3].span)] == "`#!v a.three\nkey`"  # a line break inside the span
    assert [r.source for r in doc.refs_of("in")] == ["64 MiB"]


def test_admonitions_nested_and_details():
    doc = parse_text(READ, Path("p.md")).doc
    note, tip = doc.admonitions
    assert (note.marker, note.types, note.title, note.top) == ("!!!", ("note",), "细节", True)
    assert (tip.marker, tip.types, tip.title, tip.top) == ("???+", ("tip",), None, False)
    assert note.line == _file_line(READ, '!!! note "细节"') and note.start < tip.start < tip.end <= note.end
    assert doc.lines[note.end - 1].strip() == "嵌套。"
    several = read('!!! note inline end ""\n    一句。\n')
    assert several.admonitions[0].types == ("note", "inline", "end") and several.admonitions[0].title == ""


def test_headings_with_their_toc_text_and_ids():
    doc = parse_text(READ, Path("p.md")).doc
    assert [(h.level, h.title, h.id, h.top) for h in doc.headings] == [
        (1, "读一遍", None, True), (2, "普通回答", None, True), (2, "证据", "evidence", True)]
    code = read("## `view` 和 **reshape** {: #vr .x}\n")
    assert (code.headings[0].text, code.headings[0].id) == ("view 和 reshape", "vr")


def test_a_section_reads_like_a_page_body():
    page = parse_text(READ, Path("p.md"))
    section = read(page.sections["普通回答"])
    assert [r.source for r in section.refs] == ["a.one timings.x", "64 MiB", "a.two n", "a.three key", "a.four k:.1f @cuda"]
    assert section.refs[0].line == 1 and [f.kind for f in section.fences] == ["bench", "python", "claim"]


# --- the site's configuration: mkdocs.yml with Python names ---------------------------------------

SITE_YML = """\
site_name: x
site_url: !ENV [VERIFY_TEST_NO_SUCH_VARIABLE, "https://example.org/site"]
markdown_extensions:
  - admonition
  - toc:
      permalink: true
      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}
  - pymdownx.inlinehilite:
      custom_inline:
        - {name: v, class: vf-val, format: !!python/name:verify.build.value_inline }
  - pymdownx.superfences:
      custom_fences:
        - name: claim
          class: claim
          format: !!python/name:no_such_module.fence
"""


def test_the_extension_list_is_read_from_mkdocs_yml_with_python_names(tmp_path):
    import sys  # noqa: PLC0415

    from verify.settings import PythonName, site_config  # noqa: PLC0415

    (tmp_path / "mkdocs.yml").write_text(SITE_YML, encoding="utf-8")
    config = site_config(tmp_path)
    assert config is site_config(tmp_path)  # read once while the file is unchanged
    assert config.site_url == "https://example.org/site/"
    assert config.extensions == ("admonition", "toc", "pymdownx.inlinehilite", "pymdownx.superfences")
    fence = config.extension_configs["pymdownx.superfences"]["custom_fences"][0]
    assert fence == {"name": "claim", "class": "claim", "format": PythonName("no_such_module.fence")}
    assert config.extension_configs["toc"]["slugify"] == PythonName("pymdownx.slugs.slugify", True, (), (("case", "lower"),))
    assert "no_such_module" not in sys.modules  # names are only names until the Markdown is built
    (tmp_path / "mkdocs.yml").write_text(SITE_YML.replace("no_such_module.fence", "verify.build.claim_fence"),
                                         encoding="utf-8")
    names, configs = site_config(tmp_path).markdown()
    assert names[:3] == ["toc", "tables", "fenced_code"] and names[3:] == ["admonition", "pymdownx.inlinehilite",
                                                                           "pymdownx.superfences"]
    from verify import build  # noqa: PLC0415

    assert configs["pymdownx.superfences"]["custom_fences"][0]["format"] is build.claim_fence
    assert configs["toc"]["slugify"]("A B", "-") == "a-b"


def test_a_site_without_mkdocs_yml_or_extensions(tmp_path):
    from verify.settings import SettingsError, site_config  # noqa: PLC0415

    assert site_config(tmp_path).extensions == () and site_config(tmp_path).site_url is None
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nsite_url: null\n", encoding="utf-8")
    assert site_config(tmp_path).extensions == () and site_config(tmp_path).site_url is None
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nmarkdown_extensions:\n  - {a: 1, b: 2}\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="one-key mapping"):
        site_config(tmp_path)


def test_the_real_mkdocs_yml_is_what_the_site_declares():
    from verify.settings import site_config  # noqa: PLC0415

    config = site_config(ROOT)
    assert {"admonition", "pymdownx.details", "pymdownx.superfences", "verify.site.cjk"} <= set(config.extensions)
    kinds = [f["name"] for f in config.extension_configs["pymdownx.superfences"]["custom_fences"]]
    assert {"claim", "bench", "quizbank"} <= set(kinds)
