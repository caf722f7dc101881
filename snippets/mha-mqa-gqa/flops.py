"""FLOPs of MHA, GQA and MQA counted with FlopCounterMode on meta tensors (real shapes, no memory):
what sharing K/V heads removes and what it leaves."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from verify.claim import claim

Q = "mha-mqa-gqa"

D, HQ, DH, FFN = 4096, 32, 128, 11008  # Llama-2-7B's layer shapes
HKV = {"mha": 32, "gqa": 8, "mqa": 1}


class Layer(nn.Module):
    """One pre-norm decoder layer whose attention shares each K/V head among ``HQ // hkv`` query heads.

    The attention is written as plain matmuls on grouped queries, (b, hkv, g * t, dh) against
    (b, hkv, dh, s): K/V are read once per group and never copied, and FlopCounterMode sees every
    FLOP (it has no formula for the CPU SDPA kernel: see flash.flop-counter-cpu).
    """

    def __init__(self, hkv, device="meta"):
        super().__init__()
        self.hkv = hkv
        self.wq = nn.Linear(D, HQ * DH, bias=False, device=device)
        self.wk = nn.Linear(D, hkv * DH, bias=False, device=device)
        self.wv = nn.Linear(D, hkv * DH, bias=False, device=device)
        self.wo = nn.Linear(HQ * DH, D, bias=False, device=device)
        self.gate = nn.Linear(D, FFN, bias=False, device=device)
        self.up = nn.Linear(D, FFN, bias=False, device=device)
        self.down = nn.Linear(FFN, D, bias=False, device=device)

    def forward(self, x, past=0):
        b, t, _ = x.shape
        g = HQ // self.hkv
        q = self.wq(x).view(b, t, self.hkv, g, DH).permute(0, 2, 3, 1, 4).reshape(b, self.hkv, g * t, DH)
        k = self.wk(x).view(b, t, self.hkv, DH).transpose(1, 2)
        v = self.wv(x).view(b, t, self.hkv, DH).transpose(1, 2)
        if past:  # a decode step: the cache already holds `past` positions
            k = torch.cat((torch.empty(b, self.hkv, past, DH, device=x.device, dtype=x.dtype), k), 2)
            v = torch.cat((torch.empty(b, self.hkv, past, DH, device=x.device, dtype=x.dtype), v), 2)
        self.kv_bytes = k.untyped_storage().nbytes() + v.untyped_storage().nbytes()
        scores = (q @ k.transpose(-2, -1)) * DH ** -0.5
        out = scores.softmax(-1) @ v  # (b, hkv, g * t, dh)
        out = out.view(b, self.hkv, g, t, DH).permute(0, 3, 1, 2, 4).reshape(b, t, HQ * DH)
        x = x + self.wo(out)
        return x + self.down(F.silu(self.gate(x)) * self.up(x))


def _count(hkv, t, past=0, dtype=torch.float32):
    layer = Layer(hkv).to(dtype)
    x = torch.empty(1, t, D, device="meta", dtype=dtype)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        layer(x, past)
    by = {str(op).split(".")[-1]: n for op, n in fc.get_flop_counts()["Global"].items()}
    return {"linear": by.get("mm", 0), "attention": by.get("bmm", 0), "total": fc.get_total_flops(),
            "kv_bytes": layer.kv_bytes}


@claim("gqa.prefill-flops", question=Q,
       statement="用 `FlopCounterMode` 数 Llama-2-7B 形状的一层在 {=2048} 个 token 上的 prefill：注意力本身的两次矩阵乘"
                 "（QKᵀ 与 PV）在 MHA、GQA、MQA 下都是 {attention.mha_tflop:.3f} TFLOP，一点没少，因为查询头还是 {hq} 个；"
                 "少的只是 `W_k`、`W_v` 两个投影。整层（含 MLP）从 MHA 的 {total.mha_tflop:.3f} TFLOP 降到 GQA 的 "
                 "{total.gqa_tflop:.3f}、MQA 的 {total.mqa_tflop:.3f}，只少了 {saving.gqa:pct} 和 {saving.mqa:pct}。",
       expect={"attention_same": True, "attention_mha": 4 * 32 * 2048 * 2048 * 128,
               "linear_mha": 2 * 2048 * (4 * 4096 * 4096 + 3 * 4096 * 11008),
               "linear_gqa": 2 * 2048 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 11008)})
def _(ctx):
    c = {name: _count(h, 2048) for name, h in HKV.items()}
    return {"hq": HQ, "attention_same": len({v["attention"] for v in c.values()}) == 1,
            "attention_mha": c["mha"]["attention"], "linear_mha": c["mha"]["linear"], "linear_gqa": c["gqa"]["linear"],
            "attention": {f"{k}_tflop": v["attention"] / 1e12 for k, v in c.items()},
            "total": {f"{k}_tflop": v["total"] / 1e12 for k, v in c.items()},
            "saving": {k: 1 - c[k]["total"] / c["mha"]["total"] for k in c}}


@claim("gqa.decode-intensity", question=Q,
       statement="解码一步（上下文 {=4096}）才是 GQA 发力的地方：注意力部分的 FLOPs 三者同为 {attention_mflop:.1f} MFLOP，"
                 "要读的 K/V 缓存却从 MHA 的 {kv_bytes.mha:bytes} 降到 GQA 的 {kv_bytes.gqa:bytes}、MQA 的 "
                 "{kv_bytes.mqa:bytes}；每读一个字节缓存做的 FLOPs 从 {intensity.mha:.1f} 升到 {intensity.gqa:.1f}、"
                 "{intensity.mqa:.0f}，正好乘上了每组的查询头数。",
       expect={"attention_same": True, "attention": 4 * 32 * 4097 * 128,
               "kv_bytes": {"mha": 2 * 32 * 4097 * 128 * 2, "gqa": 2 * 8 * 4097 * 128 * 2, "mqa": 2 * 1 * 4097 * 128 * 2},
               "intensity_ratio": {"gqa": 4.0, "mqa": 32.0}})
def _(ctx):
    c = {name: _count(h, 1, past=4096, dtype=torch.float16) for name, h in HKV.items()}
    kv_bytes = {name: c[name]["kv_bytes"] for name in HKV}  # this layer's K and V after appending the token
    intensity = {name: c[name]["attention"] / kv_bytes[name] for name in HKV}
    return {"attention_same": len({v["attention"] for v in c.values()}) == 1, "attention": c["mha"]["attention"],
            "attention_mflop": c["mha"]["attention"] / 1e6, "kv_bytes": kv_bytes, "intensity": intensity,
            "intensity_ratio": {k: intensity[k] / intensity["mha"] for k in ("gqa", "mqa")}}
