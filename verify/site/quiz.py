"""What a site build adds for practice: the ``quizbank`` fence, ``quiz.json`` and the Anki deck.

The quiz page carries the bank as ``<script type="application/json">`` (the ``quizbank`` fence), so
the quiz works from a static site opened without a server (no fetch); the hook writes the same
bank as ``quiz.json`` and the deck beside it, from the build's ledger. A malformed page fails the
build, naming the file and the field. A deck is written again only when the bank changed: genanki
stamps every file with the time, so the deck of an unchanged bank is copied from the project cache.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from verify import settings as settings_mod
from verify.core.pages import fence_options
from verify.quiz.bank import BankError, bank_json, build_bank
from verify.quiz.claims import ClaimFacts, gather
from verify.site import session
from verify.site.templating import render
from verify.storage.fs import atomic_write_text

log = logging.getLogger("mkdocs.verify")

if TYPE_CHECKING:
    from verify.core.ledger import Ledger
    from verify.quiz.schema import Bank
    from verify.settings import Settings

DECK_FILE = "interview-quiz.apkg"


def site_bank(settings: Settings, docs_dir: Path, outcome: Ledger | None, *, html: bool = True,
              site_url: str | None = None) -> Bank:
    """The bank of a site build: answers filled from ``outcome`` (None: a site without snippets)."""
    facts = gather(outcome, docs_dir) if outcome is not None else ClaimFacts()
    config = settings_mod.site_config(settings.root)
    url = site_url if site_url is not None else config.site_url
    return build_bank(docs_dir, html=html, cache_dir=settings.cache_dir, facts=facts, site_url=url, config=config)


def _bank_and_text(settings: Settings, docs_dir: Path, outcome: Ledger | None,
                   site_url: str | None = None) -> tuple[Bank, str]:
    """The build's bank and its JSON, made once per session: the quiz page's fence and ``quiz.json``
    carry the same bank."""
    url = site_url if site_url is not None else settings_mod.site_config(settings.root).site_url

    def make() -> tuple[Bank, str]:
        bank = site_bank(settings, docs_dir, outcome, site_url=url)
        return bank, bank_json(bank)

    sess = session.current()
    if outcome is None or sess is None or sess.outcome is not outcome:
        return make()
    return sess.once(("quiz", str(docs_dir), url), make)


def normal_url(url: str | None) -> str | None:
    return (url.rstrip("/") + "/") if url else None


def write(settings: Settings, docs_dir: Path, site_dir: Path, outcome: Ledger | None,
          site_url: str | None = None) -> dict[str, Path]:
    """Write ``quiz.json`` and the deck into ``site_dir``; return their paths. Raises BankError."""
    from verify.quiz.deck import export  # noqa: PLC0415  (genanki: only when a deck is written)

    bank, text = _bank_and_text(settings, docs_dir, outcome, normal_url(site_url))
    out = {"quiz": Path(site_dir) / "quiz.json", "deck": Path(site_dir) / DECK_FILE}
    atomic_write_text(out["quiz"], text)
    cached = settings.cache_dir / "anki" / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.apkg"
    if not cached.is_file():
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            for old in cached.parent.glob("*.apkg"):
                old.unlink(missing_ok=True)
            export(bank, cached)
        except OSError as exc:  # a cache that cannot be written: the deck is made for this build alone
            log.info("verify: cannot keep the Anki deck in %s (%s); made for this build only", cached.parent, exc)
            export(bank, out["deck"])
            return out
    shutil.copyfile(cached, out["deck"])
    return out


def quizbank_fence(source: str, language: str, css_class: str, options: dict, md, **kwargs) -> str:
    """Format ``quizbank`` fences. The fence body may name the docs folder: ``docs: path``."""
    from pymdownx.superfences import SuperFencesException  # noqa: PLC0415

    settings = settings_mod.for_site()
    given = fence_options(source).options.get("docs")
    docs = Path(given) if given else settings.docs_dir
    try:
        # claims' sentences, values and drills fill the bank; a site without snippets (a quiz alone) has none
        outcome = session.get().outcome if settings.snippets_dir.is_dir() else None
        bank, text = _bank_and_text(settings, docs, outcome)
    except BankError as exc:
        raise SuperFencesException(str(exc)) from exc
    # "<" escaped as \u003c keeps "</script>" inside answers from closing the element; still valid JSON
    payload = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return render("quizbank.html", css_class=css_class, count=len(bank.questions), payload=Markup(payload))
