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
import contextlib
import logging
import os
import platform
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
          "extended": "ORT_ENABLE_EXTENDED", "layout": "ORT_ENABLE_LAYOUT", "all": "ORT_ENABLE_ALL"}


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
def export(name: str, exporter: str = "dynamo", opset_version: int | None = None) -> bytes:
    """The serialised ONNX model: ``dynamo`` (torch.export, the default), ``dynamo-raw`` (optimize=False)
    or ``legacy`` (the TorchScript exporter, dynamo=False, opset 14 unless ``opset_version`` says otherwise);
    ``opset_version`` None is the exporter's default."""
    m, x = model(name)
    # the exporter logs a warning for each torchvision op it cannot register (torchvision is not installed)
    logging.getLogger("torch.onnx._internal.exporter._registration").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "legacy":
            buf = io.BytesIO()
            torch.onnx.export(m, (x,), buf, dynamo=False, opset_version=opset_version or 14)
            return buf.getvalue()
        extra = {} if opset_version is None else {"opset_version": opset_version}
        program = torch.onnx.export(m, (x,), dynamo=True, optimize=exporter == "dynamo", verbose=False, **extra)
    return program.model_proto.SerializeToString()


def op_types(model_bytes: bytes) -> dict[str, int]:
    """Op type -> count; an op outside the standard domain is written ``domain::Op``."""
    import onnx

    graph = onnx.load_from_string(model_bytes).graph
    return dict(collections.Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in graph.node))


def ops_text(ops: dict[str, int]) -> str:
    """Op counts as a reader reads them: ``Gemm 2 个、com.microsoft::Gelu 1 个``."""
    return "、".join(f"{op} {n} 个" for op, n in ops.items())


def names(items) -> str:
    """A list as a reader reads it (``Conv、Relu``), not as a Python tuple."""
    return "、".join(str(i) for i in items)


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
              "{opset}、{dynamo_nodes} 个节点：{dynamo_text}。每个 Linear 成了 `MatMul` 加偏置 `Add`，"
              "LayerNorm 和 GELU 各对应一个标准算子节点。旧的 TorchScript 导出器（`dynamo=False`）写出什么取决于 "
              "opset：opset {=14} 时这两个还不是标准算子，同一个块拆成 {legacy14_nodes} 个节点，LayerNorm 变成 "
              "`ReduceMean` {legacy14_reducemean} 个加 `Sub`、`Pow`、`Sqrt`、`Div`，GELU 变成 `Erf` {legacy14_erf} 个"
              "加乘加；opset {=17} 时已有 `LayerNormalization`（{legacy17.LayerNormalization} 个），GELU 仍拆开"
              "（`Erf` {legacy17_erf} 个）；opset {=20} 时写出的算子与 dynamo 的完全相同（{legacy20_same:?是|否}）。",
    expect={"dynamo": {"LayerNormalization": 1, "Gelu": 1, "MatMul": 2, "Add": 3}, "opset": {">=": 20},
            "legacy14_reducemean": 2, "legacy14_erf": 1, "legacy14_has_layernorm": False,
            "legacy17": {"LayerNormalization": 1, "Gelu": 0}, "legacy17_erf": 1, "legacy20_same": True},
    needs=["onnx"],
)
def _(ctx):
    """The dynamo exporter's graph of one block, and the legacy exporter's at opset 14, 17 and 20, op types counted.

    范围：torch 2.13 两个导出器，一个 post-LN 块
    """
    dynamo = op_types(export("post3d"))
    legacy = {v: op_types(export("post3d", "legacy", v)) for v in (14, 17, 20)}
    return {"opset": opset(export("post3d")), "dynamo": dynamo, "dynamo_nodes": sum(dynamo.values()),
            "dynamo_text": ops_text(dynamo), "legacy": {str(v): ops for v, ops in legacy.items()},
            "legacy14_nodes": sum(legacy[14].values()),
            "legacy14_has_layernorm": "LayerNormalization" in legacy[14],
            "legacy14_reducemean": legacy[14].get("ReduceMean", 0), "legacy14_erf": legacy[14].get("Erf", 0),
            "legacy17": {op: legacy[17].get(op, 0) for op in ("LayerNormalization", "Gelu")},
            "legacy17_erf": legacy[17].get("Erf", 0), "legacy20_same": legacy[20] == dynamo}


def _conv_params(model_bytes: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The (weight, bias) initializers of the graph's one Conv."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load_from_string(model_bytes).graph
    conv = next(n for n in graph.node if n.op_type == "Conv")
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    return tensors[conv.input[1]], tensors[conv.input[2]]


@claim(
    "export.bn-folded",
    question=Q,
    statement="eval 模式的 Conv → BatchNorm → ReLU 导出后：`optimize=False` 的图是 {raw_text}；默认的 `optimize=True`"
              "（导出器最后调用 onnxscript 的优化器，其默认重写规则含 BatchNorm→Conv 折叠）是 {default_text}，"
              "BatchNorm 已经折进卷积：导出的 Conv 权重与 w·γ/√(σ²+ε) 的最大相对差是 {fold_rel_err:.1g}，偏置与 "
              "(b−μ)·γ/√(σ²+ε)+β 的最大相对差是 {bias_rel_err:.1g}，权重与原权重的最大差是 {changed_by:.2f}；"
              "旧的 TorchScript 导出器（opset 14）同样折叠：{legacy_text}。",
    expect={"raw": ["Conv", "BatchNormalization", "Relu"], "default": ["Conv", "Relu"], "legacy": ["Conv", "Relu"],
            "fold_rel_err": {"<": 1e-5}, "bias_rel_err": {"<": 1e-5}, "changed_by": {">": 0.01}},
    needs=["onnx"],
)
def _(ctx):
    """Op types of three exports of one Conv-BN-ReLU (eval mode), and the exported Conv weight and bias against
    BN folding.

    范围：torch 2.13 + onnxscript 0.7，一个卷积
    """
    m, _x = model("convbn")
    bn = m.bn
    scale = (bn.weight / (bn.running_var + bn.eps).sqrt()).detach().numpy()
    w = m.conv.weight.detach().numpy()
    folded = w * scale[:, None, None, None]
    folded_bias = ((m.conv.bias - bn.running_mean) * torch.from_numpy(scale) + bn.bias).detach().numpy()
    weight, bias = _conv_params(export("convbn"))
    raw, default, legacy = (list(op_types(export("convbn", e))) for e in ("dynamo-raw", "dynamo", "legacy"))
    return {"raw": raw, "default": default, "legacy": legacy,
            "raw_text": names(raw), "default_text": names(default), "legacy_text": names(legacy),
            "fold_rel_err": float(abs(weight - folded).max() / abs(folded).max()),
            "bias_rel_err": float(abs(bias - folded_bias).max() / abs(folded_bias).max()),
            "changed_by": float(abs(weight - w).max())}


def _levels(ctx, name: str, exporter: str, levels=("disable", "basic", "extended")) -> dict[str, dict[str, int]]:
    blob = export(name, exporter)
    return {level: optimise(name, blob, level, ctx.workdir)[0] for level in levels}


@claim(
    "ort.convbn-levels",
    question=Q,
    statement="把 BatchNorm 留在图里导出（`optimize=False`）的 Conv → BatchNorm → ReLU 交给 ONNX Runtime 的 CPU "
              "session：关掉优化时运行的是 {disable_text}；basic 级别是 {basic_text}，BatchNorm 被常量折叠进卷积（在 "
              "`disabled_optimizers` 里关掉 `ConvBNFusion` 这一个变换，basic 级别就还是 {basic_without_convbn_text}）；"
              "extended 级别是 {extended_text}，ReLU 作为激活属性并进了 ORT 自己的 contrib 算子。",
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
    out["basic_without_convbn"] = list(ops)
    return out | {f"{key}_text": names(value) for key, value in out.items()}


@claim(
    "ort.block-levels",
    question=Q,
    statement="默认导出的 post-LN 块（输入 [{=2}, {=8}, {=32}]）在 ORT 里：关掉优化时运行的图有 {d3.disable.MatMul} 个 `MatMul`、"
              "{d3.disable.Add} 个 `Add`；basic 级别把 MatMul + 偏置 Add 换成 {d3.basic.Gemm} 个 `Gemm`，"
              "因为 Gemm 只收二维输入，前后各插一个 `Reshape`（共 {d3.basic.Reshape} 个）；extended 级别再把残差 Add "
              "和 LayerNorm 合成 {d3_skipln} 个 `SkipLayerNormalization`"
              "（com.microsoft 域），`Gelu` 原样保留。把输入换成二维 [{=16}, {=32}]：导出器直接写出 "
              "{d2.disable.Gemm} 个 `Gemm`，extended 级别却没有 `SkipLayerNormalization`（{d2_skipln} 个），"
              "运行的仍是 {d2_extended_text}。",
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
            "d2_extended": list(d2["extended"]), "d2_extended_text": names(d2["extended"])}


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
    statement="用 `scaled_dot_product_attention` 写的 4 头自注意力，按默认 opset 导出的图是 {exported_text}；ORT 的 "
              "disable、extended、all 三个级别都没有把它认成 `Attention` 或 `MultiHeadAttention`（三个级别合计 "
              "{attention_ops} 个），extended 级别做的是把缩放的 `Mul` 和转置并进矩阵乘：{extended_text}。同一个模块按 "
              "opset {=23} 导出时，导出器自己就写出 {opset23_attention} 个 ONNX 标准的 `Attention` 节点：{opset23_text}。",
    expect={"attention_ops": 0, "extended_fusedmatmul": 1, "extended_mul": 0, "exported_mul": 2,
            "opset23_attention": 1},
    needs=["onnx"],
)
def _(ctx):
    """Op types of the exported attention and of ORT's extended and all levels; the same module exported at opset 23.

    范围：torch 2.13、ORT 1.32 CPU，4 头自注意力
    """
    levels = _levels(ctx, "attn", "dynamo", ("disable", "extended", "all"))
    fused = sum(n for level in levels.values() for op, n in level.items()
                if op.split("::")[-1] in ("Attention", "MultiHeadAttention", "GroupQueryAttention"))
    at23 = op_types(export("attn", "dynamo", 23))
    return {"exported": levels["disable"], "extended": levels["extended"], "attention_ops": fused,
            "exported_text": ops_text(levels["disable"]), "extended_text": ops_text(levels["extended"]),
            "extended_fusedmatmul": levels["extended"].get("com.microsoft::FusedMatMul", 0),
            "extended_mul": levels["extended"].get("Mul", 0), "exported_mul": levels["disable"].get("Mul", 0),
            "opset23": at23, "opset23_text": ops_text(at23), "opset23_attention": at23.get("Attention", 0)}


def _cpu_flags() -> set[str]:
    """The CPU flags of an x86-64 Linux machine (/proc/cpuinfo); the claim below observes nothing elsewhere."""
    if platform.machine().lower() not in ("x86_64", "amd64") or not Path("/proc/cpuinfo").exists():
        raise RuntimeError(f"this claim observes x86-64 Linux only; this machine is {platform.machine()}")
    text = Path("/proc/cpuinfo").read_text()
    return set(next(line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")))


@contextlib.contextmanager
def _stderr_to(path: Path):
    """Send file descriptor 2 (where ORT's C++ logger writes) to a file for the duration."""
    saved = os.dup(2)
    with open(path, "wb") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _nchwc_graph(blob: bytes, level: str, workdir: Path) -> tuple[list[str], int, str]:
    """ORT's saved graph of ``blob`` at one level: its op types, the rows of the NCHWc Conv's reordered weight,
    and what ORT logged (severity warning and above) while creating the session."""
    import onnx
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    opts.log_severity_level = 2
    saved, log = workdir / f"nchwc-{level}.onnx", workdir / f"nchwc-{level}.log"
    opts.optimized_model_filepath = str(saved)
    with _stderr_to(log):
        ort.InferenceSession(blob, opts, providers=["CPUExecutionProvider"])
    graph = onnx.load(str(saved)).graph
    ops = [f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in graph.node]
    conv = next((n for n in graph.node if n.domain == "com.microsoft.nchwc" and n.op_type == "Conv"), None)
    dims = {t.name: list(t.dims) for t in graph.initializer}
    rows = dims[conv.input[1]][0] if conv is not None else 0
    return ops, rows, log.read_text(errors="replace")


@claim(
    "ort.nchwc-layout",
    question=Q,
    statement="同一个 Conv → BatchNorm → ReLU（8 个输出通道）在 layout 级别运行的是 {layout_text}，all 级别相同"
              "（{all_same:?是|否}）：卷积（连同并进来的 BatchNorm 和 ReLU）换成 NCHWc 分块布局的实现，输出前再换回 NCHW。"
              "块宽由 ORT 的数学库 MLAS 按 CPU 选（据 ORT 源码：x86-64 上是 8，有 AVX-512F 时是 16）；这颗 CPU"
              "（AVX-512F：{avx512f:?有|没有}）上卷积权重按输出通道补成 {block} 行，正好一个块。保存这个图时 ORT "
              "在日志里警告它可能含硬件相关的优化，只应在同一环境里用（警告了：{warned:?是|否}）。",
    expect={"nchwc_present": True, "block_matches": True, "all_same": True, "bn_left": 0, "relu_left": 0,
            "warned": True},
    needs=["onnx", "x86-64"],
)
def _(ctx):
    """The graph at levels layout and all, the block width read from the reordered weight, and ORT's log.

    范围：ORT 1.32 CPU EP，x86-64 Linux
    """
    flags = _cpu_flags()
    blob = export("convbn", "dynamo-raw")
    layout, block, log = _nchwc_graph(blob, "layout", ctx.workdir)
    every, _rows, _log = _nchwc_graph(blob, "all", ctx.workdir)
    avx512f = "avx512f" in flags
    return {"layout": layout, "layout_text": names(layout), "all": every, "all_same": every == layout,
            "nchwc_present": any(op.startswith("com.microsoft.nchwc::") for op in layout),
            "bn_left": layout.count("BatchNormalization"), "relu_left": layout.count("Relu"), "avx512f": avx512f, "avx2": "avx2" in flags,
            "block": block, "block_matches": block == (16 if avx512f else 8),
            "warned": "hardware specific" in log, "log": log[-400:]}


@claim(
    "ort.outputs-match",
    kind="measured",
    question=Q,
    statement="本页五个导出图（三个模型；dynamo、`optimize=False`、opset 14 的旧导出器）在五个优化级别上的 {sessions} "
              "个 session，输出与 PyTorch eager 在同一输入上逐元素比较，最大绝对误差 {max_abs_err:.1e}：在这些小模型上，"
              "ORT 默认开启的改写只改执行方式，float32 结果只差舍入。",
    expect={"sessions": 25, "max_abs_err": {"<": 1e-5}},
    needs=["onnx"],
)
def _(ctx):
    """Largest |ORT - torch| over every model, export and level the page shows (seeded inputs, float32).

    范围：ORT 1.32 CPU，本页三个小模型，默认改写
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
    statement="onnxruntime 的 `GraphOptimizationLevel` 有 {levels_text}；不设置时 "
              "`SessionOptions().graph_optimization_level` 是 `{default}`：默认就是最高一级，上面 layout 级别那种与"
              "硬件相关的布局改写也默认发生。",
    expect={"default": "ORT_ENABLE_ALL", "levels": {"ORT_DISABLE_ALL": 0, "ORT_ENABLE_BASIC": 1,
                                                    "ORT_ENABLE_EXTENDED": 2, "ORT_ENABLE_LAYOUT": 3,
                                                    "ORT_ENABLE_ALL": 99}},
    needs=["onnx"],
)
def _(ctx):
    """The levels the enum has (name -> value) and the one a fresh SessionOptions carries.

    范围：onnxruntime 1.32
    """
    import onnxruntime as ort

    levels = {name: int(level) for name, level in ort.GraphOptimizationLevel.__members__.items()}
    return {"default": ort.SessionOptions().graph_optimization_level.name, "levels": levels,
            "levels_text": "、".join(f"`{name}`（{value}）" for name, value in levels.items())}
