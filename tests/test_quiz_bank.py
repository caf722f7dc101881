"""The question bank: built from pages, validated with errors naming file and field."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from verify.quiz.bank import BankError, build_bank, write_quiz_json
from verify.quiz.claims import ClaimFacts
from verify.quiz.schema import Bank, ClaimSentence, Drill
from tests._quiz_samples import page, write_interview_page, write_sample_docs

ROOT = Path(__file__).resolve().parent.parent


def test_bank_from_sample_pages(tmp_path):
    ids = write_sample_docs(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nmarkdown_extensions: [admonition]\n", encoding="utf-8")
    bank = build_bank(tmp_path / "docs")
    assert [q.id for q in bank.questions] == ids
    q = bank.question("expand-demo")
    assert q.question == "expand 和 repeat 的区别"
    assert q.ordinary_answer == "expand 不拷贝，repeat 拷贝。"
    assert "stride 设为 0" in q.better_answer
    assert "```claim" not in q.better_answer and q.claims == ("expand-demo.demo",)
    assert q.better_answer_html and "<strong>stride 设为 0</strong>" in q.better_answer_html
    assert 'class="admonition warning"' in q.better_answer_html
    assert q.key_points[0].synonyms["不拷贝"] == ("零拷贝", "共享内存")
    assert q.follow_ups[0].q.startswith("对 expand")
    assert q.difficulty == 2 and q.tags == ("tensor", "memory")
    assert q.url == "questions/expand-demo/"
    assert q.evidence_url.startswith("questions/expand-demo/#")
    assert q.file == "docs/questions/expand-demo.md"
    assert "memory" in bank.tags


def test_the_bank_reads_back_from_its_json(tmp_path):
    write_sample_docs(tmp_path / "docs")
    bank = build_bank(tmp_path / "docs", facts=FACTS, site_url="https://example.org/")
    assert Bank.from_json(json.loads(json.dumps(bank.to_json()))) == bank
    text = build_bank(tmp_path / "docs", html=False)
    assert "better_answer_html" not in text.to_json()["questions"][0]  # only where the answers were rendered


def test_write_quiz_json(tmp_path):
    write_sample_docs(tmp_path / "docs")
    out = write_quiz_json(tmp_path / "docs", tmp_path / "site")
    assert out == tmp_path / "site" / "quiz.json"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["questions"]) == 3 and data["version"] == 4 and data["drills"] == []


def _one(tmp_path, text: str, name: str = "bad-page") -> str:
    qdir = tmp_path / "docs" / "questions"
    qdir.mkdir(parents=True, exist_ok=True)
    (qdir / f"{name}.md").write_text(text, encoding="utf-8")
    with pytest.raises(BankError) as info:
        build_bank(tmp_path / "docs")
    return str(info.value)


def _good(**kw) -> str:
    args = dict(qid="bad-page", title="标题", difficulty=2, tags="a, b",
                key_points="  - point: 一点\n    keywords: [x]\n    synonyms: {x: [y]}", fu_q="追问？", fu_a="答。")
    args.update(kw)
    return page(**args)


@pytest.mark.parametrize("mutate, field", [
    (lambda t: t.replace("difficulty: 2", "difficulty: 9"), "difficulty"),
    (lambda t: t.replace("difficulty: 2", "difficulty: true"), "difficulty"),
    (lambda t: t.replace("title: 标题\n", ""), "title"),
    (lambda t: t.replace("id: bad-page", "id: other-page"), "id"),
    (lambda t: t.replace("tags: [a, b]", "tags: []"), "tags"),
    (lambda t: t.replace("keywords: [x]", "keywords: []"), "key_points[0].keywords"),
    (lambda t: t.replace("keywords: [x]", "keywords: [x, 65504]"), "YAML read 65504 as a number: quote it"),
    (lambda t: t.replace("synonyms: {x: [y]}", "synonyms: {x: [y]}\n    contradicts: []"), "key_points[0].contradicts"),
    (lambda t: t.replace("synonyms: {x: [y]}", "synonyms: {z: [y]}"), "key_points[0].synonyms.z"),
    (lambda t: t.replace("synonyms: {x: [y]}", "synonyms: [y]"), "key_points[0].synonyms"),
    (lambda t: t.replace("    a: 答。\n", ""), "follow_ups[0]"),
    (lambda t: t.replace("  - {company: 示例公司, round: 一面}", "  - {company: 示例公司}"), "sources[0]"),
    (lambda t: t.replace("## 追问\n", ""), "section '## 追问'"),
    (lambda t: t.replace("# 标题\n", ""), "level-1 heading"),
    (lambda t: t.replace("## 普通回答\n\n一句话的普通回答。", "## 普通回答\n"), "section '## 普通回答': empty"),
    (lambda t: t.replace("tags: [a, b]", "tags: [a, b"), "not valid YAML"),
    (lambda t: t.split("---\n", 2)[2], "front matter: missing"),
])
def test_malformed_page_names_file_and_field(tmp_path, mutate, field):
    text = _good()
    bad = mutate(text)
    assert bad != text
    msg = _one(tmp_path, bad)
    assert "docs/questions/bad-page.md" in msg
    assert field in msg


def test_sections_out_of_order(tmp_path):
    text = _good()
    swapped = text.replace("## 普通回答", "## TMP").replace("## 更好的回答", "## 普通回答").replace("## TMP", "## 更好的回答")
    assert "order" in _one(tmp_path, swapped)


DEEPER_PAGE = _good(qid="deep").replace("""## 更好的回答

更好的回答，写清楚为什么。

```claim
deep.demo
```
""", """## 更好的回答

### 面试时这样说

一句话先说结论：stride 设为 0。
""").replace("## 考察点\n\n见 front matter。\n", """## 考察点

见 front matter。

## 逐点展开

### 一、为什么

长的解释在这里。

```claim
deep.demo
```
""")


def test_a_spoken_answer_then_the_long_one_after_the_key_points(tmp_path):
    """更好的回答 is the spoken answer; 逐点展开 (after 考察点) is the long one, shown folded after it."""
    assert "## 逐点展开" in DEEPER_PAGE and DEEPER_PAGE.index("## 考察点") < DEEPER_PAGE.index("## 逐点展开")
    qdir = tmp_path / "docs" / "questions"
    qdir.mkdir(parents=True)
    (qdir / "deep.md").write_text(DEEPER_PAGE, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nmarkdown_extensions: [admonition]\n", encoding="utf-8")
    q = build_bank(tmp_path / "docs").question("deep")
    assert "stride 设为 0" in q.better_answer and "长的解释" not in q.better_answer
    assert "长的解释在这里" in q.deeper_answer and q.claims == ("deep.demo",)
    assert q.deeper_answer_html and "长的解释在这里" in q.deeper_answer_html
    assert "deeper_answer_html" not in build_bank(tmp_path / "docs", html=False).question("deep").to_json()


def test_the_long_answer_stands_after_the_key_points_only(tmp_path):
    moved = DEEPER_PAGE.replace("## 逐点展开", "## TMP").replace("## 考察点", "## 逐点展开").replace("## TMP", "## 考察点")
    assert "普通回答 / 更好的回答 / 考察点 / 逐点展开 / 追问 / 证据" in _one(tmp_path, moved, "deep")


def test_all_problems_reported_at_once(tmp_path):
    qdir = tmp_path / "docs" / "questions"
    qdir.mkdir(parents=True)
    (qdir / "one.md").write_text(_good(qid="one").replace("difficulty: 2", "difficulty: 0"), encoding="utf-8")
    (qdir / "two.md").write_text(_good(qid="two").replace("title: 标题\n", ""), encoding="utf-8")
    with pytest.raises(BankError) as info:
        build_bank(tmp_path / "docs")
    assert len(info.value.problems) == 2
    assert "one.md: difficulty" in str(info.value) and "two.md: title" in str(info.value)


def test_heading_inside_code_fence_is_not_a_section(tmp_path):
    text = _good().replace("更好的回答，写清楚为什么。", "```python\n# 普通回答\n## 证据\nx = 1\n```")
    qdir = tmp_path / "docs" / "questions"
    qdir.mkdir(parents=True)
    (qdir / "bad-page.md").write_text(text, encoding="utf-8")
    q = build_bank(tmp_path / "docs").questions[0]
    assert "## 证据" in q.better_answer


def test_real_pages_pass_validation():
    pages = sorted((ROOT / "docs" / "questions").glob("*.md"))
    if not pages:
        pytest.skip("no question pages yet")
    bank = build_bank(ROOT / "docs")
    assert {q.id for q in bank.questions} == {p.stem for p in pages}
    for q in bank.questions:
        assert q.claims, f"{q.file}: the better answer shows no claim"


def test_contradicts_topic_and_site_address_reach_the_bank(tmp_path):
    write_interview_page(tmp_path / "docs")
    path = tmp_path / "docs" / "questions" / "repeat-vs-expand.md"
    path.write_text(path.read_text(encoding="utf-8").replace("difficulty: 2", "difficulty: 2\ntopic: pytorch-internals"),
                    encoding="utf-8")
    bank = build_bank(tmp_path / "docs", site_url="https://example.org/")
    q = bank.questions[0]
    assert q.topic == "pytorch-internals" and bank.topics == ("pytorch-internals",)
    assert q.key_points[0].contradicts[0] == "expand 会拷贝"
    assert q.page_url == "https://example.org/questions/repeat-vs-expand/"
    # the ordinary answer's instruction to click the site's markers is not for the quiz
    assert q.ordinary_answer == "expand 不拷贝数据，repeat 拷贝数据。"


DRILL = Drill(id="drill:expand-demo.demo", claim="expand-demo.demo", question="expand-demo", anchor="#claim-x",
              format="value", answer=[0, 1], accept=("[0,1]",))
FACTS = ClaimFacts(sentences={"expand-demo.demo": "stride 是 (0, 1)。"},
                   drills=(DRILL, replace(DRILL, id="drill:other.x", claim="other.x", question="no-such-page")),
                   where={"expand-demo.demo": "AMD EPYC · torch 2.13.0"})


def test_drills_of_the_banks_questions_with_their_page(tmp_path):
    write_sample_docs(tmp_path / "docs")
    bank = build_bank(tmp_path / "docs", facts=FACTS, site_url="https://example.org/")
    assert [d.id for d in bank.drills] == ["drill:expand-demo.demo"]
    d = bank.drills[0]
    assert d.title == "expand 和 repeat 的区别" and d.url == "questions/expand-demo/#claim-x"
    assert d.page_url == "https://example.org/questions/expand-demo/#claim-x"
    assert bank.evidence == {"expand-demo.demo": ClaimSentence("stride 是 (0, 1)。", "AMD EPYC · torch 2.13.0")}
    assert "stride 是 (0, 1)。" in bank.question("expand-demo").better_answer


def _own_answer_contradictions(docs: Path) -> list[str]:
    """Key points whose ``contradicts`` fire on their own page's better answer or follow-up answers."""
    from tests._contradicts import said  # noqa: PLC0415

    found = []
    for q in build_bank(docs, html=False).questions:
        text = q.better_answer + "\n" + q.deeper_answer + "\n" + "\n".join(f.a for f in q.follow_ups)
        for kp in q.key_points:
            wrong = next(({"statement": st, "said": w} for st in kp.contradicts if (w := said(st, text, kp))), None)
            if wrong:
                found.append(f"{q.file}: {wrong}")
    return found


def test_a_page_never_contradicts_itself(tmp_path):
    write_interview_page(tmp_path / "docs")
    page = tmp_path / "docs" / "questions" / "repeat-vs-expand.md"
    assert _own_answer_contradictions(tmp_path / "docs") == []
    page.write_text(page.read_text(encoding="utf-8").replace("expand 只改 stride。", "expand 会拷贝一份数据。"), encoding="utf-8")
    assert _own_answer_contradictions(tmp_path / "docs") == [
        "docs/questions/repeat-vs-expand.md: {'statement': 'expand 会拷贝', 'said': 'expand 会拷贝'}"]
    if (ROOT / "docs" / "questions").is_dir():  # the real pages' contradicts, wherever they are written
        assert _own_answer_contradictions(ROOT / "docs") == []


# --- the answers rendered with the site's Markdown ----------------------------------------------

def test_the_answers_are_rendered_with_the_extensions_mkdocs_yml_declares(tmp_path):
    write_sample_docs(tmp_path / "docs")
    plain = build_bank(tmp_path / "docs").question("expand-demo").better_answer_html
    assert "admonition" not in plain and '!!! warning "常见说法不准确"' in plain  # MkDocs' defaults only
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nmarkdown_extensions:\n  - admonition\n", encoding="utf-8")
    bank = build_bank(tmp_path / "docs")  # built again: the site's Markdown changed
    assert 'class="admonition warning"' in bank.question("expand-demo").better_answer_html


def test_one_markdown_converts_each_answer_once(tmp_path, monkeypatch):
    import markdown  # noqa: PLC0415

    from verify.quiz import bank as bank_mod  # noqa: PLC0415

    ids = write_sample_docs(tmp_path / "docs")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nmarkdown_extensions: [admonition, tables]\n", encoding="utf-8")
    made, converted = [], []
    init, convert = markdown.Markdown.__init__, markdown.Markdown.convert
    monkeypatch.setattr(markdown.Markdown, "__init__", lambda self, *a, **k: (made.append(self), init(self, *a, **k))[1])
    monkeypatch.setattr(markdown.Markdown, "convert", lambda self, text: (converted.append(self), convert(self, text))[1])
    bank_mod._markdown.cache_clear()
    bank_mod._build_bank(tmp_path / "docs")
    bank_mod._build_bank(tmp_path / "docs", site_url="https://example.org/")
    assert len(made) == 1 and len(converted) == 2 * 2 * len(ids) and set(converted) == set(made)


def _toc_anchor(body: str, config) -> str:
    """The 证据 heading's id as Python-Markdown's toc gives it on the site (the whole page rendered)."""
    import re  # noqa: PLC0415

    import markdown  # noqa: PLC0415

    names, configs = config.markdown()
    custom = configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    configs["pymdownx.superfences"] = {"custom_fences": [dict(f, format=lambda *a, **k: "<div></div>") for f in custom]}
    html = markdown.Markdown(extensions=names, extension_configs=configs).convert(body)
    m = re.search(r'<h2 id="([^"]+)"[^>]*>\s*证据', html)
    return m.group(1) if m else ""


@pytest.mark.parametrize("text", [
    "# 标题\n\n## 普通回答\n\n## 证据\n",
    "# 训练 7B 模型\n\n## 普通回答\n\n### 子标题\n\n!!! note\n    ### 提示里的标题\n\n## `view` 和 **x**\n\n## 证据\n",
    "# 标题\n\n## 证据 {#evidence}\n",
    "# 标题\n\n## a\n\n## a_1\n\n## a\n\n## 证据\n",
    "# _1\n\n## 证据\n\n```python\n## 不是标题\n```\n",
])
def test_the_evidence_anchor_is_the_id_the_site_gives(text):
    from verify.core.pages import parse_text  # noqa: PLC0415
    from verify.quiz.bank import _evidence_anchor  # noqa: PLC0415
    from verify.settings import site_config  # noqa: PLC0415

    config = site_config(ROOT)
    assert _evidence_anchor(parse_text(text, Path("p.md")), config) == _toc_anchor(text, config)


def test_the_evidence_anchor_of_every_real_page_is_the_sites():
    from verify.core.pages import parse  # noqa: PLC0415
    from verify.quiz.bank import _evidence_anchor  # noqa: PLC0415
    from verify.settings import site_config  # noqa: PLC0415

    config = site_config(ROOT)
    pages = sorted((ROOT / "docs" / "questions").glob("*.md"))
    for path in pages:
        page = parse(path)
        assert _evidence_anchor(page, config) == _toc_anchor(page.body, config) != "", path


def test_tags_that_differ_only_in_case_are_one_tag(tmp_path):
    from verify.quiz.bank import one_spelling  # noqa: PLC0415

    write_sample_docs(tmp_path / "docs")
    qs = list(build_bank(tmp_path / "docs", html=False).questions)
    a, b, c = (replace(q, tags=tags) for q, tags in zip(qs, [("batchnorm", "x"), ("BatchNorm",), ("batchnorm", "BATCHNORM")]))
    # two questions write batchnorm, one BatchNorm: the spelling most use wins; a question's two spellings become one
    assert [q.tags for q in one_spelling([a, b, c])] == [("batchnorm", "x"), ("batchnorm",), ("batchnorm",)]
    # a tie goes to the spelling with capitals
    assert [q.tags for q in one_spelling([a, b])] == [("BatchNorm", "x"), ("BatchNorm",)]


def test_the_real_banks_tags_are_offered_once_each():
    tags = build_bank(ROOT / "docs", html=False).tags
    assert len({t.casefold() for t in tags}) == len(tags), sorted(tags, key=str.casefold)
