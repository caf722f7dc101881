"""The bank a site build leaves for the terminal quiz, and whether it is still current.

Making the bank needs what the claims observed, and reading that costs a scan of every snippet and a
probe of the machine: 10 s and more on a fresh cache. A site build has that ledger already, so it
leaves its bank in the project cache (:data:`FILE`, answers as text only) together with what it was
made from, and ``verify quiz`` reads it back while all of this still matches:

- ``sources``: a digest of the stamps (size, modification and change time) of every file the ledger
  and the bank are read from: the docs' pages, the snippets, the committed evidence, the evidence
  cache, the checkout's ``mkdocs.yml``, and the code of ``verify`` itself;
- ``machine``: the probe's fingerprint of this machine and its torch, under which the cache keeps
  its evidence (passed in: this layer does not probe);
- ``live``: a build of ``verify serve`` shows this machine's own runs only, the terminal all records;
- ``site_url`` (the links it writes) and the bank's version.

Checking costs one ``stat`` per file. The terminal, when it makes the bank itself, takes the digest
before reading the sources, so a file changed meanwhile leaves its bank stale; a site build takes it
once its ledger is made (the claims it ran have written the evidence cache by then).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.quiz.schema import BANK_VERSION, Bank
from verify.storage.fs import atomic_write_text, stamp

if TYPE_CHECKING:
    from verify.settings import Settings

FILE = "quizbank-built.json"


def _files(folder: Path, pattern: str = "*") -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in folder.rglob(pattern) if "__pycache__" not in p.parts and p.is_file()]


def source_files(settings: Settings) -> list[Path]:
    """Every file the bank of ``settings``' checkout is made from (see the module's docstring)."""
    import verify  # noqa: PLC0415

    code = Path(verify.__file__).resolve().parent
    return [*_files(settings.docs_dir, "*.md"), *_files(settings.snippets_dir), *_files(settings.evidence_dir),
            *_files(settings.cache_dir / "evidence"), *_files(code, "*.py"), settings.root / "mkdocs.yml"]


def sources_digest(settings: Settings) -> str:
    """A digest of the stamps of :func:`source_files`: it changes when any of them is written, added or removed."""
    text = json.dumps(stamp(source_files(settings)), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Made:
    """What a bank was made from: compared whole, field by field."""

    sources: str
    machine: str
    live: bool
    site_url: str | None
    version: int = BANK_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"sources": self.sources, "machine": self.machine, "live": self.live, "site_url": self.site_url,
                "version": self.version}


def text_only(bank: Bank) -> Bank:
    """The bank as the terminal reads it: the answers' HTML, which only the page shows, left out."""
    return replace(bank, questions=tuple(replace(q, ordinary_answer_html=None, better_answer_html=None,
                                                 deeper_answer_html=None) for q in bank.questions))


def path_of(settings: Settings) -> Path:
    return settings.cache_dir / FILE


def write(settings: Settings, bank: Bank, made: Made) -> None:
    """Leave ``bank`` for the terminal; a cache that cannot be written leaves the terminal to build it."""
    data = {"made": made.to_json(), "bank": text_only(bank).to_json()}
    try:
        atomic_write_text(path_of(settings), json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    except OSError:
        pass


def read(settings: Settings, *, site_url: str | None, machine: Callable[[], str]) -> Bank | None:
    """The bank a build left, when it was made from the checkout as it is now, on this machine, with
    these links; else None (absent, unreadable, written by other code, or stale).

    ``machine``: this machine's fingerprint, asked only once the files match.
    """
    try:
        data = json.loads(path_of(settings).read_text(encoding="utf-8"))
        made = Made(**data["made"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if made.version != BANK_VERSION or made.live or made.site_url != site_url:
        return None
    if made.sources != sources_digest(settings) or made.machine != machine():
        return None
    try:
        return Bank.from_json(data["bank"])
    except (KeyError, TypeError, ValueError):
        return None
