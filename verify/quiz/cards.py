"""The bank as review cards: one per key point, one per follow-up, one per drill (the Anki deck's notes).

Each card is small enough to review: a key point's front is the question with the point's keywords
blanked out; its back is the point, its keywords and synonyms, the statements that contradict it,
and the sentences of the claims that back it (those that mention its keywords), with the device
and torch they were observed on.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

KINDS = {"kp": "考察点", "fu": "追问", "drill": "预测输出"}
_CODE = re.compile(r"`([^`]+)`")
EVIDENCE_PER_POINT = 2


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
    tags: list[str] = field(default_factory=list)

    @property
    def kind_label(self) -> str:
        return KINDS[self.kind]


def text_html(text: str) -> str:
    """Escaped text with `backticks` as code and line breaks kept."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text)).replace("\n", "<br>")


def cloze(point: str, keywords: list[str]) -> str:
    """The point as HTML with every keyword blanked (numbers and Latin words only at word edges)."""
    out = html.escape(point)
    for kw in sorted(keywords, key=len, reverse=True):
        k = html.escape(kw)
        left = r"(?<![0-9A-Za-z_])" if re.match(r"\w", kw[0], re.A) else ""
        right = r"(?![0-9A-Za-z_])" if re.match(r"\w", kw[-1], re.A) else ""
        out = re.sub(left + re.escape(k) + right, '<span class="blank">\u3000</span>', out, flags=re.I)
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", out)


def backing(kp: dict[str, Any], q: dict[str, Any], evidence: dict[str, dict[str, str]]) -> list[tuple[str, str]]:
    """(sentence, where) of the question's claims that mention the point's keywords, best first."""
    from verify.quiz.scoring import score  # noqa: PLC0415  (jieba: only when cards are made)

    ranked = []
    for i, cid in enumerate(q.get("claims", [])):
        ev = evidence.get(cid)
        if not ev:
            continue
        hits = sum(v is not None for v in score(ev["sentence"], [kp]).points[0].hits.values())
        if hits:
            ranked.append((-hits, i, ev["sentence"], ev.get("where", "")))
    return [(s, w) for _h, _i, s, w in sorted(ranked)[:EVIDENCE_PER_POINT]]


def _common(q: dict[str, Any]) -> dict[str, Any]:
    return {"question": q["id"], "title": q["title"], "url": q["url"], "page_url": q.get("page_url"),
            "topic": q.get("topic", ""), "difficulty": q["difficulty"], "tags": list(q["tags"]),
            "source": "；".join(f"{s['company']} · {s['round']}" for s in q["sources"])}


def _point_card(q: dict[str, Any], n: int, kp: dict[str, Any], evidence: dict[str, dict[str, str]]) -> Card:
    total = len(q["key_points"])
    front = (f'<div class="q">{html.escape(q["question"])}</div>'
             f'<div class="ask">考察点 {n}/{total}：{cloze(kp["point"], kp["keywords"])}</div>')
    words = "；".join(html.escape(k) + (f"（{html.escape('、'.join(kp['synonyms'][k]))}）" if kp["synonyms"].get(k) else "")
                     for k in kp["keywords"])
    back = [f'<div class="point">{text_html(kp["point"])}</div>', f'<div class="kw">关键词：{words}</div>']
    if kp.get("contradicts"):
        back.append('<div class="contra">说反了的常见说法（答出来会丢掉这一点）：'
                    + "；".join(html.escape(c) for c in kp["contradicts"]) + "</div>")
    for sentence, where in backing(kp, q, evidence):
        back.append(f'<div class="ev">{text_html(sentence)}'
                    + (f'<div class="where">运行于 {html.escape(where)}</div>' if where else "") + "</div>")
    return Card(id=f"kp:{q['id']}:{n}", kind="kp", front_html=front, back_html="".join(back), **_common(q))


def _follow_up_card(q: dict[str, Any], n: int, fu: dict[str, str]) -> Card:
    front = (f'<div class="q">{html.escape(q["question"])}</div>'
             f'<div class="ask">追问：{text_html(fu["q"])}</div>')
    return Card(id=f"fu:{q['id']}:{n}", kind="fu", front_html=front, back_html=f"<div>{text_html(fu['a'])}</div>",
                **_common(q))


def drill_where(d: dict[str, Any]) -> str:
    build = f"+{d['torch_build']}" if d.get("torch_build") else ""
    return f"{d['device']} · torch {d['torch']}{build}" + (f" · {d['date']}" if d.get("date") else "")


def _drill_card(d: dict[str, Any], q: dict[str, Any]) -> Card:
    front = (f'<div class="q">{html.escape(d["title"])}</div>'
             f'<pre><code>{html.escape(d["code"])}</code></pre><div class="ask">{text_html(d["prompt"])}</div>')
    back = (f'<div class="point">{text_html(d["answer_text"])}</div>'
            f'<div class="where">观测于 {html.escape(drill_where(d))}</div>'
            f'<div class="ev">{text_html(d["sentence"])}</div>')
    common = dict(_common(q), url=d["url"], page_url=d.get("page_url"))
    return Card(id=d["id"], kind="drill", front_html=front, back_html=back, **common)


def cards_of(bank: dict[str, Any]) -> Iterator[Card]:
    """Every card of the bank: per question its key points and follow-ups, then the drills."""
    evidence = bank.get("evidence", {})
    by_id = {q["id"]: q for q in bank["questions"]}
    for q in bank["questions"]:
        for n, kp in enumerate(q["key_points"], 1):
            yield _point_card(q, n, kp, evidence)
        for n, fu in enumerate(q["follow_ups"], 1):
            yield _follow_up_card(q, n, fu)
    for d in bank.get("drills", []):
        if d["question"] in by_id:
            yield _drill_card(d, by_id[d["question"]])
