"""Where the compiler can prove a branch uniform (nvcc, sm_90a), and what a warp is, said against wrong rules."""

from __future__ import annotations

import re

from snippets._gpu import compiled
from verify.claim import claim

Q = "gpu-execution-model"
_PRED = re.compile(r"/\*[0-9a-f]{4,}\*/\s+@!?U?P\w+\s+([A-Z][A-Z0-9_.]*)")
_KINDS = {"thread": 0, "block": 1, "argument": 2, "warp": 3}


def _shape(ctx, kind):
    src = (ctx.snippet_dir() / "branch_cond.cu").read_text()
    k = compiled.cuda_source(ctx, src, name=f"branch_cond_{kind}", flags=(f"-DCOND_KIND={_KINDS[kind]}", "-DN=16"))
    predicated = [m.group(1) for m in map(_PRED.search, k.sass.splitlines()) if m]
    return {"bssy": k.sass_count("BSSY"), "bsync": k.sass_count("BSYNC"),
            "cond_bra": sum(op == "BRA" for op in predicated), "ffma": k.sass_count("FFMA")}


@claim(
    "exec.branch-sass-provably-uniform",
    question=Q,
    statement="同一个每条路径 {=16} 条 FMA 的 if/else，nvcc 13.0 为 sm_90a 按四种条件编译：`threadIdx.x % 2` 是 "
              "{thread.bssy} 个 BSSY / {thread.bsync} 个 BSYNC、{thread.cond_bra} 条带谓词的 BRA；`(threadIdx.x / 32) % 2` 也是 "
              "{warp.bssy} / {warp.bsync} / {warp.cond_bra}；`blockIdx.x % 2` 是 {block.bssy} / {block.bsync} / {block.cond_bra}，"
              "kernel 参数是 {argument.bssy} / {argument.bsync} / {argument.cond_bra}：编译器能证明对整个 block 或整个 grid 一致的条件，"
              "{proven_no_reconverge:?不再围汇合点、只剩一条带谓词的跳转|仍然围了汇合点}；按 warp 号的条件它证明不了，照分化处理。",
    expect={"thread": {"bssy": 1, "bsync": 1, "cond_bra": 1, "ffma": 32}, "warp": {"bssy": 1, "bsync": 1, "cond_bra": 1, "ffma": 32},
            "block": {"bssy": 0, "bsync": 0, "cond_bra": 1, "ffma": 32},
            "argument": {"bssy": 0, "bsync": 0, "cond_bra": 1, "ffma": 32}, "proven_no_reconverge": True},
    needs=["nvcc"],
)
def _(ctx):
    out = {kind: _shape(ctx, kind) for kind in _KINDS}
    out["proven_no_reconverge"] = all(out[k]["bssy"] == 0 and out[k]["bsync"] == 0 for k in ("block", "argument"))
    return out
