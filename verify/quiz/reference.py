"""The answers as the quiz, the terminal and the cards show them: nothing left that only the site draws.

On the site a ``claim`` fence is a sentence with a marker whose evidence opens in place, a ``bench``
fence a table and a plot, ```#!v claim key``` a bound value. Off the site:

- a claim fence becomes its sentence with the values filled in; a claim whose values were
  observed nowhere (a GPU claim on a CPU build) becomes a note saying so, never a placeholder;
- a ``bench`` fence and an image become one line, 「图：… 见网页」, linked when the page's
  address is known; ``evidence``/``ledger``/``quizbank`` fences are dropped;
- ```#!v ...``` becomes the value, ```#!in 64 MiB``` its text; ```#!see claim.id``` (on the site the
  claim's scope tag, linked to its sentence) is dropped: its link leads nowhere here;
- a sentence that tells the reader to click the page's markers (「点开…」) is dropped: the quiz,
  the terminal and the cards have none;
- a link to another page of the site points at its address (absolute when ``site_url`` is known).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from verify.core import binding, pages

NOT_OBSERVED = "（这一句的数值要在 GPU 上运行后才有，本站构建时没有测到，见网页。）"
UNSEEN_VALUE = "（构建机未测，见网页）"
SITE_ONLY = ("点开", "徽章")
_DROPPED = ("evidence", "ledger", "quizbank")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
_SEE = re.compile(r" ?`#!see [^`\n]*`")
_SITE_ONLY = re.compile(r"[^。！？\n]*(?:" + "|".join(SITE_ONLY) + r")[^。！？\n]*[。！？]?")


def figure_line(title: str, page_url: str | None) -> str:
    where = f"[见网页]({page_url})" if page_url else "见网页"
    return f"图：{title}（表格与曲线{where}）"


def _bench_title(fence: pages.Fence) -> str:
    opts = fence.options.options
    if "title" in opts:
        return opts["title"]
    if "compare" in opts:
        return "基准对比 " + " 与 ".join(opts["compare"].split())
    return f"基准 {fence.options.name}"


def _said(fence: pages.Fence, sentences: Mapping[str, str | None], page_url: str | None) -> str | None:
    """What stands for a fence off the site: a claim's sentence, a figure's line; None: nothing."""
    if fence.kind == "claim":
        cid = fence.word
        return (sentences[cid] or NOT_OBSERVED) if cid in sentences else None  # a claim without a sentence is left out
    if fence.kind == "bench":
        return figure_line(_bench_title(fence), page_url)
    return None


def _written_out(doc: pages.Doc, sentences: Mapping[str, str | None], values: Mapping[str, str | None],
                 page_url: str | None) -> tuple[str, list[str]]:
    """The fences and inline references of the text replaced; the claims it shows."""
    fences = [f for f in doc.fences if f.kind in ("claim", "bench", *_DROPPED)]
    edits = pages.replace_fences(doc, fences, lambda f: _said(f, sentences, page_url))
    for ref in (r for r in doc.refs if r.span[0] < r.span[1]):
        said = (values.get(binding.ref_key(ref.source)) or UNSEEN_VALUE) if ref.kind == "v" else ref.source.strip()
        edits.append((*ref.span, said))
    return pages.splice(doc.text, edits), [f.word for f in fences if f.kind == "claim" and f.word]


def _link(target: str, site_base: str) -> str:
    """A page link (``graph-fusion.md#x``, ``../index.md``) as the address the site gives it."""
    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
        return target
    path, _, frag = target.partition("#")
    if path.endswith(".md"):
        path = path[:-3] + "/"
        path = "" if path == "index/" else path.replace("/index/", "/")
    from urllib.parse import urljoin  # noqa: PLC0415

    return urljoin(site_base + "questions/", path) + (f"#{frag}" if frag else "")


def clean(markdown_text: str, sentences: Mapping[str, str | None], values: Mapping[str, str | None],
          page_url: str | None = None, site_base: str | None = None) -> tuple[str, list[str]]:
    """The section as plain Markdown for the quiz, the terminal and the cards; and the claims it shows.

    ``sentences``: claim id -> sentence (None: observed nowhere; a claim not in it is left out).
    ``values``: inline ``#!v`` source -> its text. ``site_base``: the site's address ending in
    ``/`` (absolute, or relative to where the text is shown); links stay text without it.
    """
    text, ids = _written_out(pages.read(_SEE.sub("", markdown_text)), sentences, values, page_url)
    text = _IMAGE.sub(lambda m: figure_line(m.group(1) or "插图", page_url).replace("表格与曲线", ""), text)
    if site_base is not None:
        text = _LINK.sub(lambda m: f"[{m.group(1)}]({_link(m.group(2), site_base)})", text)
    else:
        text = _LINK.sub(lambda m: m.group(1), text)
    text = "\n".join(_SITE_ONLY.sub("", line) if any(w in line for w in SITE_ONLY) else line
                     for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip(), ids


def plain_text(markdown_text: str) -> str:
    """Markdown for a terminal or a card: admonitions turned into quotes with their title."""
    doc = pages.read(markdown_text)
    lines = list(doc.lines)
    for adm in doc.admonitions:
        if not adm.top or lines[adm.start][:1].isspace():
            continue
        lines[adm.start] = f"> **{adm.title or adm.types[0]}**"
        end = adm.end
        while end < len(lines) and not lines[end].strip():  # the blank lines after it stay in the quote
            end += 1
        for i in range(adm.start + 1, end):
            lines[i] = ("> " + lines[i][4:]).rstrip() if lines[i].strip() else ">"
    return "\n".join(lines).strip().rstrip(">").strip()
