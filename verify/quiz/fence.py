"""The ``quizbank`` superfences fence: the bank inlined into the quiz page.

The page carries the bank as ``<script type="application/json">``, so the quiz works from a
static site opened without a server (no fetch). A malformed page fails the build, naming the
file and the field.
"""

from __future__ import annotations

import html
from pathlib import Path

from verify import settings as settings_mod
from verify.quiz.bank import BankError, bank_json
from verify.quiz.publish import site_bank
from verify.site import session


def quizbank_fence(source: str, language: str, css_class: str, options: dict, md, **kwargs) -> str:
    """Format ``quizbank`` fences. The fence body may name the docs folder: ``docs: path``."""
    from pymdownx.superfences import SuperFencesException  # noqa: PLC0415

    settings = settings_mod.for_site()
    docs = settings.docs_dir
    for line in source.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "docs" and value.strip():
            docs = Path(value.strip())
    try:
        # claims' sentences, values and drills fill the bank; a site without snippets (a quiz alone) has none
        outcome = session.get().outcome if settings.snippets_dir.is_dir() else None
        bank = site_bank(settings, docs, outcome)
    except BankError as exc:
        raise SuperFencesException(str(exc)) from exc
    # "<" escaped as \u003c keeps "</script>" inside answers from closing the element; still valid JSON
    payload = bank_json(bank).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'<div class="{html.escape(css_class)}" data-questions="{len(bank["questions"])}">'
            f'<script type="application/json" id="quiz-bank">{payload}</script></div>')
