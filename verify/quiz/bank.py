"""Build the question bank from ``docs/questions/*.md``: front matter plus body sections, and the drills.

The bank is the one source for the browser quiz (``quiz.json`` and the ``quizbank`` fence), the
terminal quiz and the Anki deck: the questions with their answers as plain text and HTML (written
out for a reader away from the site, :mod:`verify.quiz.reference`), the predict-the-output drills
made from the claims (:mod:`verify.quiz.drills`), the 判断题 on the claims' sentences and the 计算题 that claims observed
(:mod:`verify.quiz.objective`), and the sentences of the claims the answers show. Nothing here
imports the project's snippets: what they observed comes in ``facts``, from the ledger.
Every page is validated; all problems are collected and raised once, each naming the file and the
field.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from verify.core.pages import Page, PageError
from verify.core.pages import parse as read_page
from verify.quiz.claims import ClaimFacts
from verify.quiz.judge import judgements
from verify.quiz.objective import calculations
from verify.quiz.reference import clean, plain_text
from verify.quiz.schema import (  # noqa: F401  (outline and BankError are read from here too)
    BANK_VERSION,
    Bank,
    BankError,
    ClaimSentence,
    Drill,
    FollowUp,
    KeyPoint,
    Question,
    Source,
    _meta_entry,
    _where,
    outline,
    validate_meta,
)
from verify.settings import SettingsError, SiteConfig, find_root, site_config
from verify.storage.fs import Memo, atomic_write_json, atomic_write_text, read_json, stamp

if TYPE_CHECKING:
    from markdown import Markdown

__all__ = ["Bank", "BankError", "ClaimFacts", "build_bank", "outline", "parse_page", "plain_text", "write_quiz_json"]

SECTIONS = ("普通回答", "更好的回答", "考察点", "追问", "证据")
#: the long answer, point by point, after the key points; optional, and only right after 考察点:
#: 更好的回答 is then the spoken answer alone, and the quiz shows the long one folded after it
DEEPER = "逐点展开"


def _expected_order(present: list[str]) -> list[str]:
    order = list(SECTIONS)
    if DEEPER in present:
        order.insert(order.index("考察点") + 1, DEEPER)
    return order


# Python-Markdown's toc gives headings their ids; answers shown on the quiz page are not its headings
_TOC = ("toc", "markdown.extensions.toc")


@functools.lru_cache(maxsize=1)
def _markdown(config: SiteConfig) -> tuple[Markdown, Callable[[str, str], str], str]:
    """One Python-Markdown for the answers, with the extensions the site's mkdocs.yml declares (and
    MkDocs' own) except ``toc``; and the slugify function and separator its ``toc`` makes ids with."""
    import markdown  # noqa: PLC0415  (only at build time, never on the terminal's start path)
    from markdown.extensions.toc import TocExtension  # noqa: PLC0415

    names, configs = config.markdown()
    toc = TocExtension(**configs.get("toc", {})).getConfigs()
    md = markdown.Markdown(extensions=[n for n in names if n not in _TOC],
                           extension_configs={k: v for k, v in configs.items() if k not in _TOC})
    return md, toc["slugify"], toc["separator"]


def _html(markdown_text: str, config: SiteConfig) -> str:
    return _markdown(config)[0].reset().convert(markdown_text)


def _evidence_anchor(page: Page, config: SiteConfig) -> str:
    """The id the site gives the 证据 heading: ``toc``'s, which counts every heading before it (an
    empty slug, as of a Chinese title, becomes ``_1``, ``_2``, ...); ids set with ``{#id}`` stand."""
    from markdown.extensions.toc import unique  # noqa: PLC0415

    _md, slugify, separator = _markdown(config)
    used = {h.id for h in page.doc.headings if h.id}
    for h in page.doc.headings:
        hid = h.id or unique(slugify(h.text, separator), used)
        if h.top and h.level == 2 and h.title == "证据":
            return hid
    return ""


def config_of(docs_dir: Path) -> SiteConfig:
    """The configuration of the site whose docs folder this is (the ``mkdocs.yml`` nearest above it;
    none: MkDocs' defaults)."""
    try:
        return site_config(find_root(Path(docs_dir)))
    except SettingsError:
        return SiteConfig()


# --- the bank -----------------------------------------------------------------------------

def parse_page(path: Path, docs_dir: Path, *, html: bool = True, sentences: Mapping[str, str] | None = None,
               facts: ClaimFacts | None = None, site_url: str | None = None,
               config: SiteConfig | None = None) -> tuple[Question | None, list[str]]:
    """One page to one bank entry, or (None, problems). ``config``: the site's (default :func:`config_of`),
    whose Markdown renders the answers with ``html``."""
    where = _where(path, docs_dir)
    try:
        page = read_page(path)
    except PageError as exc:
        return None, [f"{where}: {exc.problem}"]
    if page.front_matter is None:
        return None, [f"{where}: front matter: missing (the page must start with a '---' YAML block)"]
    meta, h1, sections, order = page.meta, page.h1, page.sections, page.order
    problems = validate_meta(meta, where, path.stem)
    if not h1:
        problems.append(f"{where}: body: the question as a level-1 heading ('# ...') is missing")
    elif isinstance(meta, dict) and isinstance(meta.get("title"), str) and h1 != meta["title"].strip():
        problems.append(f"{where}: body: the level-1 heading {h1!r} must equal the title {meta['title'].strip()!r}")
    present = [t for t in order if t in SECTIONS or t == DEEPER]
    for title in SECTIONS:
        if title not in sections:
            problems.append(f"{where}: section '## {title}': missing")
    if not problems and present != _expected_order(present):
        problems.append(f"{where}: sections: must come in the order {' / '.join(_expected_order(present))}, "
                        f"found {' / '.join(present)}")
    for title in ("普通回答", "更好的回答", *([DEEPER] if DEEPER in sections else [])):
        if title in sections and not sections[title]:
            problems.append(f"{where}: section '## {title}': empty")
    if problems:
        return None, problems
    # a claim's sentence (its statement, values filled in) stands where the page shows the claim;
    # figures, bound values and links are written out for a reader away from the site
    facts = facts or ClaimFacts.of_sentences(sentences)
    entry = _meta_entry(meta, where, site_url)
    said, values = facts.sentences, facts.values

    def text(section: str, url: str | None, base: str | None) -> tuple[str, list[str]]:
        return clean(sections[section], said, values, url, base)

    better, claim_ids = text("更好的回答", entry.page_url, site_url)
    deeper, deeper_ids = text(DEEPER, entry.page_url, site_url) if DEEPER in sections else ("", [])
    ordinary, _ = text("普通回答", entry.page_url, site_url)
    config = (config or config_of(docs_dir)) if html else None
    anchor = _evidence_anchor(page, config) if config is not None else ""
    entry = replace(entry, question=h1 or entry.question, ordinary_answer=plain_text(ordinary), better_answer=plain_text(better),
                    deeper_answer=plain_text(deeper), evidence_url=entry.url + (f"#{anchor}" if anchor else ""),
                    claims=tuple(dict.fromkeys([*claim_ids, *deeper_ids])))
    if config is not None:  # shown on the quiz page: links relative to it unless the site's address is known
        base = site_url or "../"
        entry = replace(entry, ordinary_answer_html=_html(text("普通回答", f"{base}{entry.url}", base)[0], config),
                        better_answer_html=_html(text("更好的回答", f"{base}{entry.url}", base)[0], config),
                        deeper_answer_html=(_html(text(DEEPER, f"{base}{entry.url}", base)[0], config)
                                            if deeper else None))
    return entry, []


_MEMO: Memo[Bank] = Memo()


def build_bank(docs_dir: Path, *, html: bool = True, cache_dir: Path | None = None,
               sentences: Mapping[str, str] | None = None, facts: ClaimFacts | None = None,
               site_url: str | None = None, config: SiteConfig | None = None) -> Bank:
    """The bank, rebuilt only when a question page, a claim's sentence, a drill or the site's Markdown changed.

    ``facts`` (:func:`verify.quiz.claims.gather`: every claim's sentence with this build's values,
    the pages' bound values, the drills) fill the answers where a page shows a claim or a value;
    ``sentences`` alone is the same without values and drills; with neither, claims are left out.
    ``site_url`` (ending in ``/``) makes every page link absolute. ``config``: the site's configuration,
    whose Markdown extensions render the answers (default: the ``mkdocs.yml`` above ``docs_dir``).

    Remembered in the process (the quiz fence and the site hook share it) and, given the project's
    ``cache_dir``, on disk (a warm site build does not render the answers again).
    """
    docs_dir = Path(docs_dir).resolve()
    facts = facts or ClaimFacts.of_sentences(dict(sentences or {}))
    pages = sorted((docs_dir / "questions").glob("*.md"))
    current = stamp(pages)
    said = facts.digest()
    config = (config or config_of(docs_dir)) if html else None
    markdown = config.digest if config else None
    key = [str(docs_dir), html, [list(s) for s in current], said, site_url, markdown, BANK_VERSION]

    def compute() -> Bank:
        disk = cache_dir / f"quizbank-{'html' if html else 'text'}.json" if cache_dir else None
        cached = read_json(disk) if disk else None
        if isinstance(cached, dict) and cached.get("key") == key and isinstance(cached.get("bank"), dict):
            try:
                return Bank.from_json(cached["bank"])
            except (KeyError, TypeError, ValueError):
                pass  # written by other code: built again
        bank = _build_bank(docs_dir, html=html, facts=facts, site_url=site_url, config=config)
        if disk:
            try:
                atomic_write_json(disk, {"key": key, "bank": bank.to_json()})
            except OSError:
                pass
        return bank

    return _MEMO.get((str(docs_dir), html), [current, said, site_url, markdown], compute)


def _drills(facts: ClaimFacts, questions: list[Question], site_url: str | None) -> tuple[Drill, ...]:
    """The facts' drills of the bank's questions, each with its question's title, tags and page."""
    by_id = {q.id: q for q in questions}
    out = []
    for drill in facts.drills:
        q = by_id.get(drill.question)
        if q is None:
            continue
        url = q.url + drill.anchor
        out.append(replace(drill, title=q.title, tags=q.tags, topic=q.topic, difficulty=q.difficulty,
                           url=url, page_url=f"{site_url}{url}" if site_url else None))
    return tuple(sorted(out, key=lambda d: (d.question, d.claim)))


def one_spelling(questions: list[Question]) -> list[Question]:
    """Tags that differ only in case (BatchNorm, batchnorm) are one tag, spelt as most questions spell it;
    on a tie, the spelling with capitals (a name: BatchNorm). The filter then offers it once."""
    uses = Counter(t for q in questions for t in q.tags)
    best: dict[str, str] = {}
    for tag, n in uses.items():
        cur = best.get(tag.casefold())
        if cur is None or (n, tag != tag.lower(), tag) > (uses[cur], cur != cur.lower(), cur):
            best[tag.casefold()] = tag
    return [replace(q, tags=tuple(dict.fromkeys(best[t.casefold()] for t in q.tags))) for q in questions]


def _build_bank(docs_dir: Path, *, html: bool = True, facts: ClaimFacts | None = None,
                site_url: str | None = None, config: SiteConfig | None = None) -> Bank:
    """Every ``docs_dir/questions/*.md`` as one validated bank; raises BankError naming file and field.

    Args:
        docs_dir: the site's docs folder.
        html: also render the answers to HTML (the site needs it; the terminal does not), with the
            Markdown of ``config`` (default: the site's, :func:`config_of`).
    """
    docs_dir = Path(docs_dir)
    facts = facts or ClaimFacts()
    config = (config or config_of(docs_dir)) if html else None
    questions: list[Question] = []
    problems: list[str] = []
    for path in sorted((docs_dir / "questions").glob("*.md")):
        entry, errs = parse_page(path, docs_dir, html=html, facts=facts, site_url=site_url, config=config)
        problems += errs
        if entry:
            questions.append(entry)
    if problems:
        raise BankError(problems)
    questions = one_spelling(questions)
    shown = {cid for q in questions for cid in q.claims}
    evidence = {cid: ClaimSentence(said, facts.where.get(cid, ""))
                for cid in sorted(shown) if (said := facts.sentences.get(cid))}
    objective = (*judgements(facts.judgements, questions), *calculations(facts.calculations, questions))
    return Bank(version=BANK_VERSION, questions=tuple(questions), drills=_drills(facts, questions, site_url),
                objective=tuple(objective), evidence=evidence, tags=tuple(sorted({t for q in questions for t in q.tags})),
                topics=tuple(sorted({q.topic for q in questions if q.topic})), site_url=site_url)


def bank_json(bank: Bank) -> str:
    """``quiz.json``: compact, as it is read by code (the browser quiz), and a build writes it twice."""
    return json.dumps(bank.to_json(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def write_quiz_json(docs_dir: Path, site_dir: Path, cache_dir: Path | None = None,
                    sentences: Mapping[str, str] | None = None, facts: ClaimFacts | None = None,
                    site_url: str | None = None) -> Path:
    """Build the bank and write ``site_dir/quiz.json``; return the path. Raises BankError."""
    bank = build_bank(Path(docs_dir), cache_dir=cache_dir, sentences=sentences, facts=facts, site_url=site_url)
    out = Path(site_dir) / "quiz.json"
    atomic_write_text(out, bank_json(bank))
    return out
