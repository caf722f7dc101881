"""What a site build adds for practice: ``quiz.json`` and the Anki deck, from the build's evidence.

The quiz page inlines the same bank (``verify.quiz.fence``); the deck is linked from it. A deck
is written again only when the bank changed: genanki stamps every file with the time, so the
deck of an unchanged bank is copied from the project cache.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.quiz.bank import bank_json, build_bank
from verify.quiz.claims import ClaimFacts, gather
from verify.quiz.reference import site_url as configured_site_url
from verify.storage.fs import atomic_write_text

if TYPE_CHECKING:
    from verify.running.engine import Verification
    from verify.settings import Settings

DECK_FILE = "interview-quiz.apkg"


def site_bank(settings: Settings, docs_dir: Path, outcome: Verification | None, *, html: bool = True,
              site_url: str | None = None) -> dict[str, Any]:
    """The bank of a site build: answers filled from ``outcome`` (None: a site without snippets)."""
    facts = gather(outcome, docs_dir) if outcome is not None else ClaimFacts()
    url = site_url if site_url is not None else configured_site_url(settings.root)
    return build_bank(docs_dir, html=html, cache_dir=settings.cache_dir, facts=facts, site_url=url)


def normal_url(url: str | None) -> str | None:
    return (url.rstrip("/") + "/") if url else None


def write(settings: Settings, docs_dir: Path, site_dir: Path, outcome: Verification | None,
          site_url: str | None = None) -> dict[str, Path]:
    """Write ``quiz.json`` and the deck into ``site_dir``; return their paths. Raises BankError."""
    from verify.quiz.anki import export  # noqa: PLC0415  (genanki: only when a deck is written)

    bank = site_bank(settings, docs_dir, outcome, site_url=normal_url(site_url))
    text = bank_json(bank)
    out = {"quiz": Path(site_dir) / "quiz.json", "deck": Path(site_dir) / DECK_FILE}
    atomic_write_text(out["quiz"], text)
    cached = settings.cache_dir / "anki" / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.apkg"
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        for old in cached.parent.glob("*.apkg"):
            old.unlink(missing_ok=True)
        export(bank, cached)
    shutil.copyfile(cached, out["deck"])
    return out
