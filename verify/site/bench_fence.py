"""HTML for the ``bench`` fence: a benchmark group's table, plot and provenance, per device.

A fence names a group and, optionally, how to draw it::

    ```bench
    expand-vs-repeat
    x: size            # extra_info key on the x axis (log scale)
    plot: time         # time | fraction | both (default) | none
    xscale: linear     # log (default, base 2) | linear, for an x that starts at 0
    ```

or compares two stored result files (device keys under ``benchmarks/``; ``here`` stands for the
key of the machine that builds, so the same page compares its own two runs anywhere)::

    ```bench
    compare: here here-1thread
    threshold: 0.1
    ```

Rendering reads stored JSON only (see :mod:`verify.bench` for when benchmarks run). Plots are
SVG drawn by matplotlib's Agg backend with text left as text (no embedded or fetched fonts) and
black replaced by ``currentColor``, so they follow the light and dark themes.
"""

from __future__ import annotations

import logging
from typing import Any

from markupsafe import Markup

from verify import settings as settings_mod
from verify.bench import compare as cmp
from verify.bench import store
from verify.bench.plot import label, plot
from verify.core.units import fmt_rate, fmt_time
from verify.settings import Settings
from verify.site import session
from verify.site.fences import safe_fence
from verify.site.templating import BENCH_STATE, render
from verify.site.templating import LABELS as TEXT

log = logging.getLogger("mkdocs.verify")

# Result-file freshness -> (CSS modifier, label), kept under its old name for importers.
STATE_LABEL = BENCH_STATE

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


# --- tables -------------------------------------------------------------------------------------

def _rows(benches: list[dict[str, Any]], x: str) -> list[tuple[str, ...]]:
    """The cells of a device's table, one tuple per benchmark (headings: ``LABELS["bench_head"]``)."""
    rows: list[tuple[str, ...]] = []
    for b in sorted(benches, key=lambda b: (str(label(b)), b.get("extra_info", {}).get(x, 0) or 0)):
        e = b.get("extra_info", {})
        rounds = b.get("stats", {}).get("rounds", "?")
        rows.append((str(label(b)), str(e.get(x, b.get("param") or "")), fmt_time(cmp.per_call(b)),
                     f"{e.get('spread', 0):.0%}", f"{rounds} × {e.get('inner', 1)}",
                     fmt_rate(e) or TEXT["missing"], f"{e['fraction']:.1%}" if "fraction" in e else TEXT["missing"]))
    return rows


def _provenance(data: dict[str, Any], files: list[str], state: dict[str, str]) -> list[dict[str, Any]]:
    """Machine, torch, date, commit and measured limits of each result file behind a block."""
    parts = []
    for f in files:
        run = data.get("runs", {}).get(f, {})
        m = run.get("machine_info") or data.get("machine_info", {})
        lim = m.get("limits") or {}
        limits = []
        if "copy_GBps" in lim:
            limits.append(TEXT["copy_limit"].format(lim["copy_GBps"]))
        for k, v in sorted(lim.items()):
            if k.startswith("matmul_") and k.endswith("_GFLOPs"):
                limits.append(TEXT["matmul_limit"].format(k[7:-7], v))
        parts.append({
            "state": state.get(f, "missing"), "device": m.get("gpu_name") or m.get("cpu_model") or "?",
            "cpu_count": m.get("cpu_count", "?"), "threads": m.get("threads", "?"),
            "torch": str(m.get("torch", "?")), "torch_build": str(m.get("torch_build", "?")),
            "date": (run.get("datetime") or data.get("datetime") or "")[:16].replace("T", " "),
            "commit": ((run.get("commit_info") or {}).get("id") or "")[:12], "file": f, "limits": limits,
        })
    return parts


def _device_block(key: str, data: dict[str, Any], group: str, opts: dict[str, str],
                  settings: Settings, here: bool = False) -> dict[str, Any] | None:
    import fnmatch  # noqa: PLC0415

    benches = [b for b in data.get("benchmarks", []) if fnmatch.fnmatchcase(b.get("group") or "", group)]
    if not benches:
        return None
    x = opts.get("x", "size")
    files = sorted({store.file_of(b) for b in benches})
    state = store.freshness(settings, data)
    mode = opts.get("plot", "both")
    # An <img> of our own making (alt escaped by plot), so it goes into the page as it is.
    svg = plot(benches, f"{group} · {key}", x, mode, settings.cache_dir, opts.get("xscale", "log"))
    targets = [(str(label(b)), e["target"], bool(e.get("target_met")))
               for b in benches if isinstance((e := b.get("extra_info", {})).get("target"), str)]
    return {"key": key, "here": here, "plot": Markup(svg), "rows": _rows(benches, x), "targets": targets,
            "provenance": _provenance(data, files, state)}


def render_group(group: str, opts: dict[str, str], settings: Settings) -> str:
    stored = store.load_all(settings)
    here = session.get().outcome.probe.get("device_key", "")
    order = sorted(stored, key=lambda k: (k != here, k))
    devices = [d for k in order if (d := _device_block(k, stored[k], group, opts, settings, here=k == here))]
    if not devices and opts.get("needs") == "cuda" and not here.startswith("cuda"):
        return render("bench_message.html", group=group, needs_cuda=True)
    if not devices:
        log.info("verify: no benchmark results for group %s; run `verify bench run`", group)
        return render("bench_message.html", group=group, needs_cuda=False)
    return render("bench_group.html", devices=devices)


def render_compare(opts: dict[str, str], group: str, settings: Settings) -> str:
    import fnmatch  # noqa: PLC0415

    # "here" names this machine's device key: ``compare: here here-1thread`` works on any machine
    here = session.get().outcome.probe.get("device_key", "")
    a_key, b_key = (k.replace("here", here, 1) if k.startswith("here") else k for k in opts["compare"].split()[:2])
    threshold = float(opts.get("threshold", 0.1))
    stored = store.load_all(settings)
    if a_key not in stored or b_key not in stored:
        return render("bench_compare.html", missing=True, a_key=a_key, b_key=b_key)
    rows = [{"group": r["group"] or "", "name": r["name"], "a": fmt_time(r["a_s"]), "b": fmt_time(r["b_s"]),
             "ratio": f"{r['ratio']:.2f}", "verdict": r["verdict"]}
            for r in cmp.compare(stored[a_key], stored[b_key], threshold)
            if fnmatch.fnmatchcase(r["group"] or "", group or "*")]
    return render("bench_compare.html", missing=False, a_key=a_key, b_key=b_key, threshold=threshold,
                  a_machine=cmp.machine_line(stored[a_key]), b_machine=cmp.machine_line(stored[b_key]),
                  rows=rows, worse=sum(r["verdict"] == "regressed" for r in rows))


@safe_fence
def bench_fence(source: str, language: str, class_name: str, options: dict, md: Any, **kwargs: Any) -> str:
    """```bench fence: a group's results on every device that has them, or a comparison."""
    group, opts = _parse(source)
    settings = settings_mod.for_site()
    if "compare" in opts:
        return render_compare(opts, group, settings)
    return render_group(group, opts, settings)
