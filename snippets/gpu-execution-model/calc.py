"""计算题 of this question: a block's occupancy on an SM, by the occupancy calculator's rules.

The rules are ``snippets/_gpu/occupancy.py`` on the published per-SM limits; the claims of this
page check them (``exec.register-granularity``: 33 registers give 75%, not 87.5%; the limits of
a compiled kernel). The quiz draws block shapes and asks for the occupancy they give.
"""

from __future__ import annotations

from types import SimpleNamespace

from snippets._gpu import occupancy
from verify.claim import claim

Q = "gpu-execution-model"


def occupancy_pct(capability: str, threads: int, registers: int, shared_kib: int) -> float:
    """Resident warps over the SM's maximum, in percent, for one kernel's block on ``capability``."""
    ctx = SimpleNamespace(observed={})  # the spec table notes its sources on a claim's context
    return 100 * occupancy.blocks_per_sm(ctx, capability, threads, registers, shared_kib * 1024)["occupancy"]


CALCULATORS = [
    {"id": "occupancy", "question": Q, "claim": "exec.register-granularity",
     "prompt": "计算能力 {capability} 的 GPU 上，一个 kernel 每个 block {threads} 个线程、每线程 {registers} 个寄存器、"
               "每个 block 用 {shared_kib} KiB shared memory。按 occupancy calculator 的规则（寄存器按 warp 以 256 个为单位分配，"
               "shared memory 每 block 另有 1 KiB 系统预留），它的 occupancy 是百分之多少？",
     "params": {"capability": ["8.0", "9.0"], "threads": [128, 256, 512], "registers": [32, 40, 64, 72, 128],
                "shared_kib": [0, 16, 48, 96]},
     "answer": occupancy_pct, "unit": "%", "tolerance": 0.005, "digits": 4,
     "explain": "每 SM 能放下的 block 数取线程、warp、block、寄存器、shared memory 五个上限的最小值；"
                "occupancy = block 数 × 每 block 的 warp 数 ÷ 每 SM 最多 warp 数。"},
]


@claim("exec.occupancy-items", question=Q,
       statement="模拟面试里 occupancy 的 {n_items} 道计算题，参数按固定种子抽取，答案按 occupancy calculator 的规则"
                 "（`snippets/_gpu/occupancy.py`，上面几条论断核对过）在规格表的每 SM 上限上算出；"
                 "决定这几道题的上限是 {limits}。",
       expect={"n_items": 6})
def _(ctx):
    """The quiz's items of this question, with the limit that decides each (the spec table's sources noted)."""
    from snippets._calc import items

    words = {"threads": "线程数", "warps": "warp 数", "blocks": "block 数", "registers": "寄存器", "shared": "shared memory"}
    quiz = [items(calc) for calc in CALCULATORS]
    limits = []
    for item in (i for calc in quiz for i in calc["items"]):
        p = item["params"]
        fit = occupancy.blocks_per_sm(ctx, p["capability"], p["threads"], p["registers"], p["shared_kib"] * 1024)
        limits.append(words[fit["limiter"]])
    return {"n_items": len(limits), "limits": "、".join(sorted(set(limits))), "calc_items": quiz}
