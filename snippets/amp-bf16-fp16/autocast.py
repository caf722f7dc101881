"""What autocast runs in which dtype, what it keeps in FP32, and what it saves for backward."""

import torch
import torch.nn.functional as F
from torch import nn

from verify.claim import claim

Q = "amp-bf16-fp16"


def _name(dtype):
    return str(dtype).replace("torch.", "")


def _dtypes_under_autocast(device, dtype):
    """Output dtypes of a few ops whose inputs are FP32, inside ``torch.autocast(device, dtype)``."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 16, generator=g).to(device)
    lin = nn.Linear(16, 16).to(device)
    target = torch.zeros(4, dtype=torch.long, device=device)
    with torch.autocast(device, dtype=dtype):
        h = lin(x)  # low precision
        out = {
            "linear": h.dtype,
            "matmul": (x @ x.t()).dtype,
            "conv1d": F.conv1d(x[None], torch.randn(2, 4, 3, device=device)).dtype,
            "softmax": torch.softmax(h, -1).dtype,
            "layer_norm": F.layer_norm(h, (16,)).dtype,
            "sum": h.sum().dtype,
            "exp": h.exp().dtype,
            "mse_loss": F.mse_loss(h, torch.zeros_like(x)).dtype,
            "cross_entropy": F.cross_entropy(h, target).dtype,
            "add_fp32": (h + x).dtype,
        }
    return {k: _name(v) for k, v in out.items()}


@claim("amp.cpu-autocast-dtypes", question=Q,
       statement="autocast 的默认低精度类型：CPU 上是 {cpu_default}，CUDA 上是 {cuda_default}。在 `torch.autocast(\"cpu\")` "
                 "里输入都是 FP32：`nn.Linear`、`matmul`、`conv1d` 输出 {d.linear}、{d.matmul}、{d.conv1d}；`mse_loss` 和 "
                 "`cross_entropy` 输出 {d.mse_loss}、{d.cross_entropy}；BF16 的结果加上 FP32 的张量，按类型提升得 "
                 "{d.add_fp32}。接在线性层后面的 `softmax`、`layer_norm`、`sum`、`exp` 输出 {d.softmax}、{d.layer_norm}、"
                 "{d.sum}、{d.exp}：CPU 的 FP32 名单里只有损失函数等少数算子，不在名单里的算子按输入的类型运行。",
       expect={"cpu_default": "bfloat16", "cuda_default": "float16",
               "d": {"linear": "bfloat16", "matmul": "bfloat16", "conv1d": "bfloat16", "softmax": "bfloat16",
                     "layer_norm": "bfloat16", "sum": "bfloat16", "exp": "bfloat16", "mse_loss": "float32",
                     "cross_entropy": "float32", "add_fp32": "float32"}})
def _(ctx):
    return {"cpu_default": _name(torch.get_autocast_dtype("cpu")),
            "cuda_default": _name(torch.get_autocast_dtype("cuda")),
            "d": _dtypes_under_autocast("cpu", torch.bfloat16)}


@claim("amp.cuda-autocast-fp32-ops", question=Q, needs=["cuda"],
       statement="GPU 上的名单不同：在 `torch.autocast(\"cuda\")`（FP16）里，`matmul` 输出 {d.matmul}，而接在 FP16 线性层后面的 "
                 "`softmax`、`layer_norm`、`sum`、`exp` 输出 {d.softmax}、{d.layer_norm}、{d.sum}、{d.exp}：CUDA 的 autocast "
                 "把它们列入 FP32 名单，先把输入转成 FP32 再算。",
       expect={"d": {"linear": "float16", "matmul": "float16", "conv1d": "float16", "softmax": "float32",
                     "layer_norm": "float32", "sum": "float32", "exp": "float32", "mse_loss": "float32",
                     "cross_entropy": "float32", "add_fp32": "float32"}})
def _(ctx):
    """GPU 上 `torch.autocast("cuda")`（FP16）里 linear、matmul、softmax、layer_norm、sum、exp 等算子的输出 dtype。"""
    return {"d": _dtypes_under_autocast("cuda", torch.float16)}


def _saved_for_backward(model, x, autocast):
    """(dtype, bytes, is a parameter, shape) of every tensor autograd saves during one forward pass."""
    params = {p.data_ptr() for p in model.parameters()}
    saved = []

    def pack(t):
        saved.append((_name(t.dtype), t.numel() * t.element_size(), t.data_ptr() in params, tuple(t.shape)))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if autocast:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x)
        else:
            out = model(x)
    out.float().sum().backward()
    return saved


@claim("amp.master-weights-fp32", question=Q,
       statement="混合精度不是把模型变成半精度：在 `torch.autocast(\"cpu\")` 里跑完一次前向和反向，参数仍是 {param_dtypes}，"
                 "梯度也是 {grad_dtypes}。变的是为反向保存的张量：两层线性层的 MLP 为反向存下的激活从 FP32 时的 "
                 "{fp32_act:bytes} 降到 {amp_act:bytes}，全是 {amp_dtypes}；FP32 训练时反向直接引用参数本身，autocast 下保存的"
                 "却是一份新转换的 BF16 权重副本（{amp_weight_copy:bytes}），引用参数本身的有 {amp_saved_params} 个。",
       expect={"param_dtypes": "float32", "grad_dtypes": "float32", "amp_dtypes": "bfloat16",
               "amp_saved_params": 0, "fp32_saved_params": 1, "act_ratio": 0.5, "amp_weight_copy": 256 * 256 * 2})
def _(ctx):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 256))
    x = torch.randn(64, 256)
    weight_shapes = {tuple(p.shape) for p in model.parameters() if p.dim() == 2}
    fp32 = _saved_for_backward(model, x, autocast=False)
    model.zero_grad()
    amp = _saved_for_backward(model, x, autocast=True)

    def act(saved):
        return sum(b for _, b, is_param, shape in saved if not is_param and shape not in weight_shapes)

    return {"param_dtypes": "、".join(sorted({_name(p.dtype) for p in model.parameters()})),
            "grad_dtypes": "、".join(sorted({_name(p.grad.dtype) for p in model.parameters()})),
            "fp32_act": act(fp32), "amp_act": act(amp), "act_ratio": act(amp) / act(fp32),
            "fp32_saved_params": sum(1 for s in fp32 if s[2]), "amp_saved_params": sum(1 for s in amp if s[2]),
            "amp_weight_copy": sum(b for _, b, is_param, shape in amp if not is_param and shape in weight_shapes),
            "amp_dtypes": "、".join(sorted({s[0] for s in amp})),
            "fp32_saved": [s[:3] for s in fp32], "amp_saved": [s[:3] for s in amp]}


@claim("amp.cast-cache", question=Q,
       statement="权重的 BF16 副本在一个 autocast 区域里只转换一次：同一个 `nn.Linear` 在区域内用两次，两次为反向保存的 BF16 "
                 "权重{same_inside:?是同一块内存|是两块内存}；传入 `cache_enabled=False` 后{same_without_cache:?仍是同一块|是两块}。"
                 "缓存在退出最外层 autocast 时清空，下一次前向按更新后的 FP32 权重重新转换。",
       expect={"same_inside": True, "same_without_cache": False})
def _(ctx):
    lin = nn.Linear(8, 8)
    x1 = torch.randn(2, 8, requires_grad=True)
    x2 = torch.randn(2, 8, requires_grad=True)

    def weights_saved(**kw):
        ptrs = []

        def pack(t):
            if t.shape == lin.weight.shape:
                ptrs.append(t.data_ptr())
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with torch.autocast("cpu", dtype=torch.bfloat16, **kw):
                lin(x1), lin(x2)
        return ptrs

    inside, uncached = weights_saved(), weights_saved(cache_enabled=False)
    return {"same_inside": len(inside) == 2 and inside[0] == inside[1],
            "same_without_cache": len(uncached) == 2 and uncached[0] == uncached[1]}
