"""What a site build adds for practice: the ``quizbank`` fence, its parts, ``quiz.json``, the Anki deck,
and the bank the terminal quiz reads.

The quiz page carries an index of the bank as ``<script type="application/json">`` (the ``quizbank``
fence): what the pickers, the due counts and the progress table read (:data:`INDEX_FIELDS`). The rest
of each item (answers, key points, code, prompts) is in a part the page loads with a ``<script>``
element just before the item is shown (:func:`browser_parts`): one per question, one for the drills,
one for the 判断题 and 计算题; a file's name carries a digest of its text, so a browser never mixes a
new index with an old part. A ``<script>``, not a fetch, so the quiz works from a static site opened
without a server too. The hook writes the parts the fence named, the whole bank as ``quiz.json``,
the deck beside it, and the bank for ``verify quiz`` (:mod:`verify.quiz.built`), all from the build's
ledger. A malformed page fails the build, naming the file and the field. A deck is written again only
when the bank changed: genanki stamps every file with the time, so the deck of an unchanged bank is
copied from the project cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from verify import settings as settings_mod
from verify.core.pages import fence_options
from verify.quiz import built
from verify.quiz.bank import BankError, bank_json, build_bank
from verify.quiz.claims import ClaimFacts, gather
from verify.site import session
from verify.site.templating import render
from verify.storage.fs import atomic_write_many, atomic_write_text

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


#: What the quiz page reads of each item before the item's part has loaded: the pickers (title, topic,
#: tags, difficulty, the question a drill or an objective item belongs to, its kind), the due counts
#: (id) and the progress table (title, claim, links). ``quiz.js``, ``quiz-drill.js``,
#: ``quiz-objective.js`` and ``quiz-progress.js`` read nothing else until the part is in.
INDEX_FIELDS: dict[str, tuple[str, ...]] = {
    "questions": ("id", "title", "question", "topic", "tags", "difficulty", "sources", "url", "page_url"),
    "drills": ("id", "question", "claim", "title", "tags", "topic", "difficulty", "url", "page_url"),
    "objective": ("id", "kind", "question", "tags", "difficulty"),
}
#: the bank's own lists the browser does not read: the claims' sentences (the answers carry them)
_NOT_SHOWN = ("evidence",)
PARTS_DIR = "quiz/bank"


def _compact(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def browser_parts(bank: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The quiz page's index of ``bank`` (its JSON) and the parts it loads: ``(index, {path: text})``.

    Each part is a script that hands its items to the page (``QuizUI.arrive(name, items)``); its path,
    relative to the site's root, is named in the index (``parts``), and each item of the index names
    its part (``part``). Everything else the bank carries (tags, topics, the progress file's rules, the
    rules that find a key point's words) is in the index.
    """
    index: dict[str, Any] = {k: v for k, v in bank.items() if k not in INDEX_FIELDS and k not in _NOT_SHOWN}
    files: dict[str, str] = {}
    paths: dict[str, str] = {}

    def part(name: str, items: dict[str, list[Any]]) -> str:
        text = f"QuizUI.arrive({_compact(name)},{_compact(items)});\n"
        path = f"{PARTS_DIR}/{name}.{hashlib.sha256(text.encode()).hexdigest()[:12]}.js"
        files[path], paths[name] = text, path
        return name

    def stub(kind: str, item: Mapping[str, Any], name: str) -> dict[str, Any]:
        return {**{k: item[k] for k in INDEX_FIELDS[kind] if k in item}, "part": name}

    questions, drills, objective = (list(bank.get(k) or []) for k in ("questions", "drills", "objective"))
    index["questions"] = [stub("questions", q, part(f"q-{q['id']}", {"questions": [q]})) for q in questions]
    named = part("drills", {"drills": drills}) if drills else ""
    index["drills"] = [stub("drills", d, named) for d in drills]
    named = part("objective", {"objective": objective}) if objective else ""
    index["objective"] = [stub("objective", o, named) for o in objective]
    index["parts"] = paths
    return index, files


def _browser(settings: Settings, docs_dir: Path, outcome: Ledger | None) -> tuple[Bank, dict[str, Any], dict[str, str]]:
    """The fence's bank, the page's index of it and the parts, made once per session."""
    def make() -> tuple[Bank, dict[str, Any], dict[str, str]]:
        bank, text = _bank_and_text(settings, docs_dir, outcome)
        return (bank, *browser_parts(json.loads(text)))

    sess = session.current()
    if outcome is None or sess is None or sess.outcome is not outcome:
        return make()
    return sess.once(("quiz-browser", str(docs_dir)), make)


#: the parts the quiz page of this build names, written by :func:`write` (a build renders the page first)
_PENDING: dict[str, str] = {}


def write(settings: Settings, docs_dir: Path, site_dir: Path, outcome: Ledger | None,
          site_url: str | None = None) -> dict[str, Path]:
    """Write ``quiz.json``, the quiz page's parts and the deck into ``site_dir``, and leave the bank for the
    terminal; return the paths of ``quiz.json`` and the deck. Raises BankError."""
    from verify.quiz.deck import export  # noqa: PLC0415  (genanki: only when a deck is written)

    bank, text = _bank_and_text(settings, docs_dir, outcome, normal_url(site_url))
    out = {"quiz": Path(site_dir) / "quiz.json", "deck": Path(site_dir) / DECK_FILE}
    atomic_write_text(out["quiz"], text)
    if _PENDING:  # the parts the quiz page names
        atomic_write_many({Path(site_dir) / path: part for path, part in _PENDING.items()})
        _PENDING.clear()
    if outcome is not None:
        leave_for_terminal(settings, outcome)
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


def leave_for_terminal(settings: Settings, outcome: Ledger) -> None:
    """Leave the bank for ``verify quiz`` (:mod:`verify.quiz.built`): the checkout's, with the links of its
    ``mkdocs.yml`` (as the terminal asks for them), made from this build's ledger on this machine.

    Its sources are stamped now, after the ledger was made (claims that ran wrote the evidence cache).
    """
    bank, _text = _bank_and_text(settings, settings.docs_dir, outcome)
    made = built.Made(built.sources_digest(settings), outcome.probe.fingerprint, live=settings.live,
                      site_url=bank.site_url)
    built.write(settings, bank, made)


def quizbank_fence(source: str, language: str, css_class: str, options: dict, md, **kwargs) -> str:
    """Format ``quizbank`` fences. The fence body may name the docs folder: ``docs: path``."""
    from pymdownx.superfences import SuperFencesException  # noqa: PLC0415

    settings = settings_mod.for_site()
    given = fence_options(source).options.get("docs")
    docs = Path(given) if given else settings.docs_dir
    try:
        # claims' sentences, values and drills fill the bank; a site without snippets (a quiz alone) has none
        outcome = session.get().outcome if settings.snippets_dir.is_dir() else None
        bank, index, parts = _browser(settings, docs, outcome)
    except BankError as exc:
        raise SuperFencesException(str(exc)) from exc
    _PENDING.update(parts)
    # "<" escaped as \u003c keeps "</script>" inside answers from closing the element; still valid JSON
    payload = _compact(index).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return render("quizbank.html", css_class=css_class, count=len(bank.questions), payload=Markup(payload))
