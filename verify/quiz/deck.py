"""The bank as review cards and as an Anki deck (.apkg): a card per key point, per follow-up and per drill.

Each card is small enough to review: a key point's front is the question with the point's keywords
blanked out; its back is the point, its keywords and synonyms, the statements that contradict it,
and the sentences of the claims that back it (those that mention its keywords), with the device
and torch they were observed on. A follow-up's card asks the follow-up; a drill's card shows the
code and asks for the value the run observed. The HTML comes from ``templates/deck.html``
(autoescaped).

In the deck, the model id, the deck id and every note's GUID come from fixed names and ids
(``kp:<question>:<n>``, ``fu:<question>:<n>``, ``drill:<claim>``), so importing a re-export
updates the notes instead of adding copies (Anki matches notes by GUID). The styling uses the
card's own colours, so it reads in Anki's night mode too. Jinja2 and genanki are imported when a
card is made.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import genanki
from markupsafe import Markup, escape

from verify.quiz.schema import Bank, ClaimSentence, Drill, FollowUp, KeyPoint, Question

KINDS = {"kp": "考察点", "fu": "追问", "drill": "预测输出"}
EVIDENCE_PER_POINT = 2
TEMPLATES = Path(__file__).resolve().parent / "templates"
_CODE = re.compile(r"`([^`]+)`")
_BLANK = "\x00"  # where a keyword was, until the blank is drawn


@dataclass(frozen=True)
class Card:
    id: str
    kind: str
    question: str
    title: str
    front_html: str
    back_html: str
    url: str
    page_url: str | None = None
    topic: str = ""
    difficulty: int = 1
    source: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def kind_label(self) -> str:
        return KINDS[self.kind]


# --- the cards' HTML ------------------------------------------------------------------------

def _code_html(text: str) -> Markup:
    parts = _CODE.split(text)  # odd places: what stood between backticks
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


def text_html(text: str) -> Markup:
    """Escaped text with `backticks` as code and line breaks kept."""
    return Markup(_code_html(text).replace("\n", Markup("<br>")))


def cloze(point: str, keywords: Sequence[str]) -> Markup:
    """The point as HTML with every keyword blanked (numbers and Latin words only at word edges)."""
    out = point
    for kw in sorted(keywords, key=len, reverse=True):
        left = r"(?<![0-9A-Za-z_])" if re.match(r"\w", kw[0], re.A) else ""
        right = r"(?![0-9A-Za-z_])" if re.match(r"\w", kw[-1], re.A) else ""
        out = re.sub(left + re.escape(kw) + right, _BLANK, out, flags=re.I)
    return Markup(_code_html(out).replace(_BLANK, Markup('<span class="blank">\u3000</span>')))


@functools.cache
def _macros() -> Any:
    """The macros of ``templates/deck.html``, compiled once."""
    import jinja2  # noqa: PLC0415

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(text_html=text_html, cloze=cloze)
    return env.get_template("deck.html").module


def _html(macro: str, *args: object) -> str:
    return str(getattr(_macros(), macro)(*args)).strip()


# --- the cards --------------------------------------------------------------------------------

def backing(kp: KeyPoint, q: Question, evidence: Mapping[str, ClaimSentence]) -> list[tuple[str, str]]:
    """(sentence, where) of the question's claims that mention the point's keywords, best first."""
    from verify.quiz.scoring import keywords_in  # noqa: PLC0415

    ranked = []
    for i, cid in enumerate(q.claims):
        ev = evidence.get(cid)
        if not ev:
            continue
        hits = len(keywords_in(ev.sentence, kp))
        if hits:
            ranked.append((-hits, i, ev.sentence, ev.where))
    return [(s, w) for _h, _i, s, w in sorted(ranked)[:EVIDENCE_PER_POINT]]


def _card(q: Question, card_id: str, kind: str, front: str, back: str, *, url: str | None = None,
          page_url: str | None = None) -> Card:
    return Card(id=card_id, kind=kind, front_html=front, back_html=back, question=q.id, title=q.title,
                url=url or q.url, page_url=page_url if url else q.page_url, topic=q.topic,
                difficulty=q.difficulty, tags=q.tags, source=q.source)


def _point_card(q: Question, n: int, kp: KeyPoint, evidence: Mapping[str, ClaimSentence]) -> Card:
    return _card(q, f"kp:{q.id}:{n}", "kp", _html("point_front", q, n, kp),
                 _html("point_back", kp, backing(kp, q, evidence)))


def _follow_up_card(q: Question, n: int, fu: FollowUp) -> Card:
    return _card(q, f"fu:{q.id}:{n}", "fu", _html("follow_up_front", q, fu), _html("follow_up_back", fu))


def _drill_card(d: Drill, q: Question) -> Card:
    return _card(q, d.id, "drill", _html("drill_front", d), _html("drill_back", d), url=d.url, page_url=d.page_url)


def cards_of(bank: Bank) -> Iterator[Card]:
    """Every card of the bank: per question its key points and follow-ups, then the drills."""
    by_id = {q.id: q for q in bank.questions}
    for q in bank.questions:
        for n, kp in enumerate(q.key_points, 1):
            yield _point_card(q, n, kp, bank.evidence)
        for n, fu in enumerate(q.follow_ups, 1):
            yield _follow_up_card(q, n, fu)
    for d in bank.drills:
        if d.question in by_id:
            yield _drill_card(d, by_id[d.question])


# --- the Anki deck ------------------------------------------------------------------------------

_NS = "verified-infra-interview"
DECK_NAME = "跑过的面试题::PyTorch 与 AI Infra"
FIELDS = ["NoteId", "Kind", "Front", "Back", "Source", "Link"]

_FRONT = """<div class="kind">{{Kind}}</div>
<div class="front">{{Front}}</div>"""

_BACK = """{{FrontSide}}
<hr id="answer">
<div class="back">{{Back}}</div>
<div class="src">{{Source}}</div>
<div class="link">{{Link}}</div>"""

# Colours follow the card (Anki sets them for light and night mode); accents are translucent.
_CSS = """.card { font-family: "Noto Sans CJK SC", "PingFang SC", sans-serif; font-size: 18px; text-align: left;
  line-height: 1.5; color: inherit; background: inherit; }
.kind { font-size: 13px; opacity: .65; letter-spacing: .05em; }
.q { font-size: 21px; font-weight: bold; margin: .2em 0 .4em; }
.ask { margin: .3em 0; } .blank { border-bottom: 2px solid currentColor; padding: 0 1.2em; opacity: .7; }
.point { font-weight: bold; } .kw, .src, .link, .where { font-size: 14px; opacity: .75; }
.contra { font-size: 15px; border-left: 3px solid rgba(211, 47, 47, .7); padding-left: .5em; margin: .4em 0; }
.ev { border-left: 3px solid rgba(46, 125, 50, .7); padding-left: .5em; margin: .4em 0; }
code, pre { font-family: "JetBrains Mono", "DejaVu Sans Mono", monospace; font-size: 14px;
  background: rgba(127, 127, 127, .16); color: inherit; border-radius: 3px; }
code { padding: 0 3px; } pre { padding: .5em .7em; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
pre code { background: none; padding: 0; }
a { color: inherit; text-decoration: underline; }
.nightMode .contra, .night_mode .contra { border-left-color: rgba(239, 154, 154, .8); }
.nightMode .ev, .night_mode .ev { border-left-color: rgba(165, 214, 167, .8); }"""


def stable_id(name: str) -> int:
    """An Anki model or deck id (a positive 31-bit int) from a name."""
    return int.from_bytes(hashlib.sha256(f"{_NS}:{name}".encode()).digest()[:4], "big") >> 1 | 1 << 30


def note_guid(note_id: str) -> str:
    return str(genanki.guid_for(_NS, note_id))


MODEL = genanki.Model(
    stable_id("model-v2"), "跑过的面试题（考察点 / 追问 / 预测输出）",
    fields=[{"name": f} for f in FIELDS],
    templates=[{"name": "卡片", "qfmt": _FRONT, "afmt": _BACK}],
    css=_CSS,
    sort_field_index=2,
)


def _tag(text: str) -> str:
    return "_".join(str(text).split())  # Anki tags cannot hold spaces


def note_for(card: Card) -> genanki.Note:
    fields = {"NoteId": escape(card.id), "Kind": escape(card.kind_label), "Front": card.front_html,
              "Back": card.back_html, "Source": escape(card.source), "Link": _html("link", card)}
    tags = [f"question::{_tag(card.question)}", f"kind::{_tag(card.kind_label)}", f"difficulty::{card.difficulty}"]
    tags += [f"topic::{_tag(card.topic)}"] if card.topic else []
    tags += [f"tag::{_tag(t)}" for t in card.tags]
    return genanki.Note(model=MODEL, fields=[str(fields[f]) for f in FIELDS], guid=note_guid(card.id), tags=tags)


def export(bank: Bank, out: Path) -> Path:
    """Write every card of the bank to ``out`` (.apkg); return the path."""
    deck = genanki.Deck(stable_id("deck-v1"), DECK_NAME)
    for card in cards_of(bank):
        deck.add_note(note_for(card))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # written beside ``out``, fsynced and renamed over it: a full disk leaves an earlier deck whole
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        genanki.Package(deck).write_to_file(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as an ordinary file is, not the temporary's 0600
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out
