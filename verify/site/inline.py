"""Bound values in prose: the ``#!v``, ``#!in`` and ``#!see`` inlines (pymdownx.inlinehilite custom inlines).

```#!v claim.id key[:spec] [@device]``` renders the value that claim observed, from this build's
evidence (or from the evidence recorded on ``device``), as an element carrying ``data-claim`` and
``data-key``; ```#!in 64 MiB``` marks a number typed in prose as an input a snippet is given.
A reference that names no claim or no observed key is reported by the session's check and fails
the strict build; here it renders as a visible error.

```#!see claim.id``` ties a sentence a candidate repeats in an interview (面试时这样说, a 考察点
bullet) to the claim that backs it: a small link to the claim's sentence whose text is the claim's
scope tag (:func:`verify.core.scope.tag`, the words beside the sentence itself), so a CPU result in
a GPU answer shows as one. An id no snippet declares is an error that fails the strict build. In
those two sections a ``#!v`` value carries its claim's tag too, unless a ``#!see`` of the same claim
follows it in the same sentence (:class:`ScopedSections`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from markdown.postprocessors import Postprocessor

from verify.core import binding, scope
from verify.site import fences, session
from verify.site.fences import value_html
from verify.site.templating import render

log = logging.getLogger("mkdocs.verify")

#: the sections a candidate reads and repeats: a bound value in them shows its claim's scope tag
SCOPED_SECTIONS = ("面试时这样说", "考察点")
_SECTION = re.compile(r"<h([23])\b[^>]*>\s*(?:" + "|".join(SCOPED_SECTIONS) + r")\b")
_NEXT_HEADING = re.compile(r"<h[1-3]\b")
_VALUE = re.compile(r'<span class="vf-val [^"]*" data-claim="([^"]+)"[^>]*>[^<]*</span>'
                    r'(?:<sup class="vf-val-note"[^>]*>[^<]*</sup>)?')
# a sentence ends at its punctuation or its paragraph or item; a tag is skipped whole (a title may hold 。)
_SENTENCE_END = re.compile(r"</(?:p|li)>|<[^>]*>|[。！？；]")
_SEE_HREF = re.compile(r'(<a class="vf-see" href=")([^"]*)(" data-claim="([^"]+)")')


def value_inline(src: str, language: str, class_name: str, md: Any) -> str:
    """```#!v claim.id key```: one observed value."""
    _attach(md)
    try:
        ref = binding.parse_inline(src)
    except binding.BindError as exc:
        return render("value_error.html", label=src, message=str(exc))
    return value_html(ref, session.get())


def input_inline(src: str, language: str, class_name: str, md: Any) -> str:
    """```#!in 64 MiB```: a number a snippet is given, typed in prose and marked as such."""
    return render("input.html", text=src)


def see_html(cid: str, sess: session.Session) -> str | None:
    """The link to ``cid``'s sentence whose text is its scope tag; None when no snippet declares ``cid``."""
    spec = sess.outcome.registry.claims.get(cid)
    if spec is None:
        return None
    seen = fences.machines(cid, sess)
    # the record the claim's own sentence is tagged from (its fence): this machine's, else the first other one
    made = seen[0].record if seen and seen[0].record is not None else next((m.record for m in seen[1:]), None)
    page = sess.page_of(cid) or ""
    # another question's page; :class:`ScopedSections` makes it ``#claim-…`` on the page that shows the claim
    href = f"../{page.removeprefix('questions/').removesuffix('.md')}/#claim-{cid}" if page else f"#claim-{cid}"
    title = fences.statement_html(cid, spec.statement, sess, plain=True).striptags()
    return render("see.html", cid=cid, href=href, tag=scope.tag(spec, made), backend=scope.backend(spec, made),
                  title=title, pending=sess.outcome.waiting(cid) is not None)


def see_inline(src: str, language: str, class_name: str, md: Any) -> str:
    """```#!see claim.id```: the scope tag of the claim that backs this sentence, linked to it."""
    _attach(md)
    cid = src.strip()
    html = see_html(cid, session.get())
    if html is None:
        message = "没有任何 snippet 声明这个 id"
        log.error("verify: `#!see %s`: %s (no snippet declares this claim id)", cid, message)
        return render("see_error.html", label=cid, message=message)
    return html


class ScopedSections(Postprocessor):
    """The page's HTML: a bound value in 面试时这样说 or 考察点 followed by its claim's tag (unless a ``#!see``
    of the same claim follows it in the same sentence); a ``#!see`` of a claim this page shows links in place."""

    def run(self, text: str) -> str:
        sess = session.get()
        spans = []
        for m in _SECTION.finditer(text):
            nxt = _NEXT_HEADING.search(text, m.end())
            spans.append((m.end(), nxt.start() if nxt else len(text)))
        edits = []
        for start, end in spans:
            for v in _VALUE.finditer(text, start, end):
                cid = v.group(1)
                rest = text[v.end():_sentence_end(text, v.end(), end)]
                if any(s.group(4) == cid for s in _SEE_HREF.finditer(rest)):
                    continue
                html = see_html(cid, sess)
                if html is not None:
                    edits.append((v.end(), html))
        for at, html in reversed(edits):
            text = text[:at] + html + text[at:]
        return _SEE_HREF.sub(lambda m: m.group(1) + (f"#claim-{m.group(4)}" if f'id="claim-{m.group(4)}"' in text
                                                      else m.group(2)) + m.group(3), text)


def _sentence_end(text: str, start: int, end: int) -> int:
    for m in _SENTENCE_END.finditer(text, start, end):
        if not m.group().startswith("<") or m.group() in ("</p>", "</li>"):
            return m.start()
    return end


def _attach(md: Any) -> None:
    """Add :class:`ScopedSections` to the page's Markdown (MkDocs makes one per page) on its first inline."""
    if md is not None and "vf_scope" not in md.postprocessors:
        md.postprocessors.register(ScopedSections(md), "vf_scope", 1)
