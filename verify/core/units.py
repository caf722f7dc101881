"""Numbers as a reader sees them: durations and achieved rates, for pages and terminal tables alike."""

from __future__ import annotations

from verify.core.records import JsonObject


def fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"


def fmt_eta(s: float) -> str:
    """``42 s``, ``3 min 05 s``: an estimate, to the second."""
    s = round(s)
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def fmt_rate(extra: JsonObject) -> str:
    """The achieved rate a benchmark wrote into its ``extra_info``, as text; "" when it wrote none."""
    if "speedup" in extra:  # DataLoader workers: the limit is the ideal speedup min(workers, cores)
        return f"{extra['speedup']:.2f}× (理想 {extra.get('ideal_speedup', '?')}×)"
    if "GFLOPs" in extra:
        return f"{extra['GFLOPs']:.4g} GFLOP/s"
    if "GBps" in extra:
        return f"{extra['GBps']:.3g} GB/s"
    return ""
