"""``#!see claim.id`` (issue 35 item 2): a sentence a candidate repeats names the scope of the claim behind it.

In 面试时这样说 and 考察点 a reference renders the claim's scope tag (the words beside the claim's own
sentence) as a small link to that sentence, titled with it; a bound value there carries the tag too,
unless a reference to the same claim follows it in the same sentence. An unknown id fails the strict build.
"""

from __future__ import annotations

import html as html_mod
import re

import pytest

from tests._project import GOOD_SNIPPET, MKDOCS_YML, mkdocs_build, question_page, tiny_project

pytestmark = pytest.mark.slow

YML = MKDOCS_YML.replace(
    "        - {name: in, class: vf-input, format: !!python/name:verify.build.input_inline }\n",
    "        - {name: in, class: vf-input, format: !!python/name:verify.build.input_inline }\n"
    "        - {name: see, class: vf-see, format: !!python/name:verify.build.see_inline }\n")

SNIPPET = GOOD_SNIPPET + '''

@claim("tiny.scoped", question=Q, statement="广播后第一维的 stride 是 {stride0}。", expect={"stride0": 0})
def _(ctx):
    """范围：二维张量"""
    return {"stride0": torch.ones(1, 3).expand(4, 3).stride()[0]}


@claim("other.one", question="other", statement="一维张量的 stride 是 1。", expect={"stride": [1]})
def _(ctx):
    return {"stride": list(torch.ones(3).stride())}
'''

BETTER = """\
### 面试时这样说

“expand 不拷贝，新维度的 stride 为 0 `#!see tiny.stride`。报错的是转置后的 view `#!see tiny.error`。”

""" + "".join(f"```claim\n{cid}\n```\n\n" for cid in ("tiny.stride", "tiny.error", "tiny.scoped"))

KEY_POINTS = """\
## 考察点

- 第一维的 stride 是 `#!v tiny.scoped stride0`，别的维度照旧；
- 第一维的 stride 是 `#!v tiny.scoped stride0`，见 `#!see tiny.scoped`；另一句 `#!v tiny.scoped stride0`。

## 逐点展开

正文里的值 `#!v tiny.scoped stride0` 不带标签。
"""

OTHER = question_page("### 面试时这样说\n\n引用另一页的证据 `#!see tiny.stride`。\n\n```claim\nother.one\n```\n", qid="other")


def _page(better: str = BETTER) -> str:
    return question_page(better).replace("## 考察点\n\nstride。\n", KEY_POINTS)


def _site(tmp_path, page: str) -> tuple:
    root = tiny_project(tmp_path / "p", snippet=SNIPPET, page=page,
                       extra={"mkdocs.yml": YML, "docs/questions/other.md": OTHER})
    return root, mkdocs_build(root)


def _after(html: str, level: int, title: str) -> str:
    """The page's HTML after its heading ``title`` (the table of contents names it first)."""
    return re.split(rf"<h{level}\b[^>]*>{title}", html, maxsplit=1)[1]


def _sees(html: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)), text=m.group(2))
            for m in re.finditer(r'<a class="vf-see"([^>]*)>([^<]*)</a>', html)]


def test_a_reference_links_to_the_sentence_with_its_tag_and_title(tmp_path):
    root, out = _site(tmp_path, _page())
    assert out.returncode == 0, out.stderr
    html = (root / "site/questions/tiny/index.html").read_text(encoding="utf-8")
    spoken = _after(html, 3, "面试时这样说").split('<div class="vf-claim"', 1)[0]
    sees = _sees(spoken)
    assert [(s["data-claim"], s["href"], s["text"]) for s in sees] == [
        ("tiny.stride", "#claim-tiny.stride", "CPU"), ("tiny.error", "#claim-tiny.error", "CPU")]
    assert html_mod.unescape(sees[0]["title"]) == "expand 的 stride 为 0。"  # the claim's sentence
    # the tag is the one beside the claim's own sentence
    own = re.search(r'id="claim-tiny.scoped".*?<span class="vf-scope"[^>]*>([^<]*)</span>', html, re.S)
    assert own and own.group(1) == "CPU · 二维张量"
    other = (root / "site/questions/other/index.html").read_text(encoding="utf-8")
    assert [(s["href"], s["text"]) for s in _sees(other)] == [("../tiny/#claim-tiny.stride", "CPU")]


def test_a_value_in_the_key_points_shows_its_tag_once_per_sentence(tmp_path):
    root, out = _site(tmp_path, _page())
    assert out.returncode == 0, out.stderr
    html = (root / "site/questions/tiny/index.html").read_text(encoding="utf-8")
    points = _after(html, 2, "考察点").split("<h2", 1)[0]
    items = re.findall(r"<li>(.*?)</li>", points, re.S)
    first, second = ([(s["data-claim"], s["text"]) for s in _sees(item)] for item in items)
    assert first == [("tiny.scoped", "CPU · 二维张量")]  # added after the value
    # the second bullet cites the claim in its first sentence (one tag there); its second sentence gets one
    assert second == [("tiny.scoped", "CPU · 二维张量")] * 2
    assert re.search(r'data-claim="tiny.scoped"[^>]*>0</span>，见 <a class="vf-see"', items[1])
    body = _after(html, 2, "逐点展开")
    assert 'data-claim="tiny.scoped"' in body and not _sees(body.split('<div class="vf-claim"', 1)[0])


def test_an_unknown_reference_fails_the_strict_build(tmp_path):
    root, out = _site(tmp_path, _page(BETTER.replace("#!see tiny.error", "#!see tiny.nowhere")))
    assert out.returncode != 0
    assert "`#!see tiny.nowhere`" in out.stderr and "no snippet declares" in out.stderr
