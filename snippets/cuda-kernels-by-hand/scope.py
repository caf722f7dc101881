"""What the Triton page's sentences rest on, said for CUDA C++ too (nvcc, sm_90a), and where a row stays in L2."""

from __future__ import annotations


from snippets._gpu import compiled, occupancy, specs
from snippets import _sibling as sibling
from verify.claim import claim

Q = "cuda-kernels-by-hand"


def _stats(ctx, one_pass):
    src = (ctx.snippet_dir() / "layernorm_stats.cu").read_text()
    k = compiled.cuda_source(ctx, src, name=f"layernorm_stats_{one_pass}", flags=(f"-DONE_PASS={one_pass}",))
    return {"bar": k.sass_count("BAR"), "shfl": k.sass_count("SHFL"), "reductions": k.sass_count("BAR") // 2}


@claim(
    "kernels.cuda-layernorm-pair-reduce",
    question=Q,
    statement="手写 CUDA 的块内 LayerNorm 统计量（{=256} 线程一行，nvcc 13.0、sm_90a）：两遍法先归约 Σx、再归约 Σ(x−均值)²，"
              "是 {two.reductions} 次块内归约、{two.bar} 个 BAR、{two.shfl} 条 SHFL；单遍法把 (Σx, Σx²) 打成一对一起归约，"
              "是 {one.reductions} 次、{one.bar} 个 BAR、{one.shfl} 条 SHFL：少了一轮 barrier，shuffle 条数{same_shfl:?不变|变了}"
              "（一对值每步两条）。",
    expect={"two": {"bar": 4, "reductions": 2, "shfl": 20}, "one": {"bar": 2, "reductions": 1, "shfl": 20}, "same_shfl": True},
    needs=["nvcc"],
)
def _(ctx):
    two, one = _stats(ctx, 0), _stats(ctx, 1)
    return {"two": two, "one": one, "same_shfl": two["shfl"] == one["shfl"]}


def _rsqrt(ctx, ftz):
    src = (ctx.snippet_dir() / "rsqrt.cu").read_text()
    k = compiled.cuda_source(ctx, src, name=f"rsqrt_ftz{ftz}", flags=(f"-ftz={'true' if ftz else 'false'}",))
    ops = k.sass_ops
    return {"rsq": k.sass_count("MUFU.RSQ"), "ptx_ftz": k.ptx_count("rsqrt.approx.ftz"),
            "ptx_plain": k.ptx_count("rsqrt.approx.f32"), "sass": sum(ops.values()), "ops": dict(sorted(ops.items()))}


@claim(
    "kernels.rsqrtf-ftz",
    question=Q,
    statement="CUDA 的 `rsqrtf` 按 nvcc 13.0 的默认（`-ftz=false`）为 sm_90a 编译：PTX 是 `rsqrt.approx.f32`（{plain_ptx_plain} 条、"
              "不带 ftz），SASS 里除了 {plain_rsq} 条 `MUFU.RSQ`，还多出 {extra_fsetp} 条比较（FSETP）和 {extra_fmul} 条 FMUL：输入是非规格化数时"
              "先放大再算、结果再缩回；加 `-ftz=true`（`--use_fast_math` 含它）后 PTX 是 `rsqrt.approx.ftz.f32`，只剩 {ftz_rsq} 条 "
              "`MUFU.RSQ`，这些多出的指令都没有（含 NOP 在内整个 kernel {ftz_sass} 条对 {plain_sass} 条）。",
    expect={"plain_rsq": 1, "plain_ptx_plain": 1, "plain_ptx_ftz": 0, "ftz_rsq": 1, "ftz_ptx_plain": 0, "ftz_ptx_ftz": 1,
            "extra_fsetp": {">=": 1}, "extra_fmul": {">=": 1}, "plain_longer": True},
    needs=["nvcc"],
)
def _(ctx):
    plain, ftz = _rsqrt(ctx, False), _rsqrt(ctx, True)
    extra = {op: n - ftz["ops"].get(op, 0) for op, n in plain["ops"].items() if n > ftz["ops"].get(op, 0)}
    return {"plain_rsq": plain["rsq"], "plain_ptx_plain": plain["ptx_plain"], "plain_ptx_ftz": plain["ptx_ftz"],
            "ftz_rsq": ftz["rsq"], "ftz_ptx_plain": ftz["ptx_plain"], "ftz_ptx_ftz": ftz["ptx_ftz"],
            "plain_sass": plain["sass"], "ftz_sass": ftz["sass"], "extra_ops": extra,
            "extra_fsetp": sum(n for op, n in extra.items() if op.startswith("FSETP")), "extra_fmul": extra.get("FMUL", 0),
            "plain_longer": plain["sass"] > ftz["sass"]}


def _triton_kernels(ctx):
    """The kernels of triton_kernels.py beside this file (its claims are not run from here)."""
    return sibling.load(ctx.snippet_dir() / "triton_kernels.py")


@claim(
    "kernels.softmax-rows-in-l2",
    question=Q,
    statement="三遍版的一个 program 第二、三遍读的是自己那一行，这一行还在不在 L2，要看同时在跑的行加起来有多大。"
              "三遍版（BLOCK={=1024}、num_warps={=4}）Triton 3.9 为 sm_90a 编译后每线程 {registers} 个寄存器，按 9.0 的上限每 SM "
              "同时驻留 {per_sm} 个 program（卡在{limiters}上），H200 SXM 的 {sms} 个 SM 上同时在跑 {resident} 行。"
              "这些行加起来：行长 {=2048} 的 fp32 是 {cols_2048.resident_bytes:bytes}，{fits_2048:?放得进|放不进} {l2:bytes} 的 L2；"
              "行长 {=8192} 是 {cols_8192.resident_bytes:bytes}，{fits_8192:?放得进|放不进}；行长 {=262144} 时一行就 "
              "{cols_262144.row:bytes}，L2 只放得下 {rows_in_l2_262144} 行，{long_under_sms:?比 SM 还少|不比 SM 少}。"
              "只比了总量（输出 y 也经过 L2，没算），没有模拟替换。",
    expect={"per_sm": 16, "resident": 2112, "fits_2048": True, "fits_8192": False, "rows_in_l2_262144": 50,
            "long_under_sms": True},
    needs=["triton"],
)
def _(ctx):
    """范围：H200 SXM、三遍版 softmax 的这一种编译"""
    tk = _triton_kernels(ctx)
    c = compiled.triton_kernel(ctx, tk.softmax_3pass, tk.F32, {"BLOCK": 1024}, num_warps=4)
    occ = occupancy.blocks_per_sm(ctx, "9.0", 4 * 32, c.registers, c.shared)
    l2, sms = int(specs.get(ctx, "H200 SXM", "l2_bytes")), int(specs.get(ctx, "H200 SXM", "sms"))
    resident = occ["blocks"] * sms
    words = {"threads": "线程数", "warps": "warp 数", "blocks": "block 数", "registers": "寄存器", "shared": "shared memory"}
    limiters = "、".join(words[k] for k, n in occ["limits"].items() if n == occ["blocks"])
    out = {"registers": c.registers, "shared": c.shared, "per_sm": occ["blocks"], "limiters": limiters,
           "l2": l2, "sms": sms, "resident": resident}
    for cols in (2048, 8192, 262144):
        row = cols * 4
        out[f"cols_{cols}"] = {"row": row, "resident_bytes": resident * row}
        out[f"fits_{cols}"], out[f"rows_in_l2_{cols}"] = resident * row <= l2, l2 // row
    out["long_under_sms"] = out["rows_in_l2_262144"] < sms
    return out
