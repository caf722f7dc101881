"""What torch.onnx.export writes, and what ONNX Runtime's graph optimiser does to it, level by level, on its CPU
execution provider.

The exported graphs are read back with onnx; each ORT session writes the graph it will run
(``SessionOptions.optimized_model_filepath``) and the claims count its op types. An op outside the standard ONNX
domain is written ``domain::Op`` (``com.microsoft::FusedConv``). One file, so each model is exported once per run.
Nothing is timed.
"""

from __future__ import annotations

import collections
import functools
import io
import logging
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from verify.claim import claim

Q = "onnx-and-inference-runtimes"
D = 32           # hidden size of the transformer-style blocks
TOKENS = 8       # sequence length
LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
          "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


class ConvBN(nn.Module):
    """Conv2d -> BatchNorm2d -> ReLU, the classic pattern to fold."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


class PostLN(nn.Module):
    """A post-LN MLP block: LayerNorm(x + fc2(gelu(fc1(x))))."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)
        self.ln = nn.LayerNorm(D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x + self.fc2(nn.functional.gelu(self.fc1(x))))


class Attention(nn.Module):
    """Multi-head self-attention written with scaled_dot_product_attention, 4 heads."""

    def __init__(self, heads: int = 4) -> None:
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)
        self.heads = heads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, -1)

        def split(z: torch.Tensor) -> torch.Tensor:
            return z.view(b, t, self.heads, d // self.heads).transpose(1, 2)

        y = nn.functional.scaled_dot_product_attention(split(q), split(k), split(v))
        return self.out(y.transpose(1, 2).reshape(b, t, d))


def model(name: str) -> tuple[nn.Module, torch.Tensor]:
    """A seeded model in eval mode and its input; BatchNorm gets running statistics that are not (0, 1)."""
    torch.manual_seed(0)
    if name == "convbn":
        m: nn.Module = ConvBN()
        with torch.no_grad():
            m.bn.running_mean.uniform_(-1, 1)
            m.bn.running_var.uniform_(0.5, 2)
            m.bn.weight.uniform_(0.5, 2)
        x = torch.randn(1, 3, 16, 16)
    elif name == "post3d":
        m, x = PostLN(), torch.randn(2, TOKENS, D)
    elif name == "post2d":
        m, x = PostLN(), torch.randn(2 * TOKENS, D)
    elif name == "attn":
        m, x = Attention(), torch.randn(2, TOKENS, D)
    else:
        raise KeyError(name)
    return m.eval(), x


@functools.cache
def export(name: str, exporter: str = "dynamo") -> bytes:
    """The serialised ONNX model: ``dynamo`` (torch.export, the default), ``dynamo-raw`` (optimize=False)
    or ``legacy`` (the TorchScript exporter, dynamo=False, opset 14)."""
    m, x = model(name)
    # the exporter logs a warning for each torchvision op it cannot register (torchvision is not installed)
    logging.getLogger("torch.onnx._internal.exporter._registration").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "legacy":
            buf = io.BytesIO()
            torch.onnx.export(m, (x,), buf, dynamo=False, opset_version=14)
            return buf.getvalue()
        program = torch.onnx.export(m, (x,), dynamo=True, optimize=exporter == "dynamo", verbose=False)
    return program.model_proto.SerializeToString()


def op_types(model_bytes: bytes) -> dict[str, int]:
    """Op type -> count; an op outside the standard domain is written ``domain::Op``."""
    import onnx

    graph = onnx.load_from_string(model_bytes).graph
    return dict(collections.Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in graph.node))


def ops_text(ops: dict[str, int]) -> str:
    """Op counts as a reader reads them: ``Gemm 2 个、com.microsoft::Gelu 1 个``."""
    return "、".join(f"{op} {n} 个" for op, n in ops.items())


def opset(model_bytes: bytes) -> int:
    import onnx

    return next(o.version for o in onnx.load_from_string(model_bytes).opset_import if o.domain in ("", "ai.onnx"))


def optimise(name: str, model_bytes: bytes, level: str, workdir: Path,
             disabled: tuple[str, ...] = ()) -> tuple[dict[str, int], float]:
    """ONNX Runtime's CPU session at one optimisation level: the optimised graph's op types and the largest
    absolute difference between its output and torch's (the input is the model's own)."""
    import onnx
    import onnxruntime as ort

    m, x = model(name)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    opts.log_severity_level = 3           # level "all" warns that its layout changes are hardware specific
    fd, where = tempfile.mkstemp(prefix=f"{name}-{level}-", suffix=".onnx", dir=workdir)
    os.close(fd)
    path = Path(where)
    opts.optimized_model_filepath = str(path)
    session = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"],
                                   disabled_optimizers=list(disabled))
    out = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    with torch.no_grad():
        ref = m(x).numpy()
    return op_types(onnx.load(str(path)).SerializeToString()), float(abs(out - ref).max())



@claim(
    "export.standard-ops",
    question=Q,
    statement="同一个 post-LN 块（Linear → GELU → Linear，残差相加后 LayerNorm）：默认的 dynamo 导出器写出 opset "
              "{opset}、{dynamo_nodes} 个节点，其中 `LayerNormalization` {dynamo.LayerNormalization} 个、`Gelu` "
              "{dynamo.Gelu} 个，都是 ONNX 标准算子，一个 PyTorch 算子对应一个节点；旧的 TorchScript 导出器"
              "（`dynamo=False`，opset {=14}）里这两个算子还不是标准算子，同一个块拆成 {legacy_nodes} 个节点，"
              "LayerNorm 变成 `ReduceMean` {legacy_reducemean} 个加 `Sub`、`Pow`、`Sqrt`、`Div`，GELU 变成 `Erf` "
              "{legacy_erf} 个加乘加。",
    expect={"dynamo": {"LayerNormalization": 1, "Gelu": 1, "MatMul": 2, "Add": 3},
            "legacy_reducemean": 2, "legacy_erf": 1, "legacy_has_layernorm": False, "opset": {">=": 20}},
    needs=["onnx"],
)
def _(ctx):
    """The two exporters' graphs of one block, op types counted.

    范围：torch 2.13 的两个导出器，一个 post-LN 块
    """
    dynamo = export("post3d")
    legacy = export("post3d", "legacy")
    legacy_ops = op_types(legacy)
    return {"opset": opset(dynamo), "dynamo": op_types(dynamo), "legacy": legacy_ops,
            "dynamo_nodes": sum(op_types(dynamo).values()), "legacy_nodes": sum(legacy_ops.values()),
            "legacy_has_layernorm": "LayerNormalization" in legacy_ops,
            "legacy_reducemean": legacy_ops.get("ReduceMean", 0), "legacy_erf": legacy_ops.get("Erf", 0)}


def _conv_weight(model_bytes: bytes) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    graph = onnx.load_from_string(model_bytes).graph
    conv = next(n for n in graph.node if n.op_type == "Conv")
    return next(numpy_helper.to_array(t) for t in graph.initializer if t.name == conv.input[1])


@claim(
    "export.bn-folded",
    question=Q,
    statement="eval 模式的 Conv → BatchNorm → ReLU 导出后：`optimize=False` 的图是 {raw}；默认的 `optimize=True`"
              "（导出器最后跑 onnxscript 的图优化）是 {default}，BatchNorm 已经折进卷积的权重和偏置，"
              "导出的 Conv 权重与按 w·γ/√(σ²+ε) 算出的折叠权重的最大相对差是 {fold_rel_err:.1g}，与原权重的最大差是 "
              "{changed_by:.2f}；旧的 TorchScript 导出器同样折叠：{legacy}。",
    expect={"raw": ["Conv", "BatchNormalization", "Relu"], "default": ["Conv", "Relu"], "legacy": ["Conv", "Relu"],
            "fold_rel_err": {"<": 1e-5}, "changed_by": {">": 0.01}},
    needs=["onnx"],
)
def _(ctx):
    """Op types of three exports of one Conv-BN-ReLU (eval mode), and the exported Conv weight against BN folding.

    范围：torch 2.13 的两个导出器，一个 3→8 通道的 3×3 卷积
    """
    m, _x = model("convbn")
    bn = m.bn
    scale = (bn.weight / (bn.running_var + bn.eps).sqrt()).detach().numpy()
    w = m.conv.weight.detach().numpy()
    folded = w * scale[:, None, None, None]
    exported = _conv_weight(export("convbn"))
    return {"raw": list(op_types(export("convbn", "dynamo-raw"))),
            "default": list(op_types(export("convbn"))),
            "legacy": list(op_types(export("convbn", "legacy"))),
            "fold_rel_err": float(abs(exported - folded).max() / abs(folded).max()),
            "changed_by": float(abs(exported - w).max())}



def _levels(ctx, name: str, exporter: str, levels=("disable", "basic", "extended")) -> dict[str, dict[str, int]]:
    blob = export(name, exporter)
    return {level: optimise(name, blob, level, ctx.workdir)[0] for level in levels}


@claim(
    "ort.convbn-levels",
    question=Q,
    statement="把 BatchNorm 留在图里导出（`optimize=False`）的 Conv → BatchNorm → ReLU 交给 ONNX Runtime 的 CPU "
              "session：关掉优化时运行的是 {disable}；basic 级别是 {basic}，BatchNorm 被常量折叠进卷积（在 "
              "`disabled_optimizers` 里关掉 `ConvBNFusion` 这一个变换，basic 级别就还是 {basic_without_convbn}）；"
              "extended 级别是 {extended}，ReLU 作为激活属性并进了 ORT 自己的 contrib 算子。",
    expect={"disable": ["Conv", "BatchNormalization", "Relu"], "basic": ["Conv", "Relu"],
            "basic_without_convbn": ["Conv", "BatchNormalization", "Relu"],
            "extended": ["com.microsoft::FusedConv"]},
    needs=["onnx"],
)
def _(ctx):
    """The graph ORT runs at three levels, and at basic with ConvBNFusion disabled.

    范围：ORT 1.32 CPU，一个 Conv-BN-ReLU
    """
    blob = export("convbn", "dynamo-raw")
    out = {level: list(ops) for level, ops in _levels(ctx, "convbn", "dynamo-raw").items()}
    ops, _err = optimise("convbn", blob, "basic", ctx.workdir, disabled=("ConvBNFusion",))
    return out | {"basic_without_convbn": list(ops)}


@claim(
    "ort.block-levels",
    question=Q,
    statement="默认导出的 post-LN 块（输入 [{=2}, {=8}, {=32}]）在 ORT 里：导出图有 {d3.disable.MatMul} 个 `MatMul`、"
              "{d3.disable.Add} 个 `Add`；basic 级别把 MatMul + 偏置 Add 换成 {d3.basic.Gemm} 个 `Gemm`，"
              "因为 Gemm 只收二维输入，前后各插一个 `Reshape`（共 {d3.basic.Reshape} 个）；extended 级别再把残差 Add "
              "和 LayerNorm 合成 {d3_skipln} 个 `SkipLayerNormalization`"
              "（com.microsoft 域），`Gelu` 原样保留。把输入换成二维 [{=16}, {=32}]：导出器直接写出 "
              "{d2.disable.Gemm} 个 `Gemm`，extended 级别却没有 `SkipLayerNormalization`（{d2_skipln} 个），"
              "运行的仍是 {d2_extended}。",
    expect={"d3": {"disable": {"MatMul": 2, "Add": 3, "Gelu": 1, "LayerNormalization": 1},
                   "basic": {"Reshape": 4, "Gemm": 2, "Gelu": 1, "Add": 1, "LayerNormalization": 1},
                   "extended": {"Reshape": 4, "Gemm": 2, "Gelu": 1, "com.microsoft::SkipLayerNormalization": 1}},
            "d2_skipln": 0, "d2_extended": ["Gemm", "Gelu", "Add", "LayerNormalization"]},
    needs=["onnx"],
)
def _(ctx):
    """Op types at three levels for the 3-D input, and for the 2-D input of the same block.

    范围：torch 2.13 导出、ORT 1.32 CPU，一个 post-LN 块
    """
    d3 = _levels(ctx, "post3d", "dynamo")
    d2 = _levels(ctx, "post2d", "dynamo")
    return {"d3": d3, "d2": d2, "d3_skipln": d3["extended"].get("com.microsoft::SkipLayerNormalization", 0),
            "d2_skipln": d2["extended"].get("com.microsoft::SkipLayerNormalization", 0),
            "d2_extended": list(d2["extended"])}


@claim(
    "ort.legacy-fusions",
    question=Q,
    statement="旧导出器（opset {=14}）把同一个块拆成的图，ORT 的 basic 级别只做了 Gemm 改写，还剩 {basic_nodes} 个节点、"
              "`Erf` {basic_erf} 个、`ReduceMean` {basic_reducemean} 个；extended 级别把 LayerNorm 的子图认回成"
              "算子、再与残差合成 `SkipLayerNormalization`，把 GELU 的子图合成 com.microsoft 域的 `Gelu`，剩 "
              "{extended_nodes} 个节点：{extended_text}。",
    expect={"basic_erf": 1, "basic_reducemean": 2, "extended_nodes": 8,
            "extended": {"Reshape": 4, "Gemm": 2, "com.microsoft::Gelu": 1, "com.microsoft::SkipLayerNormalization": 1}},
    needs=["onnx"],
)
def _(ctx):
    """The decomposed block at basic and extended.

    范围：torch 2.13 旧导出器（opset 14）、ORT 1.32 CPU
    """
    levels = _levels(ctx, "post3d", "legacy", ("basic", "extended"))
    basic, extended = levels["basic"], levels["extended"]
    return {"basic_nodes": sum(basic.values()), "basic_erf": basic.get("Erf", 0),
            "basic_reducemean": basic.get("ReduceMean", 0), "extended_nodes": sum(extended.values()),
            "extended": extended, "extended_text": ops_text(extended)}


@claim(
    "ort.attention-pattern",
    question=Q,
    statement="用 `scaled_dot_product_attention` 写的 4 头自注意力，导出图是 {exported_text}；ORT 各级别都没有把它认成 "
              "`Attention` 或 `MultiHeadAttention`（extended 级别有 {attention_ops} 个），extended 级别做的是把缩放的 "
              "`Mul` 和转置并进矩阵乘：{extended_text}。",
    expect={"attention_ops": 0, "extended_fusedmatmul": 1, "extended_mul": 0, "exported_mul": 2},
    needs=["onnx"],
)
def _(ctx):
    """Op types of the exported attention and of ORT's extended and all levels.

    范围：torch 2.13 导出、ORT 1.32 CPU，一个 4 头自注意力
    """
    levels = _levels(ctx, "attn", "dynamo", ("disable", "extended", "all"))
    fused = sum(n for level in levels.values() for op, n in level.items()
                if op.split("::")[-1] in ("Attention", "MultiHeadAttention", "GroupQueryAttention"))
    return {"exported": levels["disable"], "extended": levels["extended"], "attention_ops": fused,
            "exported_text": ops_text(levels["disable"]), "extended_text": ops_text(levels["extended"]),
            "extended_fusedmatmul": levels["extended"].get("com.microsoft::FusedMatMul", 0),
            "extended_mul": levels["extended"].get("Mul", 0), "exported_mul": levels["disable"].get("Mul", 0)}


def _avx2() -> bool | None:
    """Whether the CPU flags list AVX2 (Linux on x86); None where /proc/cpuinfo has no flags line."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), None)
    return None if flags is None else "avx2" in flags


@claim(
    "ort.nchwc-layout",
    question=Q,
    statement="同一个 Conv → BatchNorm → ReLU 在 all 级别：这颗 CPU（AVX2：{avx2:?有|没有}）上运行的是 {all}，"
              "卷积换成 NCHWc 分块布局的实现，输出前再换回 NCHW；ORT 保存这个图时警告它可能含硬件相关的优化，"
              "只应在同一环境里用。",
    expect={"nchwc_matches_avx2": True, "bn_left": 0},
    needs=["onnx"],
)
def _(ctx):
    """The graph at level all, and whether its NCHWc ops appear exactly where the CPU has AVX2.

    范围：ORT 1.32 CPU 执行提供者，x86 CPU
    """
    blob = export("convbn", "dynamo-raw")
    ops, _err = optimise("convbn", blob, "all", ctx.workdir)
    nchwc = sum(n for op, n in ops.items() if op.startswith("com.microsoft.nchwc::"))
    avx2 = _avx2()
    return {"all": list(ops), "avx2": avx2, "nchwc_ops": nchwc, "bn_left": ops.get("BatchNormalization", 0),
            "nchwc_matches_avx2": avx2 is not None and (nchwc > 0) == avx2}


@claim(
    "ort.outputs-match",
    kind="measured",
    question=Q,
    statement="上面 {sessions} 个 session（三个模型、两种导出、四个优化级别）的输出与 PyTorch eager 在同一输入上"
              "逐元素比较，最大绝对误差 {max_abs_err:.1e}：融合改的是执行方式，float32 结果只差舍入。",
    expect={"sessions": 20, "max_abs_err": {"<": 1e-5}},
    needs=["onnx"],
)
def _(ctx):
    """Largest |ORT - torch| over every model, export and level the page shows (seeded inputs, float32).

    范围：ORT 1.32 CPU，本页的三个小模型
    """
    cases = [("convbn", "dynamo-raw"), ("convbn", "dynamo"), ("post3d", "dynamo"), ("post3d", "legacy"),
             ("attn", "dynamo")]
    errors = {}
    for name, exporter in cases:
        blob = export(name, exporter)
        for level in LEVELS:
            errors[f"{name}/{exporter}/{level}"] = optimise(name, blob, level, ctx.workdir)[1]
    return {"sessions": len(errors), "max_abs_err": max(errors.values()), "errors": errors}


@claim(
    "ort.default-level",
    question=Q,
    statement="不设置时 `SessionOptions().graph_optimization_level` 是 `{default}`：默认就是最高的 all 级别，"
              "上面 all 级别那种与硬件相关的布局改写也默认发生。",
    expect={"default": "ORT_ENABLE_ALL"},
    needs=["onnx"],
)
def _(ctx):
    """The level a fresh SessionOptions carries.

    范围：onnxruntime 1.32
    """
    import onnxruntime as ort

    return {"default": ort.SessionOptions().graph_optimization_level.name}
