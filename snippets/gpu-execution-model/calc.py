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


def limits_text(capability: str) -> str:
    """The per-SM limits an item needs, from the spec table, as the prompt states them."""
    from snippets._gpu import specs

    get = lambda field: int(specs.get(SimpleNamespace(observed={}), capability, field))  # noqa: E731
    return (f"{capability} 的 GPU（每个 SM 最多 {get('max_threads_per_sm')} 个线程、{get('max_warps_per_sm')} 个 warp、"
            f"{get('max_blocks_per_sm')} 个 block、{get('registers_per_sm')} 个 32 位寄存器、"
            f"{get('shared_per_sm') // 1024} KiB shared memory；shared memory 以 {get('shared_alloc_unit')} 字节为单位分配）")


CALCULATORS = [
    {"id": "occupancy", "question": Q, "claim": "exec.register-granularity",
     "prompt": "在计算能力 {capability}上，一个 kernel 每个 block {threads} 个线程、每线程 {registers} 个寄存器、"
               "每个 block 用 {shared_kib} KiB shared memory。按 occupancy calculator 的规则（寄存器按 warp 以 256 个为单位分配，"
               "shared memory 每 block 另有 1 KiB 系统预留），它的 occupancy 是百分之多少？",
     "shown": {"capability": limits_text},
     "params": {"capability": ["8.0", "9.0"], "threads": [128, 256, 512], "registers": [32, 40, 64, 72, 128],
                "shared_kib": [0, 16, 48, 96]},
     "answer": occupancy_pct, "unit": "%", "tolerance": 0.005, "digits": 4,
     "explain": "每 SM 能放下的 block 数取线程、warp、block、寄存器、shared memory 五个上限的最小值；"
                "occupancy = block 数 × 每 block 的 warp 数 ÷ 每 SM 最多 warp 数。"},
]


def _placed(ctx, capability: str, threads: int, registers: int, shared: int) -> float:
    """The occupancy in percent, found the other way: place blocks one at a time while every resource still
    has room, then the placed blocks' warps over the SM's maximum."""
    from snippets._gpu import specs

    get = lambda field: int(specs.get(ctx, capability, field))  # noqa: E731
    warps = -(-threads // get("warp_size"))
    regs = warps * -(-registers * get("warp_size") // get("register_alloc_unit")) * get("register_alloc_unit")
    smem = -(-(shared + get("reserved_shared_per_block")) // get("shared_alloc_unit")) * get("shared_alloc_unit") if shared else 0
    free = {"threads": get("max_threads_per_sm"), "warps": get("max_warps_per_sm"), "blocks": get("max_blocks_per_sm"),
            "registers": get("registers_per_sm"), "shared": get("shared_per_sm")}
    need = {"threads": threads, "warps": warps, "blocks": 1, "registers": regs, "shared": smem}
    placed = 0
    while all(free[k] >= need[k] for k in free):
        free = {k: free[k] - need[k] for k in free}
        placed += 1
    return 100 * (placed * warps / get("max_warps_per_sm"))


@claim("exec.occupancy-items", question=Q,
       statement="模拟面试里 occupancy 的 {n_items} 道计算题按 occupancy calculator 的规则在规格表的每 SM 上限上出答案，"
                 "这几道分别卡在 {limits} 上；再按同样的分配单位一个一个往 SM 上放 block 复算，两种算法得出的 block 数"
                 "{equal:?每道都相等|有不相等的}。两种算法用的是同一张规格表和同样的分配单位，核对的是算术，不是规则："
                 "规则错了两边一起错。规则里有一部分由别的论断核对：ptxas 为 sm_90a 给的寄存器数按 8 个一档"
                 "（`exec.launch-bounds-granularity`），每 SM 的寄存器、线程和 shared memory 上限要在 GPU 上与运行时报告的属性对照"
                 "（`exec.device-properties`）。没有在哪块 GPU 上调用 occupancy API 逐题核对，8.0 的题只依据规格表。",
       expect={"equal": True, "n_items": 6})
def _(ctx):
    """The quiz's items of this question, the limit that decides each, and each answer found a second way."""
    from snippets._calc import checked, same

    words = {"threads": "线程数", "warps": "warp 数", "blocks": "block 数", "registers": "寄存器", "shared": "shared memory"}
    limits = []

    def again(_calc, p):
        kernel = (p["capability"], p["threads"], p["registers"], p["shared_kib"] * 1024)
        limits.append(words[occupancy.blocks_per_sm(ctx, *kernel)["limiter"]])
        return _placed(ctx, *kernel)

    quiz, pairs = checked(CALCULATORS, again)
    return {"n_items": len(pairs), "limits": "、".join(sorted(set(limits))), "equal": same(pairs), "calc_items": quiz}
