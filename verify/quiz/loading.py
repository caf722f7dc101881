"""The terminal quiz's view of the bank: front matter first, the page bodies in the background.

The first question shows from the front matter alone (no Markdown parsing on the start path); the
answers, which need the page bodies, are read in a thread while the candidate thinks.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from verify.core.errors import ClaimError

console = Console(highlight=False)
log = logging.getLogger("verify.quiz")


def docs_dir(docs: Path | None) -> Path:
    if docs:
        return docs
    from verify.cli.common import settings_for  # noqa: PLC0415

    return settings_for(None).docs_dir


def _fail(message: str) -> typer.Exit:
    console.print(message, style="red", markup=False)
    return typer.Exit(2)


def claim_facts(docs: Path):
    """Every claim's sentence, the pages' bound values and the drills, from what the cache holds (nothing
    is run); empty where nothing can be read (no checkout, no snippets)."""
    from verify.quiz.claims import ClaimFacts, gather  # noqa: PLC0415
    from verify.running import engine  # noqa: PLC0415
    from verify.settings import Settings  # noqa: PLC0415

    try:
        return gather(engine.verify(Settings.discover(docs), run=False), docs)
    except (ClaimError, OSError, RuntimeError) as exc:  # no checkout, no torch: answers without claims
        log.debug("quiz: claim facts unavailable: %s", exc)
        return ClaimFacts()


def claim_sentences(docs: Path) -> dict[str, str | None]:
    """Every claim's sentence with the values the cache holds (None where a value was observed nowhere)."""
    return dict(claim_facts(docs).sentences)


def site_url(docs: Path, given: str | None = None) -> str | None:
    """The site's address, ending in ``/``: ``given`` (an option), else ``site_url`` of the checkout's mkdocs.yml."""
    from verify.quiz.reference import site_url as configured  # noqa: PLC0415

    if given:
        return given.rstrip("/") + "/"
    return configured(Path(docs).resolve().parent)


def load_bank(docs: Path | None, *, html: bool = False, url: str | None = None) -> dict[str, Any]:
    """The validated bank (answers, drills, absolute links when the site's address is known), or exit 2
    with every problem printed."""
    from verify.quiz.bank import BankError, build_bank  # noqa: PLC0415

    folder = docs_dir(docs)
    try:
        bank = build_bank(folder, html=html, facts=claim_facts(folder), site_url=site_url(folder, url))
    except BankError as exc:
        raise _fail(str(exc)) from None
    if not bank["questions"]:
        raise _fail("题库为空：没有找到 questions/*.md。")
    return bank


def load_outline(docs: Path | None) -> list[dict[str, Any]]:
    """The questions' front matter, validated (enough to pick and ask); exit 2 with every problem."""
    from verify.quiz.bank import BankError, outline  # noqa: PLC0415

    try:
        questions = outline(docs_dir(docs))
    except BankError as exc:
        raise _fail(str(exc)) from None
    if not questions:
        raise _fail("题库为空：没有找到 questions/*.md。")
    return questions


class Answers:
    """The full bank (answers need the page bodies), read in the background once the first question shows."""

    def __init__(self, docs: Path | None):
        self.docs = docs
        self.bank: dict[str, Any] | None = None
        self.error: typer.Exit | None = None
        self.thread = threading.Thread(target=self._load, daemon=True)

    def _load(self) -> None:
        try:
            self.bank = load_bank(self.docs)
        except typer.Exit as exc:
            self.error = exc

    def start(self) -> None:
        if not self.thread.is_alive() and self.bank is None and self.error is None:
            self.thread.start()

    def of(self, qid: str) -> dict[str, Any]:
        self.start()
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.bank is not None
        return next(q for q in self.bank["questions"] if q["id"] == qid)
