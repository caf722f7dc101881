"""The answers as the quiz, the terminal and the cards show them: nothing left that only the site draws.

On the site a ``claim`` fence is a sentence with a marker whose evidence opens in place, a ``bench``
fence a table and a plot, ```#!v claim key``` a bound value. Off the site:

- a claim fence becomes its sentence with the values filled in; a claim whose values were
  observed nowhere (a GPU claim on a CPU build) becomes a note saying so, never a placeholder;
- a ``bench`` fence and an image become one line, 「图：… 见网页」, linked when the page's
  address is known; ``evidence``/``ledger``/``quizbank`` fences are dropped;
- ```#!v ...``` becomes the value, ```#!in 64 MiB``` its text;
- a sentence that tells the reader to click the page's markers (「点开…」) is dropped: the quiz,
  the terminal and the cards have none;
- a link to another page of the site points at its address (absolute when ``site_url`` is known).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from verify.core.pages import _NEWLINES, _tokens

NOT_OBSERVED = "（这一句的数值要在 GPU 上运行后才有，本站构建时没有测到，见网页。）"
UNSEEN_VALUE = "（本机未测，见网页）"
SITE_ONLY = ("点开", "徽章")
_DROPPED = ("evidence", "ledger", "quizbank")
_BOUND = re.compile(r"`#!v ([^`]+)`")
_INPUT = re.compile(r"`#!in ([^`]+)`")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
_SITE_ONLY = re.compile(r"[^。！？\n]*(?:" + "|".join(SITE_ONLY) + r")[^。！？\n]*[。！？]?")


def figure_line(title: str, page_url: str | None) -> str:
    where = f"[见网页]({page_url})" if page_url else "见网页"
    return f"图：{title}（表格与曲线{where}）"


def _bench_title(source: str) -> str:
    group, opts = "", {}
    for line in source.strip().splitlines():
        key, sep, value = line.split("#", 1)[0].partition(":")
        if sep:
            opts[key.strip()] = value.strip()
        elif key.strip():
            group = key.strip()
    if "title" in opts:
        return opts["title"]
    if "compare" in opts:
        return "基准对比 " + " 与 ".join(opts["compare"].split())
    return f"基准 {group}"


def _fences(text: str, sentences: Mapping[str, str | None], page_url: str | None) -> tuple[str, list[str]]:
    lines = text.split("\n")
    out: list[str] = []
    ids: list[str] = []
    pos = 0
    for tok in _tokens(text):
        if tok.type != "fence" or not tok.map:
            continue
        kind = (tok.info.split() or [""])[0]
        if kind not in ("claim", "bench", *_DROPPED):
            continue
        start, end = tok.map
        indent = re.match(r"\s*", lines[start]).group(0)  # type: ignore[union-attr]
        out += lines[pos:start]
        said: str | None = None
        if kind == "claim":
            cid = (tok.content.split() or [""])[0]
            if cid:
                ids.append(cid)
            if cid in sentences:  # a claim the caller has no sentence for is left out
                said = sentences[cid] or NOT_OBSERVED
        elif kind == "bench":
            said = figure_line(_bench_title(tok.content), page_url)
        if said:
            out += [indent.rstrip(), indent + said, indent.rstrip()]
        pos = end
    out += lines[pos:]
    return "\n".join(out), ids


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
    text, ids = _fences(_NEWLINES.sub("\n", markdown_text), sentences, page_url)
    text = _BOUND.sub(lambda m: values.get(m.group(1).strip()) or UNSEEN_VALUE, text)
    text = _INPUT.sub(lambda m: m.group(1).strip(), text)
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
    out: list[str] = []
    in_adm = False
    for line in markdown_text.splitlines():
        m = re.match(r'^(?:!!!|\?\?\?\+?)\s*(\w+)(?:\s+"([^"]*)")?\s*$', line)
        if m:
            in_adm = True
            out.append(f"> **{m.group(2) or m.group(1)}**")
            continue
        if in_adm and (line.startswith("    ") or not line.strip()):
            out.append(("> " + line[4:]).rstrip() if line.strip() else ">")
            continue
        in_adm = False
        out.append(line)
    return "\n".join(out).strip().rstrip(">").strip()


def site_url(root: Path) -> str | None:
    """``site_url`` of the checkout's ``mkdocs.yml`` (ending in ``/``), or None when it names none."""
    try:
        text = (Path(root) / "mkdocs.yml").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^site_url:\s*['\"]?([^'\"\s#]+)", text, re.M)
    return (m.group(1).rstrip("/") + "/") if m else None
