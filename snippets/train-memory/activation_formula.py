"""Activation memory per Transformer layer: Korthikanti et al. (2022), "Reducing Activation
Recomputation in Large Transformer Models", section 4.1: with 16-bit activations, no tensor
parallelism and no recomputation, one GPT layer keeps sbh(34 + 5as/h) bytes for the backward pass
(s tokens per sequence, b sequences, width h, a heads; 1-byte dropout masks).

The layer below is that paper's layer, written op by op so that every tensor autograd saves is
attributed to the term of the formula it belongs to (``saved_tensors_hooks`` sees each one; a
storage is counted once, parameters not at all). Then the formula itself for a 7B-class shape.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from verify.claim import claim

Q = "train-memory"
S, B, H, A = 128, 2, 64, 4  # tokens per sequence, sequences, width, heads
P_DROP = 0.1

# The paper's terms, in bytes, as multiples of sbh and of as^2 b (16-bit values, 1-byte masks).
FORMULA = {"ln1_in": (2, 0), "qkv_in": (2, 0), "q_k": (4, 0), "softmax_out": (0, 2), "attn_mask": (0, 1),
           "v_and_probs": (2, 2), "proj_in": (2, 0), "proj_mask": (1, 0), "ln2_in": (2, 0), "fc1_in": (2, 0),
           "gelu_in": (8, 0), "fc2_in": (8, 0), "mlp_mask": (1, 0)}


class _Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.qkv, self.proj = nn.Linear(H, 3 * H), nn.Linear(H, H)
        self.fc1, self.fc2 = nn.Linear(H, 4 * H), nn.Linear(4 * H, H)


def _saved_by_term(fused_dropout):
    """Bytes autograd saves in one layer's forward, by the term of the formula they belong to.
    ``fused_dropout``: dropout through ``torch.native_dropout`` (what ``F.dropout`` calls on CUDA: a
    bool mask); otherwise ``F.dropout`` as it runs on the CPU."""
    torch.manual_seed(0)
    layer = _Layer().to(torch.bfloat16)
    x = torch.randn(S, B, H, dtype=torch.bfloat16, requires_grad=True)
    params = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    term = [""]
    seen, by_term, ln_stats = set(), {}, [0]

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in params and st.data_ptr() not in seen:
            seen.add(st.data_ptr())
            if term[0].startswith("ln") and t.dim() == 3 and t.shape[-1] == 1:
                ln_stats[0] += st.nbytes()  # LayerNorm's mean and 1/std, one value per token each
            else:
                by_term[term[0]] = by_term.get(term[0], 0) + st.nbytes()
        return t

    def drop(t):
        return torch.native_dropout(t, P_DROP, True)[0] if fused_dropout else F.dropout(t, P_DROP)

    d = H // A
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        term[0] = "ln1_in"
        h = layer.ln1(x)
        term[0] = "qkv_in"
        q, k, v = layer.qkv(h).view(S, B, 3, A, d).permute(2, 1, 3, 0, 4)  # each (b, a, s, d)
        term[0] = "q_k"
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        term[0] = "softmax_out"
        probs = torch.softmax(scores, dim=-1)
        term[0] = "attn_mask"
        probs = drop(probs)
        term[0] = "v_and_probs"
        ctx = torch.matmul(probs, v).permute(2, 0, 1, 3).reshape(S, B, H)
        term[0] = "proj_in"
        out = layer.proj(ctx)
        term[0] = "proj_mask"
        x2 = x + drop(out)
        term[0] = "ln2_in"
        h = layer.ln2(x2)
        term[0] = "fc1_in"
        u = layer.fc1(h)
        term[0] = "gelu_in"
        u = F.gelu(u)
        term[0] = "fc2_in"
        u = layer.fc2(u)
        term[0] = "mlp_mask"
        y = x2 + drop(u)
    del y
    return by_term, ln_stats[0]


@claim("trainmem.layer-activation-terms", question=Q,
       statement="公式的每一项可以逐个数出来：按论文的 GPT 层（LayerNorm、QKV、softmax 注意力、三处 dropout、4h 的 GeLU MLP）"
                 "用 BF16 在 CPU 上搭一层，s = {=128}、b = {=2}、h = {=64}、a = {=4}，用 `saved_tensors_hooks` 把它为反向存下的"
                 "每个张量记到公式的对应项上。dropout 用 `torch.native_dropout`（CUDA 上 `F.dropout` 走的融合内核，掩码是 "
                 "{=1} 字节的 bool）时，公式的 {n_terms} 项{terms_match:?逐项一字节不差|并不逐项相同}，合计 {matched:bytes}，"
                 "就是 sbh(34 + 5as/h)；公式之外只多了 LayerNorm 每个 token 的均值和 1/标准差，{ln_stats:bytes}。"
                 "CPU 上的 `F.dropout` 不走这个内核，用与输入同 dtype 的噪声张量相乘，三处掩码合计 {cpu_masks:bytes}，"
                 "是 bool 掩码的 {cpu_mask_ratio:.0f} 倍。",
       expect={"terms_match": True, "n_terms": 13, "cpu_mask_ratio": 2.0, "matched": 1212416})
def _(ctx):
    sbh, as2b = S * B * H, A * S * S * B
    want = {t: i * sbh + j * as2b for t, (i, j) in FORMULA.items()}
    fused, ln_stats = _saved_by_term(True)
    cpu, _ = _saved_by_term(False)
    masks = ("attn_mask", "proj_mask", "mlp_mask")
    return {"terms_match": fused == want, "n_terms": len(want), "matched": sum(fused.values()),
            "formula": sbh * (34 + 5 * A * S / H), "ln_stats": ln_stats, "observed": fused,
            "cpu_masks": sum(cpu[m] for m in masks), "fused_masks": sum(fused[m] for m in masks),
            "cpu_mask_ratio": sum(cpu[m] for m in masks) / sum(fused[m] for m in masks)}


@claim("trainmem.activation-formula-7b", question=Q,
       statement="代入一个 {=7B} 级的形状（{=GPT-3 6.7B}：L = {=32} 层、h = {=4096}、a = {=32}），序列 s = {=4096}："
                 "每层 sbh(34 + 5as/h)，其中注意力矩阵那一项 5as/h = {attn_term:.0f}，是 34 的 {attn_vs_rest:.1f} 倍；"
                 "b = 1 时全模型的激活是 {act.b1:bytes}，b = 8 时 {act.b8:bytes}。模型状态按 12Lh² = {params_e9:.2f}×10⁹ 个参数、"
                 "每参数 {=16} 到 {=20} 字节算是 {states16:bytes} 到 {states20:bytes}：b = 1 时激活已与它相当（按 {=16} 字节，之比 "
                 "{ratio.b1:.2f}），b = 8 时是它的 {ratio.b8:.1f} 倍。不存 s×s 矩阵的 attention（FlashAttention 式，只剩 34sbh）"
                 "把 b = 8 的激活降到 {flash.b8:bytes}。",
       expect={"attn_term": 160.0, "ratio_b1": {"between": [0.9, 1.1]}, "ratio_b8": {"between": [7.5, 8.5]}})
def _(ctx):
    L, h, a, s = 32, 4096, 32, 4096
    per_layer = {f"b{b}": s * b * h * (34 + 5 * a * s / h) for b in (1, 8)}
    act = {k: L * v for k, v in per_layer.items()}
    flash = {f"b{b}": L * s * b * h * 34 for b in (1, 8)}
    params = 12 * L * h * h
    return {"attn_term": 5 * a * s / h, "attn_vs_rest": (5 * a * s / h) / 34, "per_layer": per_layer, "act": act,
            "flash": flash, "params": params, "states16": 16 * params, "states20": 20 * params,
            "ratio": {k: v / (16 * params) for k, v in act.items()}, "params_e9": params / 1e9,
            "ratio_b1": act["b1"] / (16 * params), "ratio_b8": act["b8"] / (16 * params),
            "ratio_formula": "s*b*(34 + 5*a*s/h) / (16 * 12 * h)"}
