"""Point-to-point sends of interleaved 1F1B against 1F1B, counted from the simulated orders.

The orders come from this folder's schedules.py (loaded by path: a snippet file is not an importable
package module). Rank r holds stages r, r + p, ...; a forward of stage s sends its output to stage
s + 1 and a backward of stage s sends its input gradient to stage s - 1, whenever that stage is on
another rank. Counts only, nothing runs.
"""

from __future__ import annotations

from pathlib import Path

from snippets import _sibling as sibling
from verify.claim import claim

Q = "pipeline-parallel"


def _schedules():
    return sibling.load(Path(__file__).with_name("schedules.py"))


def sends(orders, p, v):
    """Sends to another rank in ``orders`` ({rank: [(stage, kind, microbatch), ...]}), v * p stages."""
    n = 0
    for actions in orders.values():
        for s, kind, _mb in actions:
            if kind == "F" and s + 1 < v * p and (s + 1) % p != s % p:
                n += 1
            elif kind == "B" and s > 0 and (s - 1) % p != s % p:
                n += 1
    return n


@claim("pp.interleaved-p2p", question=Q,
       statement="点对点通信按模拟的动作顺序数：{=4} 个 rank、{=8} 个微批，1F1B 一共发 {sends.1} 次（前向传激活、反向传梯度），"
                 "interleaved v = {=2} 时 {sends.2} 次、v = {=4} 时 {sends.4} 次，是 1F1B 的 {ratio.2:.2f} 和 "
                 "{ratio.4:.2f} 倍，{formula_ok:?等于|不等于} (v·p−1)/(p−1)：一个微批要过 v·p−1 个 stage 边界，比 v 倍多 "
                 "(v−1)/(p−1)，p 大时接近 v 倍。",
       expect={"sends": {"1": 48, "2": 112, "4": 240}, "formula_ok": True})
def _(ctx):
    """范围：p = 4、m = 8 的模拟顺序"""
    pp = _schedules()
    p, m = pp.P, pp.M
    counts = {"1": sends(pp.one_f_one_b(p, m), p, 1)}
    for v in (2, 4):
        counts[str(v)] = sends(pp.interleaved(p, m, v), p, v)
    ratio = {v: counts[v] / counts["1"] for v in ("2", "4")}
    ok = all(abs(ratio[str(v)] - (v * p - 1) / (p - 1)) < 1e-12 for v in (2, 4))
    return {"sends": counts, "ratio": ratio, "formula_ok": ok}
