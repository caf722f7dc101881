"""The bar every question page meets before a candidate rehearses from it (read from the sources).

- 更好的回答 is the spoken answer alone (``### 面试时这样说``, at most 300 characters as read), then
  考察点, then the long answer in ``## 逐点展开``;
- at most two "常见说法不准确" boxes, and a box narrower than its question says so in its title;
- a claim that may go unobserved on a CPU build (it needs a GPU) says in its docstring what it
  measures, which is read instead of its sentence with holes;
- no statement shows a boolean as True or False: it is written ``{key:?是|否}``.

The built pages (no blank, no True/False) are checked in ``test_site_real``.
"""

from __future__ import annotations

import re

import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from verify.core import binding
from verify.core.pages import parse, read
from verify.storage.scan import load_registry

PAGES = sorted((SETTINGS.root / "docs" / "questions").glob("*.md"))
SPOKEN_MAX = 300
BOXES_MAX = 2
BOX = "常见说法不准确"


def spoken_text(page) -> str:
    """The 面试时这样说 answer as a reader reads it: bound values as a few digits, markup removed.

    The limit counts the prose: a ```#!see claim.id``` reference is a small tag chip beside the sentence,
    not words a candidate says, so it counts nothing."""
    section = page.sections["更好的回答"]
    doc = read(section)
    heads = [h for h in doc.headings if h.level >= 3]
    assert heads and heads[0].title == "面试时这样说", f"{page.path.name}: 更好的回答 must open with ### 面试时这样说"
    lines = doc.lines[heads[0].end:heads[1].start if len(heads) > 1 else len(doc.lines)]
    text = "\n".join(lines)
    text = re.sub(r"\s?`#!see [^`]+`", "", text)
    text = re.sub(r"`#!v [^`]+`", "000", text)
    text = re.sub(r"`#!in ([^`]+)`", r"\1", text)
    text = re.sub(r"[`*_>#\[\]]|\(http[^)]*\)", "", text)
    return re.sub(r"\s+", "", text)


def spoken_length(page) -> int:
    return len(spoken_text(page))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_the_better_answer_is_a_spoken_answer_then_key_points_then_the_long_one(path):
    page = parse(path)
    assert page.order.index("更好的回答") < page.order.index("考察点") < page.order.index("逐点展开"), page.order
    n = spoken_length(page)
    assert 80 <= n <= SPOKEN_MAX, f"{path.name}: 面试时这样说 has {n} characters (at most {SPOKEN_MAX})"
    others = [h.title for h in read(page.sections["更好的回答"]).headings if h.level >= 2][1:]
    assert others == [], f"{path.name}: 更好的回答 holds only the spoken answer; move {others} to ## 逐点展开"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_at_most_two_correction_boxes(path):
    boxes = [a for a in parse(path).doc.admonitions if (a.title or "").startswith(BOX)]
    assert len(boxes) <= BOXES_MAX, f"{path.name}: {len(boxes)} '{BOX}' boxes (keep the strongest {BOXES_MAX})"


def test_the_spoken_length_counts_what_a_reader_reads(tmp_path):
    """The counter itself: values count as their digits, markup not at all, and a long answer fails."""
    page = tmp_path / "p.md"
    page.write_text("---\nid: p\n---\n# T\n\n## 普通回答\n\nx\n\n## 更好的回答\n\n### 面试时这样说\n\n"
                    "**缓存 K、V**，`#!v kv.a bytes:bytes` 每层 `#!see kv.a`；输入 `#!in 64 MiB`。\n\n## 考察点\n\n- a\n",
                    encoding="utf-8")
    assert spoken_text(parse(page)) == "缓存K、V，000每层；输入64MiB。"
    page.write_text(page.read_text(encoding="utf-8").replace("每层", "每层" * 200), encoding="utf-8")
    assert spoken_length(parse(page)) > SPOKEN_MAX


def _registry():
    return load_registry(SETTINGS)


def test_a_claim_that_needs_a_gpu_says_what_it_measures():
    missing = [c.id for c in _registry().claims.values() if "cuda" in c.needs and not c.pending]
    assert missing == [], f"write a docstring (what it measures, where it runs) for {missing}"


def test_a_gpu_claims_docstring_numbers_are_in_its_code():
    """The line read before a GPU has run it names its inputs; each number in it is one the code uses."""
    reg = _registry()
    wrong = []
    for c in reg.claims.values():
        if not c.pending:
            continue
        source = (SETTINGS.root / c.snippet).read_text(encoding="utf-8")
        for number in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", c.pending):
            if not re.search(rf"(?<![\w.]){re.escape(number)}(?![\w.])", source.replace(c.pending, "")):
                wrong.append(f"{c.id}: {number}")
    assert wrong == [], wrong


def test_no_statement_shows_a_boolean_as_true_or_false():
    """A boolean reads as the words ``{key:?yes|no}`` give it; found from the claims' expectations."""
    bare = []
    for c in _registry().claims.values():
        for key, spec in binding.keys(c.statement):
            if isinstance(c.expect.get(key), bool) and not spec.startswith("?"):
                bare.append(f"{c.id}: {{{key}}}")
    assert bare == [], bare


def test_a_boolean_reads_as_its_words():
    assert binding.format_value(True, "?抛出|不抛出") == "抛出"
    assert binding.format_value(False, "?抛出|不抛出") == "不抛出"
    with pytest.raises(binding.BindError, match="for a boolean"):
        binding.format_value(3, "?是|否")
    with pytest.raises(binding.BindError, match="yes-words|no-words"):
        binding.format_value(True, "?是")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_every_page_links_to_practising_it(path):
    """练这道题 beside the sources: the quiz opens on this question (#q=<id>)."""
    line = next(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("**来源**"))
    assert f"[练这道题](../quiz.md#q={path.stem})" in line, line
