"""Bound values in prose: the ``#!v`` and ``#!in`` inlines (pymdownx.inlinehilite custom inlines).

```#!v claim.id key[:spec] [@device]``` renders the value that claim observed, from this build's
evidence (or from the evidence recorded on ``device``), as an element carrying ``data-claim`` and
``data-key``; ```#!in 64 MiB``` marks a number typed in prose as an input a snippet is given.
A reference that names no claim or no observed key is reported by the session's check and fails
the strict build; here it renders as a visible error.
"""

from __future__ import annotations

from typing import Any

from verify.core import binding
from verify.site import session
from verify.site.templating import render


def value_html(ref: binding.Ref, sess: session.Session) -> str:
    try:
        text, status, where = sess.outcome.value(ref)
    except binding.BindError as exc:
        return render("value_error.html", label=ref.label, message=str(exc))
    return render("value.html", ref=ref, text=text, status=status, where=where)


def value_inline(src: str, language: str, class_name: str, md: Any) -> str:
    """```#!v claim.id key```: one observed value."""
    try:
        ref = binding.parse_inline(src)
    except binding.BindError as exc:
        return render("value_error.html", label=src, message=str(exc))
    return value_html(ref, session.get())


def input_inline(src: str, language: str, class_name: str, md: Any) -> str:
    """```#!in 64 MiB```: a number a snippet is given, typed in prose and marked as such."""
    return render("input.html", text=src)
