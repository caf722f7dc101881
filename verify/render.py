"""HTML for the ``claim``, ``evidence`` and ``ledger`` fences (pymdownx.superfences custom fences).

Rendering lives in the Markdown layer, not in MkDocs plugin events, so the same ``mkdocs.yml``
builds with MkDocs and with Zensical. Every fence asks :func:`verify.session.get` for evidence;
nothing here runs a claim itself.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import logging
import os
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any

from verify import engine, evidence, session
from verify.matchers import describe, normalise
from verify.units import fmt_time

log = logging.getLogger("mkdocs.verify")

LABELS = {
    evidence.VERIFIED_HERE: ("ok", "已验证"),
    evidence.VERIFIED_ELSEWHERE: ("ok", "已验证"),
    evidence.STALE: ("stale", "记录已过期"),
    evidence.NEEDS_CUDA: ("cuda", "需要 CUDA，本机未运行"),
    evidence.NOT_RUN: ("none", "未运行"),
    evidence.FAILED: ("fail", "失败"),
}


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


@lru_cache(maxsize=64)
def _function_sources(path: str, mtime_ns: int) -> dict[int, str]:
    """Every decorated function of a file, keyed by each line from its first decorator to its ``def``."""
    text = Path(path).read_text(encoding="utf-8")
    lines = text.splitlines()
    out: dict[int, str] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            first = min(d.lineno for d in node.decorator_list)
            source = "\n".join(lines[first - 1 : node.end_lineno])
            out.update(dict.fromkeys(range(first, node.lineno + 1), source))
    return out


def _function_source(path: Path, line: int) -> str:
    """The decorated function whose decorator starts at ``line``."""
    return _function_sources(str(path), path.stat().st_mtime_ns).get(line, "")


def _highlight(code: str) -> str:
    """Pygments HTML for a claim's code, cached on disk by content: a warm build skips the lexer."""
    key = hashlib.sha256(code.encode()).hexdigest()[:20]
    path = engine.cache_dir(session.project_root()) / "render" / f"{key}.html"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    from pygments import highlight  # noqa: PLC0415
    from pygments.formatters import HtmlFormatter  # noqa: PLC0415
    from pygments.lexers import PythonLexer  # noqa: PLC0415

    body = highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))
    html = f'<div class="highlight"><pre><code>{body}</code></pre></div>'
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, path)
    return html


def _code_block(code: str) -> str:
    """The highlighted code inside a ``text/html`` script, unpacked by ``evidence.js`` on load.

    Thousands of highlighting spans per page cost every HTML consumer at build time (the search
    indexer walks them even where it excludes them); inside a script element they are one token.
    Pygments escapes ``<`` in the code, so the content cannot close the script element early.
    """
    return f'<script type="text/html" class="vf-code-src">{_highlight(code)}</script>'


def _badge(status: str, where: str) -> str:
    css, label = LABELS[status]
    return f'<span class="vf-badge vf-{css}" data-status="{status}">{escape(label)}{escape(where)}</span>'


def _where(record: dict[str, Any] | None) -> str:
    if not record:
        return ""
    prov = record.get("provenance", {})
    parts = [prov.get("device_name"), f"torch {prov.get('torch')}" if prov.get("torch") else None,
             _short_date(prov.get("date"))]
    return " · " + " · ".join(p for p in parts if p)


def _values_table(spec_expected: dict[str, Any], record: dict[str, Any] | None) -> str:
    observed = (record or {}).get("observed") or {}
    keys = list(spec_expected) + [k for k in observed if k not in spec_expected]
    if not keys:
        return ""
    rows = []
    for key in keys:
        if key not in spec_expected:
            exp_text = "—"
        elif key == "raises":
            exp_text = f"抛出 {spec_expected[key][0]}，消息含 “{spec_expected[key][1]}”"
        else:
            exp_text = describe(spec_expected[key])
        obs_text = fmt_value(observed[key]) if key in observed else "—"
        rows.append(f"<tr><td><code>{escape(key)}</code></td><td>{escape(exp_text)}</td>"
                    f"<td>{escape(obs_text)}</td></tr>")
    return ('<table class="vf-values"><thead><tr><th>观测项</th><th>期望</th><th>实际观测</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _provenance(record: dict[str, Any] | None) -> str:
    if not record:
        return ""
    prov = record.get("provenance", {})
    fields = [("设备", prov.get("device_name")), ("torch", f"{prov.get('torch')} ({prov.get('torch_build')})"),
              ("Python", prov.get("python")), ("系统", prov.get("os")), ("线程", prov.get("threads")),
              ("提交", prov.get("git_commit")), ("时间", prov.get("date")),
              ("代码哈希", record.get("snippet_hash")), ("耗时", fmt_time(record["duration_s"])
                                                        if record.get("duration_s") else None)]
    items = "".join(f"<span><b>{escape(k)}</b> {escape(str(v))}</span>" for k, v in fields if v not in (None, ""))
    return f'<p class="vf-prov">{items}</p>'


def _claim_html(cid: str, sess: session.Session) -> str:
    reg = sess.outcome.registry
    spec = reg.claims.get(cid)
    if spec is None:
        return (f'<div class="vf-claim vf-missing"><span class="vf-badge vf-fail">未知论断</span> '
                f"<code>{escape(cid)}</code>：没有任何 snippet 声明这个 id。</div>")
    record = sess.outcome.local.get(cid)
    status = sess.outcome.status(cid)
    badges = [_badge(status, _where(record) if status in (evidence.VERIFIED_HERE, evidence.FAILED) else "")]
    for dev, st in sess.remote_statuses(cid).items():
        other = sess.outcome.remote[dev][cid]
        badges.append(_badge(st, _where(other)))
    message = ""
    if record and record["outcome"] not in ("pass",):
        message = f'<p class="vf-msg">{escape(record["message"])}</p>'
    source_path = reg.root / spec.snippet
    code = _function_source(source_path, spec.line)
    output = (record or {}).get("output", "").strip()
    remote_tables = []
    for dev in sess.remote_statuses(cid):
        other = sess.outcome.remote[dev][cid]
        remote_tables.append(f"<p><b>{escape(other.get('provenance', {}).get('device_name') or dev)}</b></p>"
                             + _values_table(spec.expected_summary(), other) + _provenance(other))
    details = "".join([
        message,
        _values_table(spec.expected_summary(), record),
        _provenance(record),
        *remote_tables,
        f'<p class="vf-src">代码：<code>{escape(spec.snippet)}:{spec.line}</code></p>',
        _code_block(code) if code else "",
        f'<p>运行输出：</p><pre class="vf-out">{escape(output)}</pre>' if output else "",
    ])
    open_attr = " open" if status == evidence.FAILED else ""
    return (f'<div class="vf-claim" id="claim-{escape(cid)}" data-claim="{escape(cid)}">'
            f'<details{open_attr}><summary>{"".join(badges)} <code class="vf-id">{escape(cid)}</code> '
            f'<span class="vf-stmt">{escape(spec.statement)}</span></summary>'
            # Values, provenance and code stay out of the search index: search finds the sentence.
            f'<div data-search-exclude>{details}</div></details></div>')


def safe_fence(fence):
    """Superfences swallows a formatter's exception and shows the raw block; say what broke instead."""

    @functools.wraps(fence)
    def wrapper(source: str, *args: Any, **kwargs: Any) -> str:
        try:
            return fence(source, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001  (reported, and fails a strict build)
            log.error("verify: the %s fence %r could not be rendered: %s", fence.__name__, source.strip(), exc)
            return (f'<div class="vf-claim vf-missing"><span class="vf-badge vf-fail">无法渲染</span> '
                    f"<code>{escape(source.strip())}</code>：{escape(str(exc))}</div>")

    return wrapper


@safe_fence
def claim_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```claim fence: one claim's badge, observed values, provenance and code."""
    return _claim_html(source.strip(), session.get())


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
    counts: dict[str, int] = {}
    remote_counts: dict[str, dict[str, int]] = {}
    rows = []
    for cid in claims:
        spec = sess.outcome.registry.claims[cid]
        record = sess.outcome.local.get(cid)
        st = sess.outcome.status(cid)
        counts[st] = counts.get(st, 0) + 1
        others = []
        for dev, rst in sess.remote_statuses(cid).items():
            name = sess.outcome.remote[dev][cid].get("provenance", {}).get("device_name") or dev
            remote_counts.setdefault(name, {})
            remote_counts[name][rst] = remote_counts[name].get(rst, 0) + 1
            others.append(_badge(rst, f" · {name}"))
        page = sess.page_of(cid) or ""
        href = f"#claim-{cid}" if page.endswith(f"{qid}.md") else f"../../{page[:-3]}/#claim-{cid}"
        observed = fmt_value((record or {}).get("observed") or (record or {}).get("message") or "")
        rows.append(f'<tr><td><a href="{escape(href)}"><code>{escape(cid)}</code></a></td>'
                    f"<td>{escape(spec.statement)}</td><td>{_badge(st, '')}{''.join(others)}</td>"
                    f'<td class="vf-obs">{escape(observed[:200])}</td></tr>')

    def line(name: str, c: dict[str, int]) -> str:
        return f"{name}：" + "，".join(f"{LABELS[k][1]} {v} 条" for k, v in sorted(c.items()))

    summary = [line(f"本机（{sess.outcome.probe['device_name']}）", counts)]
    summary += [line(name, c) for name, c in sorted(remote_counts.items())]
    head = f'<p class="vf-count">本题共 {len(claims)} 条论断。' + "；".join(escape(x) for x in summary) + "。</p>"
    table = ('<table class="vf-evidence-table"><thead><tr><th>论断</th><th>内容</th><th>状态</th><th>观测值</th>'
             f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return f'<div class="vf-evidence" data-search-exclude>{head}{table}</div>'


@safe_fence
def ledger_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```ledger fence: every claim as a filterable table (the site also ships evidence.json)."""
    rows = session.get().ledger()
    body = []
    for r in rows:
        elsewhere = "".join(f"<div>{_badge(e['status'], '')}<small>{escape(e['device'] or e['device_key'])} · torch "
                            f"{escape(e['torch'] or '?')} · {escape(_short_date(e['date']))}</small></div>"
                            for e in r["elsewhere"]) or "—"
        link = f"../{r['page'][:-3]}/#claim-{r['id']}" if r["page"] else "#"
        observed = fmt_value(r["observed"]) if r["observed"] else (r["message"] or "")
        here = (f"<small>{escape(r['device'] or '')} · torch {escape(r['torch'] or '')} · "
                f"{escape(_short_date(r['date']))}</small>" if r["date"] and r["status"] != evidence.NEEDS_CUDA else "")
        body.append(
            f'<tr data-status="{r["status"]}" data-question="{escape(r["question"])}" '
            f'data-elsewhere="{" ".join(e["status"] for e in r["elsewhere"])}">'
            f'<td><a href="{escape(link)}"><code>{escape(r["id"])}</code></a><br>'
            f'<small>{escape(r["question"])} · #{escape(r["snippet_hash"][:8])}</small></td>'
            f"<td>{escape(r['statement'])}</td>"
            f"<td>{_badge(r['status'], '')}<br>{here}</td><td>{elsewhere}</td>"
            f'<td class="vf-obs">{escape(observed[:240])}</td></tr>')
    questions = sorted({r["question"] for r in rows})
    q_opts = "".join(f'<option value="{escape(q)}">{escape(q)}</option>' for q in questions)
    s_opts = "".join(f'<option value="{k}">{escape(v[1])}</option>' for k, v in LABELS.items())
    return (
        '<div class="vf-ledger" data-search-exclude><div class="vf-filters">'
        '<input type="search" class="vf-filter-text" placeholder="按 id、题目或内容筛选" aria-label="筛选">'
        f'<select class="vf-filter-question" aria-label="题目"><option value="">全部题目</option>{q_opts}</select>'
        f'<select class="vf-filter-status" aria-label="状态"><option value="">全部状态</option>{s_opts}</select>'
        '<span class="vf-filter-count"></span></div>'
        '<table class="vf-ledger-table"><thead><tr><th>论断 id · 题目 · 代码哈希</th><th>内容</th><th>本机</th>'
        "<th>其他机器</th><th>观测值</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>")
