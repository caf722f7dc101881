"""A 7B model's training memory, counted without allocating it.

The model has the shapes of Llama-2-7B (32 layers, width 4096, SwiGLU FFN 11008, vocabulary 32000,
untied input and output embeddings, RMSNorm; no rotary embedding, which holds no parameters). On the
``meta`` device it has parameters without data. Under ``FakeTensorMode`` whole training steps run
on tensors that have shapes, dtypes and storages but no memory behind them, and ``LiveBytes``
(snippets/_workloads/live_bytes.py) counts the bytes those storages would take: every ATen op's
outputs are seen, and a weak reference to each storage takes its bytes away when it is freed (what
``memory_allocated`` counts on a GPU, without the allocator's rounding).
"""

import functools

import torch
import torch.nn.functional as F
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode

from snippets._workloads.live_bytes import LiveBytes
from verify.claim import claim

Q = "train-memory"
LAYERS, WIDTH, FFN, VOCAB, HEADS = 32, 4096, 11008, 32000, 32
BATCH, SEQ = 1, 2048
GiB = 2**30


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        d = WIDTH
        self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, FFN, bias=False), nn.Linear(d, FFN, bias=False)
        self.down = nn.Linear(FFN, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        h = self.attn_norm(x)
        q, k, v = (m(h).view(b, t, HEADS, d // HEADS).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RMSNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def _nbytes(tensors):
    return sum(t.untyped_storage().nbytes() for t in tensors)


@functools.lru_cache(maxsize=1)
def _two_steps():
    """Two training steps of the 7B decoder under FakeTensorMode: autocast to bf16, AdamW with
    foreach=True (the default for CUDA parameters), zero_grad() between the steps. Then the step
    peak of the other two AdamW implementations on the same gradients."""
    r = {}
    with FakeTensorMode():
        model = Decoder()
        params = list(model.parameters())
        opt = torch.optim.AdamW(params, foreach=True)
        ids = torch.randint(0, VOCAB, (BATCH, SEQ))
        with LiveBytes(copies_of=params) as live:  # autocast's bf16 weight copies counted apart, in live.copies
            live.add_all(params)
            r["params"] = live.now
            for step in (1, 2):
                live.reset_peak()
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = model(ids)
                loss = F.cross_entropy(logits.float().view(-1, VOCAB), ids.view(-1))
                del logits
                state = _nbytes(t for s in opt.state.values() for t in s.values())
                r[f"s{step}_state_before"] = state
                r[f"s{step}_fwd_end"] = live.now
                r[f"s{step}_copies"] = live.copies
                r[f"s{step}_activations"] = live.now - r["params"] - state - live.copies
                r[f"s{step}_fwd_peak"] = live.peak
                live.reset_peak()
                loss.backward()
                del loss
                r[f"s{step}_bwd_peak"] = live.peak
                r[f"s{step}_bwd_end"] = live.now
                r[f"s{step}_copies_after_bwd"] = live.copies
                r[f"s{step}_grads"] = _nbytes(p.grad for p in params)
                live.reset_peak()
                opt.step()
                r[f"s{step}_step_peak"] = live.peak
                r[f"s{step}_step_end"] = live.now
                r[f"s{step}_state"] = _nbytes(t for s in opt.state.values() for t in s.values())
                if step == 2:  # the gradients are still there: the other two implementations' steps
                    for name, kw in (("forloop", {"foreach": False}), ("fused", {"fused": True})):
                        other = torch.optim.AdamW(params, **kw)
                        other.step()  # creates its own state (not part of the transient)
                        live.reset_peak()
                        other.step()
                        r[f"{name}_temp"] = live.peak - live.now
                        del other
                opt.zero_grad()
                r[f"s{step}_after_zero_grad"] = live.now
        r["n_params"] = sum(p.numel() for p in params)
        r["n_tensors"] = len(params)
        r["linear_weight_params"] = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
        r["largest_param_bytes"] = max(p.numel() for p in params) * 4
    r["foreach_temp"] = r["s2_step_peak"] - r["s2_step_end"]
    return r


def _gib(r, *keys):
    return {k: r[k] / GiB for k in keys}


@claim("trainmem.textbook-accounting", question=Q,
       statement="面经里的算法来自 ZeRO 论文对 Megatron 式混合精度的记账：每个参数 fp16 参数 {b.fp16_param}、fp16 梯度 "
                 "{b.fp16_grad}、fp32 主权重 {b.master}、Adam 的 `m` {b.m}、`v` {b.v} 字节，相加就是上面每个参数的字节总数，"
                 "再乘名义上的 {=7B}（7×10⁹）个参数；漏掉主权重就是 {without_master_gb:.0f} GB。",
       expect={"per_param_bytes": 16, "nominal_gb": 112.0, "without_master_gb": 84.0})
def _(ctx):
    half, full = torch.empty((), dtype=torch.float16).element_size(), torch.empty((), dtype=torch.float32).element_size()
    b = {"fp16_param": half, "fp16_grad": half, "master": full, "m": full, "v": full}
    per = sum(b.values())
    return {"b": b, "per_param_bytes": per, "nominal_gb": 7e9 * per / 1e9, "without_master_gb": 7e9 * (per - full) / 1e9}


@claim("trainmem.meta-count", question=Q,
       statement="在 `meta` 设备上按 Llama-2-7B 的形状（{=32 层、宽 4096、SwiGLU 的 FFN 11008、词表 32000，输入输出 embedding 不共享}）"
                 "搭出模型：参数共 {n_params:int} 个，存成 fp32 是 {fp32_bytes:bytes}；这些参数只有形状没有数据"
                 "（`device` 是 {device}，`data_ptr()` 全为 {data_ptr}），所以这一步不分配内存。",
       expect={"n_params": 6738415616, "fp32_bytes": 26953662464, "device": "meta", "data_ptr": 0})
def _(ctx):
    with torch.device("meta"):
        model = Decoder()
    params = list(model.parameters())
    ptrs = {p.data_ptr() for p in params}
    n = sum(p.numel() for p in params)
    return {"n_params": n, "fp32_bytes": n * 4, "device": str(params[0].device),
            "data_ptr": ptrs.pop() if len(ptrs) == 1 else sorted(ptrs)[:3],
            "embedding_params": model.embed.weight.numel(), "per_layer_params": sum(p.numel() for p in model.layers[0].parameters())}


@claim("trainmem.7b-parts", question=Q,
       statement="在 `FakeTensorMode` 下把这个模型真的训练两步（BF16 autocast、AdamW、batch {=1}、序列 {=2048}），"
                 "各部分的字节数除以参数量：参数 {per_param.params:.1f}、梯度 {per_param.grads:.1f}、AdamW 状态 "
                 "{per_param.state:.1f}（`exp_avg`、`exp_avg_sq` 各一份 fp32；另有 {n_tensors} 个参数张量各一个 "
                 "{step_each:bytes}的 `step`，共 {step_bytes:bytes}）。三者合计 {static_bytes:bytes}，是一步结束后常驻的部分。",
       expect={"params_bytes": 26953662464, "grads_bytes": 26953662464, "state_bytes": 53907326092,
               "n_tensors": 291, "step_each": 4, "static_bytes": 107814651020})
def _(ctx):
    r = _two_steps()
    n = r["n_params"]
    static = r["params"] + r["s1_grads"] + r["s1_state"]
    step_bytes = r["s1_state"] - 8 * n
    return {"per_param": {"params": r["params"] / n, "grads": r["s1_grads"] / n, "state": r["s1_state"] / n},
            "params_bytes": r["params"], "grads_bytes": r["s1_grads"], "state_bytes": r["s1_state"],
            "static_bytes": static, "n_params": n, "n_tensors": r["n_tensors"], "step_bytes": step_bytes,
            "step_each": step_bytes // r["n_tensors"], "static_gb": static / 1e9}


@claim("trainmem.7b-first-step", question=Q,
       statement="AdamW 的状态是第一次 `step()` 才建的：第一步前向结束时，状态是 {s1_state_before:bytes}，内存里是参数、"
                 "激活和 BF16 权重副本，共 {s1_fwd_end:bytes}；`step()` 之后状态有 {s1_state:bytes}，于是第二步前向结束时是 "
                 "{s2_fwd_end:bytes}，多出的正好是状态。所以只跑一步试探显存，会低估后面的每一步。",
       expect={"s1_state_before": 0, "s1_state": 53907326092, "s2_minus_s1": 53907326092})
def _(ctx):
    r = _two_steps()
    return {"s1_state_before": r["s1_state_before"], "s1_fwd_end": r["s1_fwd_end"], "s1_state": r["s1_state"],
            "s2_fwd_end": r["s2_fwd_end"], "s2_minus_s1": r["s2_fwd_end"] - r["s1_fwd_end"]}


@claim("trainmem.7b-autocast-copies", question=Q,
       statement="混合精度的 16 位权重是临时的：autocast 在前向里把每个 `Linear` 的 fp32 权重转成 BF16，"
                 "矩阵乘为反向保存了这些副本，所以前向结束时它们占 {copies:bytes}（`Linear` 权重的每个元素占 "
                 "{per_weight:.1f} 字节）；反向用完就释放，`backward()` 结束时是 {copies_after_bwd:bytes}。",
       expect={"copies": 13214154752, "per_weight": 2.0, "copies_after_bwd": 0})
def _(ctx):
    r = _two_steps()
    return {"copies": r["s2_copies"], "per_weight": r["s2_copies"] / r["linear_weight_params"],
            "copies_after_bwd": r["s2_copies_after_bwd"], "linear_weight_params": r["linear_weight_params"]}


@claim("trainmem.7b-peak", question=Q,
       statement="第二步起的峰值取决于 `step()` 的实现。foreach（CUDA 参数的默认）在 `step()` 里到达 "
                 "{peak.foreach:bytes}，平均每个参数占 {per_param.foreach:.1f} 字节：`_foreach_sqrt` 一次为所有参数生成一份 "
                 "fp32 临时张量，{foreach_temp:bytes}。逐个参数的 for-loop 实现只多 {forloop_temp:bytes}"
                 "（最大的参数两份），fused 实现多 {fused_temp:bytes}；这两种的峰值在反向里，{peak.fused:bytes}"
                 "（每个参数占 {per_param.fused:.1f} 字节）。",
       expect={"foreach_temp": 26953662464, "fused_temp": 0, "forloop_temp": 1048592384,
               "peak": {"foreach": 134768329868, "forloop": 109852566676, "fused": 109852566676}})
def _(ctx):
    r = _two_steps()
    static = r["s2_step_end"]
    fwd_bwd = max(r["s2_fwd_peak"], r["s2_bwd_peak"])
    peak = {"foreach": max(fwd_bwd, r["s2_step_peak"]), "forloop": max(fwd_bwd, static + r["forloop_temp"]),
            "fused": max(fwd_bwd, static + r["fused_temp"])}
    n = r["n_params"]
    return {"peak": peak, "per_param": {k: v / n for k, v in peak.items()}, "foreach_temp": r["foreach_temp"],
            "forloop_temp": r["forloop_temp"], "fused_temp": r["fused_temp"], "largest_param_bytes": r["largest_param_bytes"],
            "fwd_peak": r["s2_fwd_peak"], "bwd_peak": r["s2_bwd_peak"], "step_end": static,
            "gib": _gib(r, "s2_fwd_peak", "s2_bwd_peak", "s2_step_peak", "s2_step_end", "s2_after_zero_grad")}


@claim("trainmem.7b-activations", question=Q,
       statement="激活（前向为反向留下的其余张量，含 logits 和损失）在 batch {=1}、序列 {=2048} 时是 {activations:bytes}，"
                 "每个 token {per_token:bytes}。它和 token 数成正比：单独数一层，序列 {=1024}、{=2048}、{=4096} 的激活是 "
                 "{layer.1024:bytes}、{layer.2048:bytes}、{layer.4096:bytes}：CPU 上的 SDPA 选的是 flash 实现（{sdpa_op}），"
                 "不保存 {=T×T} 的注意力矩阵。",
       expect={"layer_ratio": [1.0, 2.0, 4.0], "sdpa_op": "aten._scaled_dot_product_flash_attention_for_cpu.default"})
def _(ctx):
    r = _two_steps()
    layer, ops = {}, set()
    with FakeTensorMode():
        block = Layer()
        params = list(block.parameters())
        for seq in (1024, 2048, 4096):
            x = torch.randn(BATCH, seq, WIDTH, requires_grad=True)
            with LiveBytes(copies_of=params, ops_named="scaled_dot_product") as live:  # which SDPA kernel ran
                live.add_all(params)
                live.add(x)
                base = live.now
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    y = block(x)
                ops |= live.ops_seen
                # The output belongs to the next layer (its input); what this layer holds is the rest.
                layer[str(seq)] = live.now - base - live.copies - y.untyped_storage().nbytes()
                del y
    return {"activations": r["s2_activations"], "per_token": r["s2_activations"] / (BATCH * SEQ), "layer": layer,
            "layer_ratio": [layer[s] / layer["1024"] for s in ("1024", "2048", "4096")], "sdpa_op": ", ".join(sorted(ops))}
