"""Export the bank as an Anki deck (.apkg): a note per key point, per follow-up and per drill.

A key point's note asks the question with the point's keywords blanked out and answers with the
point, its keywords, the statements that contradict it and the claims' sentences that back it (with
the device and torch they were observed on). A follow-up's note asks the follow-up; a drill's note
shows the code and asks for the value the run observed. The model id, the deck id and every note's
GUID come from fixed names and ids (``kp:<question>:<n>``, ``fu:<question>:<n>``, ``drill:<claim>``),
so importing a re-export updates the notes instead of adding copies (Anki matches notes by GUID).
The styling uses the card's own colours, so it reads in Anki's night mode too.
"""

from __future__ import annotations

import hashlib
import html
from pathlib import Path
from typing import Any

import genanki

from verify.quiz.cards import Card, cards_of

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
code { padding: 0 3px; } pre { padding: .5em .7em; overflow-x: auto; white-space: pre; }
pre code { background: none; padding: 0; }
a { color: inherit; text-decoration: underline; }
.nightMode .contra, .night_mode .contra { border-left-color: rgba(239, 154, 154, .8); }
.nightMode .ev, .night_mode .ev { border-left-color: rgba(165, 214, 167, .8); }"""


def stable_id(name: str) -> int:
    """An Anki model or deck id (a positive 31-bit int) from a name."""
    return int.from_bytes(hashlib.sha256(f"{_NS}:{name}".encode()).digest()[:4], "big") >> 1 | 1 << 30


def note_guid(note_id: str) -> str:
    return genanki.guid_for(_NS, note_id)


MODEL = genanki.Model(
    stable_id("model-v2"), "跑过的面试题（考察点 / 追问 / 预测输出）",
    fields=[{"name": f} for f in FIELDS],
    templates=[{"name": "卡片", "qfmt": _FRONT, "afmt": _BACK}],
    css=_CSS,
    sort_field_index=2,
)


def _tag(text: str) -> str:
    return "_".join(str(text).split())  # Anki tags cannot hold spaces


def _link(card: Card) -> str:
    if card.page_url:
        return f'<a href="{html.escape(card.page_url)}">在网页上打开：{html.escape(card.title)}</a>'
    return f"网页：{html.escape(card.url)}（站点地址未知：在 mkdocs.yml 设 site_url，或导出时加 --site-url）"


def note_for(card: Card) -> genanki.Note:
    fields = {"NoteId": html.escape(card.id), "Kind": html.escape(card.kind_label), "Front": card.front_html,
              "Back": card.back_html, "Source": html.escape(card.source), "Link": _link(card)}
    tags = [f"question::{_tag(card.question)}", f"kind::{_tag(card.kind_label)}", f"difficulty::{card.difficulty}"]
    tags += [f"topic::{_tag(card.topic)}"] if card.topic else []
    tags += [f"tag::{_tag(t)}" for t in card.tags]
    return genanki.Note(model=MODEL, fields=[fields[f] for f in FIELDS], guid=note_guid(card.id), tags=tags)


def export(bank: dict[str, Any], out: Path) -> Path:
    """Write every card of the bank to ``out`` (.apkg); return the path."""
    deck = genanki.Deck(stable_id("deck-v1"), DECK_NAME)
    for card in cards_of(bank):
        deck.add_note(note_for(card))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    genanki.Package(deck).write_to_file(str(out))
    return out
