"""Plots of benchmark groups: SVG line plots drawn by matplotlib, cached on disk by their data.

SVG from matplotlib's Agg backend with text left as text (no embedded or fetched fonts); dark mode
inverts the image in CSS (``.vf-plot``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from functools import lru_cache
from html import escape
from pathlib import Path

from verify.bench.results import Benchmark
from verify.storage.fs import text_memo

FOLDER = "bench_svg"  # in the project cache; a site build prunes the plots it did not show


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


def plot(benches: list[Benchmark], title: str, x: str, mode: str, cache_dir: Path, xscale: str = "log",
         fractions: dict[str, float | None] | None = None) -> str:
    """SVG for one device's results of a group: time per call, and achieved rate or fraction.

    ``fractions``: benchmark fullname -> the fraction of the limit to draw (None: not drawn); by
    default its ``extra_info`` fraction."""
    if mode == "none" or not benches:
        return ""
    pts = [b for b in benches if isinstance(b.info.get(x), (int, float))]
    if len({b.info[x] for b in pts}) < 2:
        return ""
    time_series: dict[str, list] = {}
    frac_series: dict[str, list] = {}
    for b in pts:
        e = b.info
        med = b.per_call
        time_series.setdefault(b.label, []).append(
            [e[x], med, e.get("q1_s", med), e.get("q3_s", med)])
        fraction = fractions.get(b.fullname) if fractions is not None else e.get("fraction")
        if fraction is not None:
            frac_series.setdefault(b.label, []).append([e[x], fraction])
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
    key = hashlib.sha256(payload.encode()).hexdigest()[:20]
    try:
        svg = text_memo(cache_dir / FOLDER, ".svg").get(key, lambda: _svg(payload))
    except ImportError:  # a reader's install (make read) has no matplotlib: the group's table gives the numbers
        return ""
    return _as_img(svg, title)
