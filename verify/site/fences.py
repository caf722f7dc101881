"""HTML for the ``claim``, ``evidence`` and ``ledger`` fences (pymdownx.superfences custom fences).

Rendering lives in the Markdown layer, not in MkDocs plugin events, so the same ``mkdocs.yml``
builds with MkDocs and with Zensical. Every fence asks :func:`verify.session.get` for evidence;
nothing here runs a claim itself.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from verify.core import binding, evidence, scope, states
from verify.core.matchers import describe, normalise
from verify.core.records import Evidence, JsonObject
from verify.core.units import fmt_time
from verify.site import checks, rendercache, session
from verify.site.meaning import MEANING
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


def value_html(ref: binding.Ref, sess: session.Session) -> str:
    """One bound value as a page shows it: its text, marked with its status and where it was observed."""
    try:
        text, status, where = sess.outcome.value(ref)
    except binding.BindError as exc:
        return render("value_error.html", label=ref.label, message=str(exc))
    return render("value.html", ref=ref, text=text, status=status, where=where)


def statement_html(cid: str, statement: str, sess: session.Session, plain: bool = False) -> Markup:
    """The claim's sentence with its ``{key}`` values bound (the one text a reader reads for it); while
    nothing has observed it, one line of where it runs and what it measures, not a sentence with holes.

    ``plain``: each value as text in a bare span, not a marked one with its provenance (for a list that links
    to the sentence).
    """
    waiting = sess.outcome.waiting(cid)
    if waiting is not None:
        if plain:
            return Markup(f"{escape(waiting[0])}：{_text_html(waiting[1])}")
        return Markup(render("waiting.html", where=waiting[0], what=Markup(_text_html(waiting[1]))))
    parts = []  # backticks kept as a mark until the end: a code span may hold a value (`{impl}`)
    for seg in binding.segments(statement):
        if isinstance(seg, str):
            parts.append(str(escape(seg)).replace("`", _TICK))
        elif seg[0] == "=":
            parts.append(str(escape(seg[1])) if plain else render("input.html", text=seg[1]))
        elif plain:
            ref = binding.Ref(cid, seg[0], seg[1])
            try:
                parts.append(f'<span class="vf-v">{escape(sess.outcome.value(ref)[0])}</span>')
            except binding.BindError:
                parts.append(TEXT["bad_value"])
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


@dataclass(frozen=True)
class MachineStatus:
    """One machine's word on a claim: its status, what it is called, and when and how it ran."""

    status: str
    name: str  # 构建机（<device>） for this machine, the device's name for another
    key: str  # the device key, shown where two machines share a name (this one included); "" otherwise
    device_key: str  # the device key, always: what tells two machines apart when counting them
    detail: str  # torch · date, where the status has a record to show
    origin: str  # the bundle a merged record came from ("" for one this checkout ran)
    text: str  # the status's short mark with the record's own details (已编译 · sm_90a)
    record: Evidence | None
    label: str  # the status in words, said of this machine or of another one


def _label(status: str, here: bool) -> str:
    """A status's words; a status whose words speak of the build machine said of another machine instead."""
    return state(status).label if here else TEXT["elsewhere_label"].get(status, state(status).label)


def _detail(record: Evidence | None) -> str:
    if record is None:
        return ""
    prov = record.provenance
    return " · ".join(p for p in (f"torch {prov.torch}" if prov.torch else "", _short_date(prov.date)) if p)


def machines(cid: str, sess: session.Session) -> list[MachineStatus]:
    """This machine's status of a claim, then each other machine's that recorded it; on a machine without torch
    (``make read``), which runs nothing, only the machines that recorded it, where any did."""
    record = sess.outcome.local.get(cid)
    status = sess.outcome.status(cid)
    shown = status == evidence.FAILED or states.get(status).ran == "here"
    probe = sess.outcome.probe
    remote = [(dev, st, sess.outcome.remote[dev][cid]) for dev, st in sess.remote_statuses(cid).items()]
    names = [probe.device_name] + [other.provenance.device_name or dev for dev, _, other in remote]
    # a reader's machine (no torch) is the build machine under its name alone: its key, ``reader``, is not a device's
    here_key = probe.device_key if names.count(probe.device_name) > 1 and probe.torch else ""
    out = [MachineStatus(status, TEXT["here"].format(probe.device_name), here_key, probe.device_key,
                         _detail(record) if shown else "",
                         _origin_text(sess.origin(record)) if shown and record else "", state(status).mark_of(record),
                         record, _label(status, True))]
    if not probe.torch and record is None and remote:  # a reader's build (no torch) ran nothing: the machines that did
        out = []
    for dev, st, other in remote:
        name = other.provenance.device_name or dev
        out.append(MachineStatus(st, name, dev if names.count(name) > 1 else "", dev, _detail(other),
                                 _origin_text(sess.origin(other)), state(st).mark_of(other), other, _label(st, False)))
    return out


#: statuses that say nothing was observed, in the order a claim's one mark prefers them
#: (a failure comes before everything; observed evidence of any kind before these)
WAITING_ORDER = (evidence.NEEDS_CUDA, states.NEEDS_TOOL, evidence.STALE, evidence.NOT_APPLICABLE, evidence.NOT_RUN)


def _family(key: str) -> str:
    """``verified`` of verified-here and verified-elsewhere: the kind of evidence, wherever it was made."""
    return key.removesuffix("-here").removesuffix("-elsewhere")


def _rank(key: str) -> tuple[int, int]:
    if key == evidence.FAILED:
        return (0, 0)
    if states.get(key).observed:
        kinds = list(dict.fromkeys(_family(k) for k, row in states.STATES.items() if row.observed))
        return (1, kinds.index(_family(key)))
    return (2, WAITING_ORDER.index(key) if key in WAITING_ORDER else len(WAITING_ORDER))


#: the one kind of evidence whose machines are counted on a chip: a run that passed
COUNTED = _family(evidence.VERIFIED_HERE)


def chip(seen: list[MachineStatus]) -> tuple[str, str, str]:
    """(status, title, text) of a claim's one mark: the best evidence any machine has, a failure anywhere first.

    A run verified on more than one machine is counted (``3 台机器已验证``), by distinct device keys:
    a record of this device made under another torch is not a second machine. Compiled, simulated and
    spec evidence is not counted (the same compiler, simulator or datasheet gives the same answer on
    any machine) and keeps its own details (``已编译 · sm_90a``). The title names every machine with
    its status, and so does the claim's body, for a reader without a pointer.
    """
    best = min(seen, key=lambda m: _rank(m.status))
    alike = {m.device_key for m in seen if _family(m.status) == _family(best.status)}
    if best.status == evidence.FAILED:
        text = state(best.status).mark
    elif len(alike) > 1 and _family(best.status) == COUNTED:
        text = TEXT["machines"].format(len(alike), TEXT["kind_word"][COUNTED])
    else:
        text = best.text
    lines = [f"{m.name}{f'（{m.key}）' if m.key else ''}：{m.label}{f' · {m.detail}' if m.detail else ''}"
             for m in seen]
    return best.status, "\n".join(lines), text


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
    seen = machines(cid, sess)
    here, record = seen[0], seen[0].record
    expected = spec.expected_summary()
    sections = [{"machine": m, "rows": _values_rows(expected, m.record), "provenance": _provenance(m.record, sess),
                 # a failure's own words (what was expected, what was seen); any other status says it in its badge
                 "message": m.record.message if m.record and m.status == evidence.FAILED else None}
                for m in seen]
    best = chip(seen)
    code = function_source(reg.root / spec.snippet, spec.line)
    made = record if record is not None else next((m.record for m in seen[1:]), None)
    return render(
        "claim.html", cid=cid, statement=statement_html(cid, spec.statement, sess), status=here.status, chip=best,
        open=best[0] == evidence.FAILED, scope=scope.tag(spec, made), machines=seen, sections=sections,
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
    counts: dict[str, dict[tuple[tuple[int, int], str], int]] = {}  # machine -> (rank, its words) -> claims
    chips: dict[str, int] = {}  # the one mark's words -> claims
    rows = []
    for cid in claims:
        seen = machines(cid, sess)
        for m in seen:
            by_status = counts.setdefault(m.name if not m.key else f"{m.name}（{m.key}）", {})
            words = (_rank(m.status), m.label)
            by_status[words] = by_status.get(words, 0) + 1
        best = chip(seen)
        # a run keeps where it ran (构建机已验证 / 他机已验证); other kinds are the same wherever made
        word = state(best[0]).mark if best[0] == evidence.FAILED or _family(best[0]) == COUNTED else TEXT[
            "kind_word"].get(_family(best[0]), state(best[0]).mark)
        chips[word] = chips.get(word, 0) + 1
        record, _ = sess.outcome.best_record(cid)
        items, more = observed_items(record.observed if record else None)
        page = sess.page_of(cid) or ""
        href = f"#claim-{cid}" if page.endswith(f"{qid}.md") else f"../../{page[:-3]}/#claim-{cid}"
        rows.append({"href": href, "cid": cid, "statement": statement_html(cid, sess.outcome.registry.claims[cid].statement, sess, plain=True),
                     "status": seen[0].status, "chip": best, "observed": items, "more": more,
                     # nothing observed: the status in words, never the runner's message
                     "note": "" if items else seen[0].label if best[0] == seen[0].status else _label(best[0], False)})
    bound, unbound = checks.bound_counts(sess, f"questions/{qid}.md")
    return render("evidence.html", n_claims=len(claims), bound=bound, unbound=unbound,
                  chips=sorted(chips.items(), key=lambda kv: -kv[1]),
                  machine_counts=[(name, [(w[1], n) for w, n in sorted(c.items())]) for name, c in counts.items()],
                  rows=rows)


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
        # what the claim's page shows: this machine's record when it observed something, else another machine's
        best, status = sess.outcome.best_record(r.id)
        mine = best is not None and best is sess.outcome.local.get(r.id)
        observed = best.observed if best is not None else r.observed
        items, more = observed_items(observed)
        here = None
        if r.date and r.status != evidence.NEEDS_CUDA and (mine or best is None):
            here = {"device": r.device or "", "torch": r.torch or "", "date": _short_date(r.date),
                    "origin": _origin_text(r.origin)}
        body.append({
            "status": status, "question": r.question, "id": r.id, "hash": r.snippet_hash[:8],
            "statement": statement_html(r.id, r.statement_source, sess), "here": here, "observed": items, "more": more,
            # nothing observed: a failure's own words, else the status in words (never the runner's English)
            "message": "" if observed else (r.message or "") if status == evidence.FAILED else state(status).label,
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
    return render("ledger.html", rows=body, questions=sorted({r.question for r in rows}), pages=pages,
                  legend=ledger_legend())


def ledger_legend() -> list[tuple[str, str, str]]:
    """(state key, its mark on a question page, its meaning) for every state the ledger's filter offers, in the
    states' order: the filter's words are the badge, the mark ties it to the pages, the meaning is the home
    legend's line (:data:`verify.site.meaning.MEANING`; a kind made elsewhere shares the line of the one made
    here), else nothing more than the label."""

    out = []
    for key in states.STATES:
        row = state(key)
        meaning = MEANING.get(key) or MEANING.get(key.removesuffix("-elsewhere") + "-here", "")
        out.append((key, row.mark, meaning))
    return out
