"""HTML for the ``bench`` fence: a benchmark group's table, plot and provenance, per device.

A fence names a group and, optionally, how to draw it::

    ```bench
    expand-vs-repeat
    x: size            # extra_info key on the x axis (log scale)
    plot: time         # time | fraction | both (default) | none
    xscale: linear     # log (default, base 2) | linear, for an x that starts at 0
    ```

or compares two stored result files (device keys under ``benchmarks/``)::

    ```bench
    compare: cpu-x86_64 cpu-x86_64-1thread
    threshold: 0.1
    ```

Rendering reads stored JSON only (see :mod:`verify.bench` for when benchmarks run). Plots are
SVG drawn by matplotlib's Agg backend with text left as text (no embedded or fetched fonts) and
black replaced by ``currentColor``, so they follow the light and dark themes.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import threading
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any

from verify import bench
from verify.units import fmt_rate, fmt_time
from verify.render import safe_fence

log = logging.getLogger("mkdocs.verify")
_lock = threading.Lock()
_ensured: set[str] = set()

STATE_LABEL = {"current": ("ok", "结果与基准代码一致"), "stale": ("stale", "基准代码已改，结果已过期"),
               "missing": ("none", "本设备尚无结果")}


def _root() -> Path:
    from verify.paths import project_root  # noqa: PLC0415

    return project_root()


OPTIONS = ("x", "plot", "xscale", "title", "compare", "threshold", "needs")


def _parse(source: str) -> tuple[str, dict[str, str]]:
    """The group name (or glob) and the ``key: value`` options of a fence."""
    group, opts = "", {}
    for line in source.strip().splitlines():
        line = line.split("#", 1)[0].strip()
        key, sep, value = line.partition(":")
        if sep and key.strip() in OPTIONS:
            opts[key.strip()] = value.strip()
        elif sep:
            raise ValueError(f"unknown option {key.strip()!r} (known: {', '.join(OPTIONS)})")
        elif line:
            group = line
    return group, opts


def _label(b: dict[str, Any]) -> str:
    return str(b.get("extra_info", {}).get("variant") or b["name"].split("[")[0])


# --- plots --------------------------------------------------------------------------------------

@lru_cache(maxsize=128)
def _svg(payload: str) -> str:
    """An SVG line plot of ``payload`` (JSON: title, x label, panels of series)."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    spec = json.loads(payload)
    panels = spec["panels"]
    with plt.rc_context({"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9,
                         "svg.hashsalt": spec["title"]}):
        fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 2.6), squeeze=False)
        for ax, panel in zip(axes[0], panels):
            for name, pts in panel["series"].items():
                pts = sorted(pts)
                xs = [p[0] for p in pts]
                ys = [p[1] for p in pts]
                if panel.get("band"):
                    lo = [p[2] for p in pts]
                    hi = [p[3] for p in pts]
                    ax.fill_between(xs, lo, hi, alpha=0.25, linewidth=0)
                ax.plot(xs, ys, marker="o", markersize=3, label=name)
            if spec.get("xscale", "log") == "log":
                ax.set_xscale("log", base=2)
            if panel.get("log_y", True):
                ax.set_yscale("log")
            if panel.get("hline"):
                ax.axhline(panel["hline"], color="#000000", linestyle="--", linewidth=0.8)
            ax.set_xlabel(spec["xlabel"])
            ax.set_ylabel(panel["ylabel"])
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=7, frameon=False)
        fig.suptitle(spec["title"], fontsize=9)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", transparent=True)
        plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _as_img(svg: str, title: str) -> str:
    """The plot as one <img> with a data: URI. Inline, an SVG is thousands of tags that every HTML
    consumer of the page (the search indexer above all) must walk; as an image it is one tag, and
    it still needs no request. Dark mode inverts it in CSS (``.vf-plot``)."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img class="vf-plot" alt="{escape(title)}" src="data:image/svg+xml;base64,{data}">'


def plot(benches: list[dict[str, Any]], title: str, x: str, mode: str, xscale: str = "log") -> str:
    """SVG for one device's results of a group: time per call, and achieved rate or fraction."""
    if mode == "none" or not benches:
        return ""
    pts = [b for b in benches if isinstance(b.get("extra_info", {}).get(x), (int, float))]
    if len({b["extra_info"][x] for b in pts}) < 2:
        return ""
    time_series: dict[str, list] = {}
    frac_series: dict[str, list] = {}
    for b in pts:
        e = b["extra_info"]
        med = bench.per_call(b)
        time_series.setdefault(_label(b), []).append(
            [e[x], med, e.get("q1_s", med), e.get("q3_s", med)])
        if "fraction" in e:
            frac_series.setdefault(_label(b), []).append([e[x], e["fraction"]])
    panels = []
    if mode in ("time", "both"):
        panels.append({"series": time_series, "ylabel": "time per call (s)", "band": True})
    if mode in ("fraction", "both") and frac_series:
        panels.append({"series": frac_series, "ylabel": "fraction of limit", "log_y": False, "hline": 1.0})
    if not panels:
        return ""
    spec = {"title": title, "xlabel": x, "panels": panels}
    if xscale != "log":  # absent by default, so that cached plots of the other groups keep their key
        spec["xscale"] = xscale
    payload = json.dumps(spec, sort_keys=True)
    # Drawing costs about a second a plot on a busy machine; the same data gives the same SVG, so
    # a rebuild with unchanged results reads it back instead of importing matplotlib at all.
    import hashlib  # noqa: PLC0415

    from verify import engine  # noqa: PLC0415

    cached = engine.cache_dir(_root()) / "bench_svg" / (hashlib.sha256(payload.encode()).hexdigest()[:20] + ".svg")
    if cached.is_file():
        return _as_img(cached.read_text(encoding="utf-8"), title)
    svg = _svg(payload)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_text(svg, encoding="utf-8")
    tmp.replace(cached)
    return _as_img(svg, title)


# --- tables -------------------------------------------------------------------------------------

def _table(benches: list[dict[str, Any]], x: str) -> str:
    head = ("<tr><th>变体</th><th>规模</th><th>中位数/次</th><th>离散 IQR/中位数</th><th>轮数 × 次</th>"
            "<th>达到</th><th>占本机上限</th></tr>")
    rows = []
    for b in sorted(benches, key=lambda b: (str(_label(b)), b.get("extra_info", {}).get(x, 0) or 0)):
        e = b.get("extra_info", {})
        rounds = b.get("stats", {}).get("rounds", "?")
        frac = f"{e['fraction']:.1%}" if "fraction" in e else "—"
        size = e.get(x, b.get("param") or "")
        rows.append(f"<tr><td>{escape(_label(b))}</td><td>{escape(str(size))}</td>"
                    f"<td>{fmt_time(bench.per_call(b))}</td><td>{e.get('spread', 0):.0%}</td>"
                    f"<td>{rounds} × {e.get('inner', 1)}</td><td>{escape(fmt_rate(e)) or '—'}</td>"
                    f"<td>{frac}</td></tr>")
    return f'<table class="vf-bench-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _provenance(data: dict[str, Any], files: list[str], state: dict[str, str]) -> str:
    parts = []
    for f in files:
        run = data.get("runs", {}).get(f, {})
        m = run.get("machine_info") or data.get("machine_info", {})
        lim = m.get("limits") or {}
        commit = (run.get("commit_info") or {}).get("id") or ""
        dev = m.get("gpu_name") or m.get("cpu_model") or "?"
        limits = []
        if "copy_GBps" in lim:
            limits.append(f"拷贝带宽 {lim['copy_GBps']:.3g} GB/s")
        for k, v in sorted(lim.items()):
            if k.startswith("matmul_") and k.endswith("_GFLOPs"):
                limits.append(f"matmul {k[7:-7]} {v:.4g} GFLOP/s")
        cls, label = STATE_LABEL[state.get(f, "missing")]
        parts.append(
            f'<p class="vf-prov"><span class="vf-badge vf-{cls}">{label}</span>'
            f"<span>{escape(dev)}</span><span>{m.get('cpu_count', '?')} 核 · torch 线程 {m.get('threads', '?')}</span>"
            f"<span>torch {escape(str(m.get('torch', '?')))} ({escape(str(m.get('torch_build', '?')))})</span>"
            f"<span>{escape((run.get('datetime') or data.get('datetime') or '')[:16].replace('T', ' '))} UTC</span>"
            f"<span>commit {escape(commit[:12])}</span><span><code>{escape(f)}</code></span>"
            + (f"<br><span>同次测得的上限：{escape('，'.join(limits))}</span>" if limits else "") + "</p>")
    return "".join(parts)


def _device_block(key: str, data: dict[str, Any], group: str, opts: dict[str, str], root: Path) -> str | None:
    import fnmatch  # noqa: PLC0415

    benches = [b for b in data.get("benchmarks", []) if fnmatch.fnmatchcase(b.get("group") or "", group)]
    if not benches:
        return None
    x = opts.get("x", "size")
    files = sorted({bench.file_of(b) for b in benches})
    state = bench.freshness(root, data)
    mode = opts.get("plot", "both")
    svg = plot(benches, f"{group} · {key}", x, mode, opts.get("xscale", "log"))
    return (f'<div class="vf-bench-device" style="flex:1 1 24em;min-width:0">'
            f"<p><strong>{escape(key)}</strong></p>{svg}{_table(benches, x)}"
            f"{_provenance(data, files, state)}</div>")


def _ensure(root: Path) -> None:
    with _lock:
        if str(root) not in _ensured:
            _ensured.add(str(root))
            bench.ensure(root)


def render_group(group: str, opts: dict[str, str], root: Path) -> str:
    _ensure(root)
    stored = bench.load_all(root)
    try:
        here = bench.device_key(root)
    except RuntimeError:
        here = ""
    order = sorted(stored, key=lambda k: (k != here, k))
    blocks = [b for k in order if (b := _device_block(k, stored[k], group, opts, root))]
    if not blocks and opts.get("needs") == "cuda" and not here.startswith("cuda"):
        return (f'<div class="vf-bench"><p class="vf-prov"><span class="vf-badge vf-cuda">需要 CUDA，本机未运行</span>'
                f"基准组 <code>{escape(group)}</code> 只在 GPU 上有意义；在 GPU 机器上运行 <code>make record-gpu</code> "
                "并提交 <code>benchmarks/</code> 下的结果后，这里显示它。</p></div>")
    if not blocks:
        log.info("verify: no benchmark results for group %s; run `verify bench run`", group)
        return (f'<div class="vf-bench"><p class="vf-prov"><span class="vf-badge vf-none">尚无结果</span>'
                f"基准组 <code>{escape(group)}</code> 还没有任何设备的结果（<code>verify bench run</code>）。</p></div>")
    return ('<div class="vf-bench" style="display:flex;flex-wrap:wrap;gap:1em;font-size:.72rem">'
            + "".join(blocks) + "</div>")


def render_compare(opts: dict[str, str], group: str, root: Path) -> str:
    import fnmatch  # noqa: PLC0415

    a_key, b_key = opts["compare"].split()[:2]
    threshold = float(opts.get("threshold", 0.1))
    stored = bench.load_all(root)
    if a_key not in stored or b_key not in stored:
        return f'<p class="vf-prov">比较 {escape(a_key)} 与 {escape(b_key)}：结果文件缺失。</p>'
    rows = [r for r in bench.compare(stored[a_key], stored[b_key], threshold)
            if fnmatch.fnmatchcase(r["group"] or "", group or "*")]
    body = "".join(
        f"<tr><td>{escape(r['group'] or '')}</td><td>{escape(r['name'])}</td><td>{fmt_time(r['a_s'])}</td>"
        f"<td>{fmt_time(r['b_s'])}</td><td>{r['ratio']:.2f}</td><td class=\"vf-{r['verdict']}\">{escape(r['verdict'])}</td>"
        "</tr>" for r in rows)
    worse = sum(r["verdict"] == "regressed" for r in rows)
    return (f'<div class="vf-bench"><p class="vf-prov">A = <code>{escape(a_key)}</code>：'
            f"{escape(bench.machine_line(stored[a_key]))}<br>B = <code>{escape(b_key)}</code>："
            f"{escape(bench.machine_line(stored[b_key]))}<br>阈值 {threshold:.0%}：{len(rows)} 项中 {worse} 项 B 慢于 A 超过阈值"
            f"（<code>verify bench compare {escape(a_key)} {escape(b_key)}</code> 此时以非零状态退出）。</p>"
            f'<table class="vf-bench-table"><thead><tr><th>组</th><th>基准</th><th>A</th><th>B</th><th>B / A</th>'
            f"<th>判定</th></tr></thead><tbody>{body}</tbody></table></div>")


@safe_fence
def bench_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```bench fence: a group's results on every device that has them, or a comparison."""
    group, opts = _parse(source)
    root = _root()
    if "compare" in opts:
        return render_compare(opts, group, root)
    return render_group(group, opts, root)
