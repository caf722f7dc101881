"""Export the bank as an Anki deck (.apkg).

The model id, the deck id and every note's GUID are derived from fixed names and question ids,
so importing a re-export after a page was edited updates the existing notes instead of adding
copies (Anki matches notes by GUID).
"""

from __future__ import annotations

import hashlib
import html
from pathlib import Path
from typing import Any

import genanki

_NS = "verified-infra-interview"
DECK_NAME = "跑过的面试题::PyTorch 与 AI Infra"
FIELDS = ["QuestionId", "Question", "OrdinaryAnswer", "BetterAnswer", "KeyPoints", "FollowUps",
          "Source", "Link"]

_FRONT = """<div class="q">{{Question}}</div>
<div class="src">{{Source}}</div>"""

_BACK = """{{FrontSide}}
<hr id="answer">
<h3>更好的回答</h3>{{BetterAnswer}}
<h3>考察点</h3>{{KeyPoints}}
<h3>普通回答</h3>{{OrdinaryAnswer}}
<h3>追问</h3>{{FollowUps}}
<div class="link">{{Link}}</div>"""

_CSS = """.card { font-family: "Noto Sans CJK SC", sans-serif; font-size: 18px; text-align: left; }
.q { font-size: 22px; font-weight: bold; } .src, .link { color: #777; font-size: 14px; }
code { background: #f3f3f3; padding: 0 3px; } .kw { color: #555; font-size: 14px; }"""


def stable_id(name: str) -> int:
    """An Anki model or deck id (a positive 31-bit int) from a name."""
    return int.from_bytes(hashlib.sha256(f"{_NS}:{name}".encode()).digest()[:4], "big") >> 1 | 1 << 30


def note_guid(question_id: str) -> str:
    return genanki.guid_for(_NS, question_id)


MODEL = genanki.Model(
    stable_id("model-v1"), "面试题（跑过的）",
    fields=[{"name": f} for f in FIELDS],
    templates=[{"name": "问答", "qfmt": _FRONT, "afmt": _BACK}],
    css=_CSS,
    sort_field_index=1,
)


def _tag(text: str) -> str:
    return "_".join(text.split())  # Anki tags cannot hold spaces


def _key_points(q: dict[str, Any]) -> str:
    items = []
    for kp in q["key_points"]:
        words = []
        for k in kp["keywords"]:
            syn = kp["synonyms"].get(k, [])
            words.append(html.escape(k) + (f"（{html.escape('、'.join(syn))}）" if syn else ""))
        items.append(f"<li>{html.escape(kp['point'])}<div class=\"kw\">关键词：{'；'.join(words)}</div></li>")
    return "<ul>" + "".join(items) + "</ul>"


def note_for(q: dict[str, Any], site_url: str | None = None) -> genanki.Note:
    link = (site_url.rstrip("/") + "/" if site_url else "") + q["url"]
    fields = {
        "QuestionId": html.escape(q["id"]),
        "Question": html.escape(q["question"]),
        "OrdinaryAnswer": q.get("ordinary_answer_html") or html.escape(q["ordinary_answer"]),
        "BetterAnswer": q.get("better_answer_html") or html.escape(q["better_answer"]),
        "KeyPoints": _key_points(q),
        "FollowUps": "<dl>" + "".join(f"<dt>{html.escape(f['q'])}</dt><dd>{html.escape(f['a'])}</dd>"
                                      for f in q["follow_ups"]) + "</dl>",
        "Source": html.escape("；".join(f"{s['company']} · {s['round']}" for s in q["sources"])),
        "Link": f'<a href="{html.escape(link)}">{html.escape(q["title"])}</a>',
    }
    tags = [f"topic::{_tag(t)}" for t in q["tags"]] + [f"difficulty::{q['difficulty']}"]
    return genanki.Note(model=MODEL, fields=[fields[f] for f in FIELDS], guid=note_guid(q["id"]), tags=tags)


def export(bank: dict[str, Any], out: Path, site_url: str | None = None) -> Path:
    """Write one note per question to ``out`` (.apkg); return the path."""
    deck = genanki.Deck(stable_id("deck-v1"), DECK_NAME)
    for q in bank["questions"]:
        deck.add_note(note_for(q, site_url))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    genanki.Package(deck).write_to_file(str(out))
    return out
