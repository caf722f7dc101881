"""HTML for the ``bench`` fence: a benchmark group's table, plot and provenance, per device.

A fence names a group and, optionally, how to draw it::

    ```bench
    expand-vs-repeat
    x: size            # extra_info key on the x axis (log scale)
    xlabel: 元素数      # the x axis's words (default: the key)
    title: expand 与 repeat   # the plot's title, before the machine's name (default: the group)
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
black replaced by ``currentColor``, so they follow the light and dark themes. Their words are
Chinese: the axes (:mod:`verify.bench.plot`), the title and x label from the fence, and each variant
as :data:`VARIANTS` names it, in the legend and in the table alike. A table leaves out a column that
no row of it has a value in (a group with no limit has no 「占该机上限」).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from verify import settings as settings_mod
from verify.bench import compare as cmp
from verify.bench import store
from verify.bench.plot import plot
from verify.bench.results import BenchMachine, Benchmark, Results
from verify.core.units import fmt_rate, fmt_time
from verify.settings import Settings
from verify.site import session
from verify.site.fences import safe_fence
from verify.site.templating import BENCH_STATE, render
from verify.site.templating import LABELS as TEXT

log = logging.getLogger("mkdocs.verify")

# Result-file freshness -> (CSS modifier, label), kept under its old name for importers.
STATE_LABEL = BENCH_STATE

OPTIONS = ("x", "xlabel", "plot", "xscale", "title", "compare", "threshold", "needs")

#: a variant's words on the page (legend and table), by the label the benchmark gives it; one not here
#: keeps its label (an op's own name, such as expand, reads the same in Chinese)
VARIANTS = {
    "copy_": "拷贝 copy_",
    "mm float32": "矩阵乘 float32",
    "add (fresh output)": "add，新分配输出",
    "add (preallocated output)": "add，预分配输出",
    "eager fresh": "eager，新分配输出",
    "eager preallocated": "eager，预分配输出",
    "compiled fresh": "torch.compile，新分配输出",
    "compiled preallocated": "torch.compile，预分配输出",
    "compiled": "torch.compile",
    "graph": "CUDA graph 重放",
    "naive": "手写注意力",
    "sdpa": "SDPA",
    "cold": "冷启动",
    "disk-cached": "磁盘缓存",
    "warm (same process)": "热（同一进程）",
    "multiprocessing.Pool": "裸进程 Pool",
    "C++ op": "C++ 算子",
    "Python list loop": "Python 列表循环",
    "tensor element loop": "张量逐元素索引循环",
}

#: a comparison's verdict in words (the CSS class keeps the key)
VERDICTS = {"regressed": "变慢", "improved": "变快", "same": "相当"}


def _parse(source: str) -> tuple[str, dict[str, str]]:
    """The group name (or glob) and the ``key: value`` options of a fence (:func:`verify.core.pages.fence_options`)."""
    from verify.core.pages import fence_options  # noqa: PLC0415

    fence = fence_options(source)
    for key in fence.options:
        if key not in OPTIONS:
            raise ValueError(f"unknown option {key!r} (known: {', '.join(OPTIONS)})")
    return fence.name, dict(fence.options)


# --- tables -------------------------------------------------------------------------------------

def _fractions(benches: list[Benchmark], data: Results) -> dict[str, float | None]:
    """Each benchmark's shown fraction of its machine's limit (:meth:`Benchmark.fraction_shown`)."""
    out = {}
    for b in benches:
        machine = data.machine_of(b.file)
        out[b.fullname] = b.fraction_shown(machine.limits if machine else {})
    return out


def _rows(benches: list[Benchmark], x: str, fractions: dict[str, float | None]) -> list[tuple[str, ...]]:
    """The cells of a device's table, one tuple per benchmark (headings: ``LABELS["bench_head"]``)."""
    rows: list[tuple[str, ...]] = []
    for b in sorted(benches, key=lambda b: (b.label, b.info.get(x, 0) or 0)):
        e = b.info
        rounds = "?" if b.rounds is None else b.rounds
        fraction = fractions.get(b.fullname)
        rows.append((VARIANTS.get(b.label, b.label), str(e.get(x, b.param or "")), fmt_time(b.per_call),
                     f"{e.get('spread', 0):.0%}", f"{rounds} × {e.get('inner', 1)}",
                     fmt_rate(e) or TEXT["missing"], TEXT["missing"] if fraction is None else f"{fraction:.1%}"))
    return rows


def _columns(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> tuple[list[str], list[list[str]]]:
    """The headings and cells of the columns that some row has a value in: a column of 「—」 says nothing."""
    keep = [i for i in range(len(head)) if any(row[i] not in ("", TEXT["missing"]) for row in rows)]
    return [head[i] for i in keep], [[row[i] for i in keep] for row in rows]


@dataclass(frozen=True)
class RunNote:
    """The line under a device's table for one result file behind it: its freshness and the run's
    machine, torch, date, commit and measured limits."""

    state: str  # current | stale | missing
    device: str
    cpu_count: int | str
    threads: int | str
    torch: str
    torch_build: str
    date: str
    commit: str
    file: str
    limits: list[str]


def _shown(value: int | str | None) -> int | str:
    return "?" if value is None else value


def _provenance(data: Results, files: list[str], state: dict[str, str]) -> list[RunNote]:
    """Machine, torch, date, commit and measured limits of each result file behind a block."""
    parts = []
    for f in files:
        run = data.run_of(f)
        m = data.machine_of(f) or BenchMachine.from_json({})
        limits = []
        if "copy_GBps" in m.limits:
            limits.append(TEXT["copy_limit"].format(m.limits["copy_GBps"]))
        for k, v in sorted(m.limits.items()):
            if k.startswith("matmul_") and k.endswith("_GFLOPs"):
                limits.append(TEXT["matmul_limit"].format(k[7:-7], v))
        parts.append(RunNote(
            state=state.get(f, "missing"), device=m.name, cpu_count=_shown(m.cpu_count), threads=_shown(m.threads),
            torch=str(_shown(m.torch)), torch_build=str(_shown(m.torch_build)),
            date=((run.datetime if run else None) or data.datetime or "")[:16].replace("T", " "),
            commit=((run.commit.id if run else None) or "")[:12], file=f, limits=limits))
    return parts


@dataclass(frozen=True)
class DeviceBlock:
    """One device's part of a ``bench`` fence: its plot, table, targets and result files."""

    key: str
    here: bool  # the machine that builds the site
    plot: Markup
    head: list[str]  # the columns shown (:func:`_columns`)
    rows: list[list[str]]
    targets: list[tuple[str, str, bool]]  # (variant, the target as text, met)
    provenance: list[RunNote]
    fraction_hidden: bool = False  # a bandwidth fraction left out: its data may sit in a cache

    @property
    def name(self) -> str:
        """The machine as a reader names it (``AMD EPYC … · torch 线程 1``), not its device key."""
        note = self.provenance[0] if self.provenance else None
        if note is None or not note.device:
            return self.key
        return f"{note.device} · torch 线程 {note.threads}" if note.threads not in ("?", None) else note.device


def _device_block(key: str, data: Results, group: str, opts: dict[str, str],
                  settings: Settings, here: bool = False) -> DeviceBlock | None:
    import fnmatch  # noqa: PLC0415

    benches = [b for b in data.benchmarks if fnmatch.fnmatchcase(b.group or "", group)]
    if not benches:
        return None
    x = opts.get("x", "size")
    files = sorted({b.file for b in benches})
    state = store.freshness(settings, data)
    mode = opts.get("plot", "both")
    # An <img> of our own making (alt escaped by plot), so it goes into the page as it is.
    fractions = _fractions(benches, data)
    provenance = _provenance(data, files, state)
    head, rows = _columns(TEXT["bench_head"], _rows(benches, x, fractions))
    block = DeviceBlock(key, here, Markup(""), head, rows, [], provenance)
    title = f"{opts.get('title') or group}\n{block.name}"  # two lines: a narrow plot clips one long one
    svg = plot(benches, title, x, mode, settings.cache_dir, opts.get("xscale", "log"), fractions,
               xlabel=opts.get("xlabel", ""), names=VARIANTS)
    targets = [(VARIANTS.get(b.label, b.label), b.info["target"], bool(b.info.get("target_met")))
               for b in benches if isinstance(b.info.get("target"), str)]
    # the note on a left-out fraction, where the table shows that column at all
    hidden = TEXT["bench_head"][-1] in head and any(
        fractions[b.fullname] is None and "limit_GBps" in b.info for b in benches)
    return DeviceBlock(key, here, Markup(svg), head, rows, targets, provenance, fraction_hidden=hidden)


def render_group(group: str, opts: dict[str, str], settings: Settings) -> str:
    stored = store.load_all(settings)
    here = session.get().outcome.probe.device_key
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
    here = session.get().outcome.probe.device_key
    a_key, b_key = (k.replace("here", here, 1) if k.startswith("here") else k for k in opts["compare"].split()[:2])
    threshold = float(opts.get("threshold", 0.1))
    stored = store.load_all(settings)
    if a_key not in stored or b_key not in stored:
        return render("bench_compare.html", missing=True, a_key=a_key, b_key=b_key)
    rows = [{"group": r.group or "", "name": r.name, "a": fmt_time(r.a_s), "b": fmt_time(r.b_s),
             "ratio": f"{r.ratio:.2f}", "verdict": r.verdict, "word": VERDICTS.get(r.verdict, r.verdict)}
            for r in cmp.compare(stored[a_key], stored[b_key], threshold)
            if fnmatch.fnmatchcase(r.group or "", group or "*")]
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
