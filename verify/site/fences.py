"""HTML for the ``claim``, ``evidence`` and ``ledger`` fences (pymdownx.superfences custom fences).

Rendering lives in the Markdown layer, not in MkDocs plugin events, so the same ``mkdocs.yml``
builds with MkDocs and with Zensical. Every fence asks :func:`verify.session.get` for evidence;
nothing here runs a claim itself.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from markupsafe import Markup, escape

from verify.core import binding, evidence, ledger, scope, states
from verify.core.matchers import describe, normalise
from verify.core.records import Evidence, JsonObject, Outcome
from verify.core.units import fmt_time
from verify.site import checks, rendercache, session
from verify.site.templating import LABELS as TEXT
from verify.site.templating import render
from verify.site.templating import state
from verify.site.code import function_source, highlight

log = logging.getLogger("mkdocs.verify")


def _short_date(iso: str | None) -> str:
    return (iso or "")[:10]


def fmt_value(value: Any) -> str:
    """Readable text for an observed value; timing dicts show median, spread and rounds."""
    if isinstance(value, dict) and "median_s" in value:
        return (f"中位数 {fmt_time(value['median_s'])}（IQR/中位数 {value.get('spread', 0) * 100:.0f}%，"
                f"n={value.get('n')}）")
    if isinstance(value, dict) and value and all(isinstance(v, dict) and "median_s" in v for v in value.values()):
        return "；".join(f"{k}: {fmt_value(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.4g}"
    text = repr(_rounded(normalise(value))) if not isinstance(value, str) else value
    return text if len(text) <= 400 else text[:400] + " …"


def _rounded(value: Any) -> Any:
    """Four significant digits for every float inside a structure: readable, not false precision."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def _origin_text(origin: session.OriginNote | None) -> str:
    """``合并自 <bundle>（其提交 …，在/不在本仓库历史中）`` of a merged record; "" for one run by this checkout."""
    if origin is None:
        return ""
    return TEXT["origin"].format(origin.bundle, origin.commit or TEXT["origin_no_commit"],
                                 TEXT["origin_history"][origin.in_history])


def _where(record: Evidence | None, sess: session.Session) -> str:
    if record is None:
        return ""
    merged = _origin_text(sess.origin(record))
    return ledger.where(record) + (f" · {merged}" if merged else "")


def _values_rows(spec_expected: JsonObject, record: Evidence | None) -> list[tuple[str, str, str]]:
    """(key, expected, observed) per observed item: the expected ones first, then the extra ones."""
    observed = states.measured(record.observed) if record else {}
    keys = list(spec_expected) + [k for k in observed if k not in spec_expected]
    rows = []
    for key in keys:
        if key not in spec_expected:
            exp_text = TEXT["missing"]
        elif key == "raises":
            exp_text = TEXT["raises"].format(*spec_expected[key][:2])
        else:
            exp_text = describe(spec_expected[key])
        rows.append((key, exp_text, fmt_value(observed[key]) if key in observed else TEXT["missing"]))
    return rows


def _provenance(record: Evidence | None, sess: session.Session) -> list[tuple[str, str]] | None:
    """(label, value) pairs of a record's provenance; None without a record (no paragraph at all)."""
    if not record:
        return None
    prov, names = record.provenance, TEXT["prov"]
    fields = [(names["device"], prov.device_name), (names["torch"], f"{prov.torch} ({prov.torch_build})"),
              (names["python"], prov.python), (names["os"], prov.os), (names["threads"], prov.threads),
              (names["commit"], prov.git_commit), (names["date"], prov.date),
              (names["hash"], record.snippet_hash),
              (names["duration"], fmt_time(record.duration_s) if record.duration_s else None),
              (names["origin"], _origin_text(sess.origin(record))), *states.how_made(record)]
    return [(k, str(v)) for k, v in fields if v not in (None, "")]


_CODE = re.compile(r"`([^`]+)`")
_TICK = "\x00"  # a backtick of a statement while its pieces are put together
_TICKED = re.compile("\x00([^\x00]+)\x00")


def _text_html(text: str) -> str:
    """A statement's text piece: escaped, with `backticks` as code."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(text)))


def statement_html(cid: str, statement: str, sess: session.Session) -> Markup:
    """The claim's sentence with its ``{key}`` values bound (the one text a reader reads for it); while
    nothing has observed it, one line of where it runs and what it measures, not a sentence with holes."""
    from verify.site.inline import value_html  # noqa: PLC0415

    waiting = sess.outcome.waiting(cid)
    if waiting is not None:
        return Markup(render("waiting.html", where=waiting[0], what=Markup(_text_html(waiting[1]))))
    parts = []  # backticks kept as a mark until the end: a code span may hold a value (`{impl}`)
    for seg in binding.segments(statement):
        if isinstance(seg, str):
            parts.append(str(escape(seg)).replace("`", _TICK))
        elif seg[0] == "=":
            parts.append(render("input.html", text=seg[1]))
        else:
            parts.append(value_html(binding.Ref(cid, seg[0], seg[1]), sess))
    html = _TICKED.sub(lambda m: f"<code>{m.group(1)}</code>", "".join(parts))
    return Markup(html.replace(_TICK, "`"))


def _broken_snippet_naming(cid: str, reg: Any) -> Any:
    """The registry's problem with a snippet file that cannot be loaded and names ``cid`` in its text."""
    quoted = re.compile(rf"""["']{re.escape(cid)}["']""")
    for problem in reg.problems:
        if problem.claim != "-" or not problem.snippet:
            continue
        try:
            text = (reg.root / problem.snippet).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if quoted.search(text):
            return problem
    return None


def _claim_html(cid: str, sess: session.Session) -> str:
    reg = sess.outcome.registry
    spec = reg.claims.get(cid)
    if spec is None:
        broken = _broken_snippet_naming(cid, reg)
        if broken is not None:  # declared in a file that cannot be read now: say why, not "unknown"
            return render("fence_error.html", label=TEXT["broken_snippet"], code=cid,
                          message=f"{broken.snippet}：{broken.message}")
        return render("fence_error.html", label=TEXT["unknown_claim"], code=cid,
                      message="没有任何 snippet 声明这个 id。")
    record = sess.outcome.local.get(cid)
    status = sess.outcome.status(cid)
    shown_where = status == evidence.FAILED or states.get(status).ran == "here"
    badges = [(status, _where(record, sess) if shown_where else "", state(status).mark_of(record))]
    remote = []
    for dev, st in sess.remote_statuses(cid).items():
        other = sess.outcome.remote[dev][cid]
        badges.append((st, _where(other, sess), state(st).mark_of(other)))
        remote.append({"name": other.provenance.device_name or dev,
                       "rows": _values_rows(spec.expected_summary(), other), "provenance": _provenance(other, sess)})
    code = function_source(reg.root / spec.snippet, spec.line)
    made = record if record is not None else next((sess.outcome.remote[d][cid] for d in sess.remote_statuses(cid)), None)
    return render(
        "claim.html", cid=cid, statement=statement_html(cid, spec.statement, sess), badges=badges, open=status == evidence.FAILED,
        scope=scope.tag(spec, made),
        message=record.message if record and record.outcome is not Outcome.PASS else None,
        rows=_values_rows(spec.expected_summary(), record), provenance=_provenance(record, sess), remote=remote,
        snippet=spec.snippet, line=spec.line,
        # Highlighted HTML, unpacked from its text/html script by evidence.js: thousands of spans per
        # page would cost every HTML consumer at build time (the search indexer walks them even where
        # it excludes them); in a script they are one token. Pygments escapes ``<``, so the content
        # cannot close the script element early.
        code=Markup(highlight(code)) if code else None,
        output=record.output.strip() if record else "", traceback=record.traceback if record else "")


def safe_fence(fence):
    """Superfences swallows a formatter's exception and shows the raw block; say what broke instead."""

    @functools.wraps(fence)
    def wrapper(source: str, *args: Any, **kwargs: Any) -> str:
        try:
            return fence(source, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001  (reported, and fails a strict build)
            log.error("verify: the %s fence %r could not be rendered: %s", fence.__name__, source.strip(), exc)
            return render("fence_error.html", label=TEXT["unrenderable"], code=source.strip(), message=str(exc))

    return wrapper


@safe_fence
def claim_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```claim fence: one claim's sentence, marker, observed values, provenance and code."""
    cid, sess = source.strip(), session.get()
    if cid not in sess.outcome.registry.claims:
        return _claim_html(cid, sess)
    return rendercache.cached(sess, "claim", [rendercache.claim_key(sess, cid)], lambda: _claim_html(cid, sess))


def _compact(record: Evidence | None, limit: int = 160) -> str:
    """``key = value; …`` of a record's observations, formatted as a reader reads them, cut at ``limit``."""
    if record is None:
        return ""
    if not record.observed:
        return record.message[:limit]
    parts = []
    for key, value in states.measured(record.observed).items():
        text = binding.format_value(value) if not isinstance(value, dict) or "median_s" in value else fmt_value(value)
        parts.append(f"{key} = {text}")
    joined = "；".join(parts)
    return joined if len(joined) <= limit else joined[:limit] + " …"


@safe_fence
def evidence_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```evidence fence: every claim of a question as one table, with counts by status here and elsewhere.

    The full evidence (values, provenance, code) is beside each sentence; this table links to it.
    """
    sess = session.get()
    qid = source.strip()
    claims = [c for c, s in sorted(sess.outcome.registry.claims.items()) if s.question == qid]
    if not claims:
        raise ValueError(f"no claim belongs to question {qid!r}")
    key = [qid, [rendercache.claim_key(sess, c) for c in claims], checks.bound_counts(sess, f"questions/{qid}.md"),
           sess.outcome.probe.device_name]
    return rendercache.cached(sess, "evidence", key, lambda: _evidence_html(qid, claims, sess))


def _evidence_html(qid: str, claims: list[str], sess: session.Session) -> str:
    counts: dict[str, int] = {}
    remote_counts: dict[str, dict[str, int]] = {}
    rows = []
    for cid in claims:
        record = sess.outcome.local.get(cid)
        st = sess.outcome.status(cid)
        counts[st] = counts.get(st, 0) + 1
        others = []
        for dev, rst in sess.remote_statuses(cid).items():
            name = sess.outcome.remote[dev][cid].provenance.device_name or dev
            remote_counts.setdefault(name, {})
            remote_counts[name][rst] = remote_counts[name].get(rst, 0) + 1
            others.append((rst, f" · {name}", state(rst).mark_of(sess.outcome.remote[dev][cid])))
        page = sess.page_of(cid) or ""
        href = f"#claim-{cid}" if page.endswith(f"{qid}.md") else f"../../{page[:-3]}/#claim-{cid}"
        rows.append({"href": href, "cid": cid, "statement": sess.outcome.sentence(cid),
                     "status": st, "mark": state(st).mark_of(record), "others": others, "observed": _compact(record)})
    bound, unbound = checks.bound_counts(sess, f"questions/{qid}.md")
    return render("evidence.html", n_claims=len(claims), here_device=sess.outcome.probe.device_name,
                  bound=bound, unbound=unbound,
                  here_counts=sorted(counts.items()),
                  remote_counts=[(name, sorted(c.items())) for name, c in sorted(remote_counts.items())], rows=rows)


@safe_fence
def ledger_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```ledger fence: every claim as a filterable table (the site also ships evidence.json)."""
    sess = session.get()
    key = [[rendercache.claim_key(sess, c) for c in sorted(sess.outcome.registry.claims)],
           sorted(sess.pages.items()), [(rel, checks.bound_counts(sess, rel)) for rel in sorted(sess.prose)]]
    return rendercache.cached(sess, "ledger", key, lambda: _ledger_html(sess))


#: the most observed items a ledger row lists (the claim's own page has them all)
LEDGER_ITEMS = 8


def observed_items(observed: JsonObject | None, limit: int = LEDGER_ITEMS) -> tuple[list[tuple[str, str]], int]:
    """(key, value as a reader reads it) of a record's observations, and how many more were left out:
    numbers with their units and digits (:func:`binding.format_value`), a timing as its median and
    spread, a dict of values as ``key: value`` pairs; never a Python ``repr``."""
    items = list(states.measured(observed or {}).items())

    def text(value: Any, top: bool = True) -> str:
        if isinstance(value, dict) and "median_s" in value:
            return fmt_value(value)
        if isinstance(value, dict):
            pairs = [f"{k}: {text(v, False)}" for k, v in value.items()]
            return "；".join(pairs) if top else "{" + ", ".join(pairs) + "}"
        if isinstance(value, (list, tuple)):
            return "(" + ", ".join(text(v, False) for v in value) + ")"
        if isinstance(value, bool):
            return "是" if value else "否"
        return binding.format_value(_rounded(value))

    def cut(out: str) -> str:
        return out if len(out) <= 160 else out[:160] + " …"

    return [(k, cut(text(v))) for k, v in items[:limit]], max(0, len(items) - limit)


def _ledger_html(sess: session.Session) -> str:
    rows = sess.ledger()
    body = []
    for r in rows:
        items, more = observed_items(r.observed)
        here = None
        if r.date and r.status != evidence.NEEDS_CUDA:
            here = {"device": r.device or "", "torch": r.torch or "", "date": _short_date(r.date),
                    "origin": _origin_text(r.origin)}
        body.append({
            "status": r.status, "question": r.question, "id": r.id, "hash": r.snippet_hash[:8],
            "statement": statement_html(r.id, r.statement_source, sess), "here": here, "observed": items, "more": more,
            "message": "" if r.observed else (r.message or ""),
            "link": f"../{r.page[:-3]}/#claim-{r.id}" if r.page else "#",
            "elsewhere": [{"status": e.status, "device": e.device or e.device_key,
                           "torch": e.torch or "?", "date": _short_date(e.date),
                           "origin": _origin_text(e.origin)} for e in r.elsewhere],
        })
    pages = []
    for rel in sorted(p for p in sess.prose if p.startswith(checks.QUESTIONS)):
        bound, unbound = checks.bound_counts(sess, rel)
        pages.append({"page": rel[len(checks.QUESTIONS):-3], "link": f"../{rel[:-3]}/",
                      "claims": len(sess.prose[rel].claims), "bound": bound, "unbound": unbound})
    return render("ledger.html", rows=body, questions=sorted({r.question for r in rows}), pages=pages)
