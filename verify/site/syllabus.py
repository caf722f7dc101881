"""The ``questions`` fence: every question page, grouped by topic, with its claims verified here.

The home page lists what the site covers from the pages themselves (front matter: title, topic,
sources, difficulty) and this build's evidence, so a new page appears with no table to edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verify.core import states
from verify.core.records import JsonObject
from verify.core.pages import front_matter
from verify.quiz.schema import TOPICS
from verify.site import session
from verify.site.fences import safe_fence
from verify.site.templating import render

DIFFICULTY = {1: "基础", 2: "基础", 3: "中等", 4: "深入", 5: "深入"}


def _source(meta: JsonObject) -> str:
    return " · ".join(f"{s.get('company', '')}" + (f" {s['round']}" if s.get("round") else "")
                      for s in meta.get("sources") or [] if isinstance(s, dict))


@dataclass(frozen=True)
class QuestionRow:
    """A question page in the syllabus: its title, link, sources, difficulty and claims verified here."""

    title: str
    link: str
    source: str
    difficulty: str
    claims: int
    verified: int
    gpu: int = 0  # claims that wait for a GPU: not run on this build, not failures

    @property
    def other(self) -> int:
        """Claims neither verified here nor waiting for a GPU (stale, not run, failed, another need)."""
        return self.claims - self.verified - self.gpu


@dataclass(frozen=True)
class Topic:
    topic: str
    questions: list[QuestionRow]

    @property
    def verified(self) -> int:
        return sum(q.verified for q in self.questions)


def groups(sess: session.Session) -> list[Topic]:
    """Topics in syllabus order, each with its questions (title, link, source, difficulty, counts)."""
    by_topic: dict[str, list[QuestionRow]] = {}
    by_question: dict[str, list[str]] = {}
    for cid, spec in sess.outcome.registry.claims.items():
        by_question.setdefault(spec.question, []).append(cid)
    for page in sorted((sess.settings.docs_dir / "questions").glob("*.md")):
        _front, meta = front_matter(page)
        if not isinstance(meta, dict):
            continue
        mine = by_question.get(page.stem, [])
        verified = sum(states.verified_here(sess.outcome.status(cid)) for cid in mine)
        gpu = sum(sess.outcome.status(cid) == states.NEEDS_CUDA for cid in mine)
        by_topic.setdefault(meta.get("topic") or "pytorch-internals", []).append(QuestionRow(
            title=meta.get("title", page.stem), link=f"questions/{page.stem}/", source=_source(meta),
            difficulty=DIFFICULTY.get(int(meta.get("difficulty") or 0), ""), claims=len(mine), verified=verified,
            gpu=gpu))
    order = [t for t in TOPICS if t in by_topic] + sorted(set(by_topic) - set(TOPICS))
    return [Topic(t, by_topic[t]) for t in order]


@safe_fence
def questions_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```questions fence: the syllabus, by topic."""
    sess = session.get()
    return sess.once("questions", lambda: render("questions.html", groups=groups(sess),
                                                  device=sess.outcome.probe.device_name))
