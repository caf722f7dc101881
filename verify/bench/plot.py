"""Plots of benchmark groups: SVG line plots drawn by matplotlib, cached on disk by their data.

SVG from matplotlib's Agg backend with text left as text (no embedded or fetched fonts); dark mode
inverts the image in CSS (``.vf-plot``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import warnings
from functools import lru_cache
from html import escape
from pathlib import Path

from verify.bench.results import Benchmark
from verify.storage.fs import text_memo

FOLDER = "bench_svg"  # in the project cache; a site build prunes the plots it did not show
#: fonts with Chinese glyphs, first found first (Debian's fonts-noto-cjk, then the common others)
CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei", "Microsoft YaHei",
             "PingFang SC"]
#: the axes' words (the x axis is named by the caller, after the benchmark's own parameter)
TIME_LABEL = "每次调用的耗时（秒）"
FRACTION_LABEL = "占该机上限的比例"


@lru_cache(maxsize=128)
def _svg(payload: str) -> str:
    """An SVG line plot of ``payload`` (JSON: title, x label, panels of series)."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    spec = json.loads(payload)
    panels = spec["panels"]
    # The words are Chinese: a CJK font after the Latin one measures them (the SVG keeps them as text, which
    # the reader's browser sets in its own fonts). A machine without one draws the same text, measured less
    # well, and says so once per glyph: not worth a warning per plot in a site build.
    with plt.rc_context({"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9,
                         "svg.hashsalt": spec["title"], "font.sans-serif": ["DejaVu Sans", *CJK_FONTS]}), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
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
    alt = " · ".join(title.splitlines())
    return f'<img class="vf-plot" alt="{escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def plot(benches: list[Benchmark], title: str, x: str, mode: str, cache_dir: Path, xscale: str = "log",
         fractions: dict[str, float | None] | None = None, xlabel: str = "",
         names: dict[str, str] | None = None) -> str:
    """SVG for one device's results of a group: time per call, and achieved rate or fraction.

    ``fractions``: benchmark fullname -> the fraction of the limit to draw (None: not drawn); by
    default its ``extra_info`` fraction. ``xlabel``: the x axis's words (default: the key ``x``);
    ``names``: a variant's words in the legend, by its label (default: the label)."""
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
        name = (names or {}).get(b.label, b.label)
        time_series.setdefault(name, []).append(
            [e[x], med, e.get("q1_s", med), e.get("q3_s", med)])
        fraction = fractions.get(b.fullname) if fractions is not None else e.get("fraction")
        if fraction is not None:
            frac_series.setdefault(name, []).append([e[x], fraction])
    panels = []
    if mode in ("time", "both"):
        panels.append({"series": time_series, "ylabel": TIME_LABEL, "band": True})
    if mode in ("fraction", "both") and frac_series:
        panels.append({"series": frac_series, "ylabel": FRACTION_LABEL, "log_y": False, "hline": 1.0})
    if not panels:
        return ""
    spec = {"title": title, "xlabel": xlabel or x, "panels": panels}
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
