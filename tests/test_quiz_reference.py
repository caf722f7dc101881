"""The answers away from the site: no fences, no placeholders, figures as a line, links that lead somewhere."""

from __future__ import annotations

import re

from verify.quiz.reference import NOT_OBSERVED, UNSEEN_VALUE, clean, plain_text
from verify.settings import site_config

SECTION = """\
张量 = 存储 + 元数据。下面带标记的句子都来自真正执行过的代码，点开句子能看到观测值。

“expand 不拷贝 `#!see expand.stride-zero`，新维度的 stride 为 0。”

```claim
expand.stride-zero
```

!!! note "测量的细节"
    把 expand 排在 repeat 之后，本机测得 `#!v expand.constant-time timings.expand_after_repeat`，单独是 `#!v expand.constant-time timings.expand_alone`，输入是 `#!in 64 MiB`。

    ```claim
    expand.cuda-no-allocation
    ```

同一对操作的基准：

```bench
expand-vs-repeat
x: size
```

```bench
compare: here here-1thread
```

![两条曲线](plot.svg) 另见 [图融合](graph-fusion.md#证据) 和 [外站](https://pytorch.org/)。

```python
x = torch.ones(3)  # code stays code
```

```evidence
repeat-vs-expand
```
"""

SENTENCES = {"expand.stride-zero": "`x.expand(4, 3)` 的 stride 是 (0, 1)。", "expand.cuda-no-allocation": None}
VALUES = {"expand.constant-time timings.expand_after_repeat": "10.5 µs"}
PLACEHOLDER = re.compile(r"#!v|#!in|#!see|```(?:claim|bench|evidence)|\{[a-z_.]+(?::[^}]*)?\}|(?<!—)—(?!—)|\.\.\.|…")


def test_site_only_markup_is_written_out():
    text, ids = clean(SECTION, SENTENCES, VALUES, page_url="https://x.org/questions/repeat-vs-expand/",
                      site_base="https://x.org/")
    assert ids == ["expand.stride-zero", "expand.cuda-no-allocation"]
    assert "`x.expand(4, 3)` 的 stride 是 (0, 1)。" in text
    assert NOT_OBSERVED in text  # a GPU claim on a CPU build: a note, never "—"
    assert "本机测得 10.5 µs，单独是 " + UNSEEN_VALUE in text and "输入是 64 MiB" in text
    assert "图：基准 expand-vs-repeat（表格与曲线[见网页](https://x.org/questions/repeat-vs-expand/)）" in text
    assert "图：基准对比 here 与 here-1thread" in text
    assert "图：两条曲线（[见网页](https://x.org/questions/repeat-vs-expand/)）" in text
    assert "[图融合](https://x.org/questions/graph-fusion/#证据)" in text and "[外站](https://pytorch.org/)" in text
    assert "点开" not in text and "张量 = 存储 + 元数据。" in text
    assert "“expand 不拷贝，新维度的 stride 为 0。”" in text  # a reference to a claim's scope is the site's alone
    assert "x = torch.ones(3)  # code stays code" in text
    assert not PLACEHOLDER.search(text.replace("```python", "")), PLACEHOLDER.search(text)


def test_without_the_sites_address_links_are_text_and_figures_say_where():
    text, _ = clean(SECTION, SENTENCES, VALUES)
    assert "图：基准 expand-vs-repeat（表格与曲线见网页）" in text
    assert "另见 图融合 和 外站" in text and "](" not in text


def test_a_claim_without_a_sentence_is_left_out():
    text, ids = clean("前。\n\n```claim\nx.y\n```\n\n后。", {}, {})
    assert ids == ["x.y"] and text == "前。\n\n后。"


def test_admonitions_become_quotes():
    assert plain_text('!!! warning "常见说法不准确"\n    一句。\n\n正文') == "> **常见说法不准确**\n> 一句。\n>\n正文"


def test_site_url_from_mkdocs_yml(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nsite_url: https://example.org/docs\n", encoding="utf-8")
    assert site_config(tmp_path).site_url == "https://example.org/docs/"
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    assert site_config(tmp_path).site_url is None
