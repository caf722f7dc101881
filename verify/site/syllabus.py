"""The ``questions`` fence: every question page, grouped by topic; and the legend of the evidence marks.

The home page lists what the site covers from the pages themselves (front matter: title, topic,
sources, difficulty), so a new page appears with no table to edit. How much of each page this build
verified is the ledger's business (the 证据总表 page), not the reader's first screen.

The fence's body picks what it shows:

- empty: the syllabus, its links relative to a page at the site's root (the home page);
- ``base: ../``: the same, from a page one level down (``topics/``);
- ``legend``: what each mark after a sentence means, read from :mod:`verify.core.states`, so the
  legend shows the very words and colours the pages use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verify.core import states
from verify.core.records import JsonObject
from verify.core.pages import front_matter
from verify.quiz.schema import TOPICS
from verify.site import session
from verify import toolchain
from verify.site.fences import COUNTED as COUNTED_KIND
from verify.site.fences import safe_fence
from verify.site.meaning import COUNTED, MEANING
from verify.site.templating import LABELS, render, state

DIFFICULTY = {1: "基础", 2: "基础", 3: "中等", 4: "深入", 5: "深入"}


#: The marks a reader meets most, shown in the first screen; the others follow in a fold.
FIRST = (states.VERIFIED_HERE, COUNTED, states.VERIFIED_ELSEWHERE, "compiled-here", "simulated-here", "spec-here",
         states.NEEDS_CUDA, states.FAILED)


@dataclass(frozen=True)
class Mark:
    """One mark as a page shows it: its state key, tone and short word."""

    key: str
    tone: str
    text: str


@dataclass(frozen=True)
class LegendRow:
    """One line of the legend: the marks of one kind of evidence (here, and recorded elsewhere) and what they mean."""

    marks: list[Mark]
    meaning: str


def _kind(key: str) -> str:
    """A state's kind: ``compiled-here`` and ``compiled-elsewhere`` are one kind; verified here and elsewhere are two."""
    for suffix in ("-here", "-elsewhere"):
        if key.endswith(suffix) and not key.startswith("verified-"):
            return key[: -len(suffix)]
    return key


def _counted() -> list[Mark]:
    """The mark that counts the machines where a claim ran and passed (:data:`verify.site.fences.COUNTED`),
    ``N`` for the number, as the pages word it (``LABELS["machines"]``)."""
    text = LABELS["machines"].format("N", LABELS["kind_word"][COUNTED_KIND])
    return [Mark(states.VERIFIED_HERE, states.get(states.VERIFIED_HERE).tone, text)]


def _legend_texts(key: str, mark: str) -> str:
    """A mark as the legend shows it: one that a record completes (需要 + its tools) with every tool named."""
    return f"{mark} {' / '.join(toolchain.TOOLS)}" if key == states.NEEDS_TOOL else mark


def legend(live: str | None = None) -> tuple[list[LegendRow], list[LegendRow]]:
    """Every state of :mod:`verify.core.states` as the pages show it in this build, ``verify serve`` included
    (``live`` as :func:`~verify.site.templating.state` takes it): the first screen's rows in the order of
    :data:`FIRST`, then the others in the table's order."""
    rows: dict[str, LegendRow] = {}
    for key in states.STATES:
        row = state(key, live)
        kind = _kind(key)
        texts = [_legend_texts(key, row.mark)] + ([row.waiting] if row.waiting else [])
        marks = [Mark(key, row.tone, t) for t in texts]
        if kind in rows:
            rows[kind].marks.extend(marks)
        else:
            rows[kind] = LegendRow(marks, MEANING.get(key) or row.label)
    rows[COUNTED] = LegendRow(_counted(), MEANING[COUNTED])
    first = list(dict.fromkeys(_kind(k) for k in FIRST))
    return [rows[k] for k in first if k in rows], [rows[k] for k in rows if k not in first]


def _source(meta: JsonObject) -> str:
    return " · ".join(f"{s.get('company', '')}" + (f" {s['round']}" if s.get("round") else "")
                      for s in meta.get("sources") or [] if isinstance(s, dict))


@dataclass(frozen=True)
class QuestionRow:
    """A question page in the syllabus: its title, link, sources and difficulty."""

    title: str
    link: str
    source: str
    difficulty: str


@dataclass(frozen=True)
class Topic:
    topic: str
    questions: list[QuestionRow]


def groups(sess: session.Session, base: str = "") -> list[Topic]:
    """Topics in syllabus order, each with its questions; links relative to a page ``base`` below the root."""
    by_topic: dict[str, list[QuestionRow]] = {}
    for page in sorted((sess.settings.docs_dir / "questions").glob("*.md")):
        _front, meta = front_matter(page)
        if not isinstance(meta, dict):
            continue
        by_topic.setdefault(meta.get("topic") or "pytorch-internals", []).append(QuestionRow(
            title=meta.get("title", page.stem), link=f"{base}questions/{page.stem}/", source=_source(meta),
            difficulty=DIFFICULTY.get(int(meta.get("difficulty") or 0), "")))
    order = [t for t in TOPICS if t in by_topic] + sorted(set(by_topic) - set(TOPICS))
    return [Topic(t, by_topic[t]) for t in order]


def _options(source: str) -> dict[str, str]:
    """The fence's body: ``legend`` alone, or ``key: value`` lines (``base: ../``)."""
    text = source.strip()
    if text == "legend":
        return {"show": "legend"}
    options = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep or key.strip() != "base" or value.strip() not in ("", "../"):
            raise ValueError(f"the questions fence takes `legend` or `base: ../`, not {line.strip()!r}")
        options["base"] = value.strip()
    return options


@safe_fence
def questions_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```questions fence: the syllabus, by topic, or the legend of the marks (see the module's docstring)."""
    opts, sess = _options(source), session.get()
    if opts.get("show") == "legend":
        first, more = legend()
        return render("questions.html", legend=True, first=first, more=more)
    base = opts.get("base", "")
    return sess.once(("questions", base), lambda: render("questions.html", legend=False, groups=groups(sess, base)))
