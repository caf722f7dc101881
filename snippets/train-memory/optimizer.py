"""AdamW on real (small) tensors: when its state appears, what each step implementation allocates,
what zero_grad frees, and why the parameters are not simply kept in BF16."""

import torch
from torch import nn
from torch.optim.optimizer import _default_to_fused_or_foreach

from snippets._workloads.live_bytes import LiveBytes
from verify.claim import claim

Q = "train-memory"
# LiveBytes (snippets/_workloads/live_bytes.py): bytes of storage alive now and at the peak since
# reset_peak, from every ATen op's outputs and a weak reference per storage.


def _mlp(device, dtype=torch.float32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).to(device, dtype)


def _backward(model, device, dtype=torch.float32):
    model(torch.randn(8, 256, device=device, dtype=dtype)).float().pow(2).mean().backward()


@claim("trainmem.state-lazy", question=Q,
       statement="刚构造的 `AdamW` 的 `state` 是空的（{n_before} 项）：状态是第一次 `step()` 才按参数建的，之后有 {n_after} 项，"
                 "每项是 {keys}；`exp_avg`、`exp_avg_sq` 的形状和 dtype 同参数（{exp_avg_dtype}），`step` 是 "
                 "{step_device} 上的 {step_dtype} 标量。",
       expect={"n_before": 0, "n_after": 4, "keys": ["exp_avg", "exp_avg_sq", "step"], "exp_avg_dtype": "torch.float32",
               "step_dtype": "torch.float32", "step_device": "cpu", "same_shape": True})
def _(ctx):
    model = _mlp(ctx.device)
    opt = torch.optim.AdamW(model.parameters())
    n_before = len(opt.state)
    _backward(model, ctx.device)
    opt.step()
    p = next(model.parameters())
    s = opt.state[p]
    return {"n_before": n_before, "n_after": len(opt.state), "keys": sorted(s), "exp_avg_dtype": str(s["exp_avg"].dtype),
            "same_shape": all(opt.state[q]["exp_avg"].shape == q.shape for q in model.parameters()),
            "step_dtype": str(s["step"].dtype), "step_device": s["step"].device.type}


@claim("trainmem.step-transient", question=Q,
       statement="真实张量上也是这样（{n_params:int} 个参数，{param_bytes:bytes}；第二次 `step()`，状态已在）："
                 "`foreach=True` 的 `step()` 临时多用 {temp.foreach:bytes}，正好是全部参数的一份 fp32；"
                 "`foreach=False` 多用 {temp.forloop:bytes}，是最大那个参数（{largest_bytes:bytes}）的 "
                 "{forloop_vs_largest:.2f} 倍；`fused=True` 多用 {temp.fused:bytes}。",
       expect={"temp": {"foreach": 2102272, "forloop": 2101248, "fused": 0}, "param_bytes": 2102272})
def _(ctx):
    temp = {}
    for name, kw in (("foreach", {"foreach": True}), ("forloop", {"foreach": False}), ("fused", {"fused": True})):
        model = _mlp(ctx.device)
        opt = torch.optim.AdamW(model.parameters(), **kw)
        _backward(model, ctx.device)
        opt.step()  # the first step creates the state
        with LiveBytes() as live:
            live.add_all([*model.parameters(), *(p.grad for p in model.parameters()),
                          *(t for s in opt.state.values() for t in s.values())])
            opt.step()
            temp[name] = live.peak - live.now
    params = list(_mlp("meta").parameters())
    largest = max(p.numel() for p in params) * 4
    return {"temp": temp, "n_params": sum(p.numel() for p in params), "param_bytes": sum(p.numel() for p in params) * 4,
            "largest_bytes": largest, "forloop_vs_largest": temp["forloop"] / largest}


def _which_step(opt):
    """Run ``opt.step()`` and name the implementation that ran (torch.optim.adam looks it up by name
    at every call: _single_tensor_adam, _multi_tensor_adam or _fused_adam)."""
    import torch.optim.adam as adam_module  # noqa: PLC0415

    names = ("_single_tensor_adam", "_multi_tensor_adam", "_fused_adam")
    saved = {n: getattr(adam_module, n) for n in names}
    ran = []

    def counting(name):
        def run(*args, **kwargs):
            ran.append(name)
            return saved[name](*args, **kwargs)
        return run

    try:
        for n in names:
            setattr(adam_module, n, counting(n))
        opt.step()
    finally:
        for n, fn in saved.items():
            setattr(adam_module, n, fn)
    return ran[0] if len(ran) == 1 else ran


@claim("trainmem.cpu-default-forloop", question=Q,
       statement="不指定实现时，`AdamW` 按参数所在的设备选：参数在 CPU 上时，`step()` 调用的是 {impl}，即逐个参数的 "
                 "for-loop（`_default_to_fused_or_foreach` {cpu_foreach:?选了|没有选} foreach）。fused 要自己传 `fused=True`，"
                 "在哪个设备上都不是默认（源码注释说要先给它时间“bake-in”）。",
       expect={"impl": "_single_tensor_adam", "cpu_foreach": False, "cpu_fused": False})
def _(ctx):
    model = _mlp("cpu")
    params = list(model.parameters())
    fused, foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
    opt = torch.optim.AdamW(params)
    _backward(model, "cpu")
    return {"impl": _which_step(opt), "cpu_fused": fused, "cpu_foreach": foreach}


@claim("trainmem.cuda-default-foreach", question=Q, needs=["cuda"],
       statement="参数在 GPU 上时默认是 foreach：`AdamW(params)` 的 `step()` 调用 {impl}，第二次 `step()` 让 "
                 "`max_memory_allocated` 比 step 前高出 {temp:bytes}，是全部参数所占字节的 {temp_vs_params:.3f} 倍。",
       expect={"impl": "_multi_tensor_adam", "temp_vs_params": {"between": [1.0, 1.01]}})
def _(ctx):
    """CUDA 上 8 个 1024×1024 的 fp32 Linear：AdamW 默认实现的名字，以及第二次 step() 的临时显存与参数字节之比。"""
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(1024, 1024, bias=False) for _ in range(8)]).cuda()  # 8 x 4 MiB
    params = list(model.parameters())
    opt = torch.optim.AdamW(params)
    model(torch.randn(64, 1024, device="cuda")).pow(2).mean().backward()
    impl = _which_step(opt)  # the first step creates the state
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    opt.step()
    torch.cuda.synchronize()
    temp = torch.cuda.max_memory_allocated() - before
    param_bytes = sum(p.numel() for p in params) * 4
    return {"impl": impl, "temp": temp, "param_bytes": param_bytes, "temp_vs_params": temp / param_bytes}


@claim("trainmem.zero-grad-frees", question=Q,
       statement="`zero_grad()` 默认 `set_to_none=True`：梯度变成 `None`，{grad_bytes:bytes} 当场释放（释放后活着的少了 "
                 "{freed_default:bytes}），所以下一步前向时没有梯度；`zero_grad(set_to_none=False)` 只把它们填 0，"
                 "释放 {freed_keep:bytes}。",
       expect={"grad_is_none": True, "freed_default": 2102272, "freed_keep": 0, "grad_bytes": 2102272})
def _(ctx):
    freed = {}
    for key, set_to_none in (("freed_default", None), ("freed_keep", False)):
        model = _mlp(ctx.device)
        opt = torch.optim.AdamW(model.parameters())
        _backward(model, ctx.device)
        grad_bytes = sum(p.grad.untyped_storage().nbytes() for p in model.parameters())
        with LiveBytes() as live:
            live.add_all([*model.parameters(), *(p.grad for p in model.parameters())])
            before = live.now
            opt.zero_grad() if set_to_none is None else opt.zero_grad(set_to_none=set_to_none)
            freed[key] = before - live.now
        if set_to_none is None:
            freed["grad_is_none"] = all(p.grad is None for p in model.parameters())
    return {**freed, "grad_bytes": grad_bytes}


@claim("trainmem.bf16-params-lose-updates", question=Q,
       statement="为什么要 fp32 的参数（主权重）：把参数直接存成 BF16，`AdamW(lr=1e-4)` 走 {steps} 步后，"
                 "值为 1 的参数仍是 {bf16_after}，一点没动；同样的 fp32 参数变成 {fp32_after:.4f}。BF16 在 1 附近相邻两数差 "
                 "{bf16_gap}，每步约 `lr` 大小的更新不到它的一半，加上去就被舍入掉。此时 AdamW 的状态也是 {state_dtype}。",
       expect={"bf16_after": 1.0, "fp32_after": {"<": 0.999}, "bf16_gap": 0.0078125, "state_dtype": "torch.bfloat16"})
def _(ctx):
    out = {"steps": 100}
    for name, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        w = nn.Parameter(torch.ones(4, device=ctx.device, dtype=dtype))
        opt = torch.optim.AdamW([w], lr=1e-4)
        for _ in range(out["steps"]):
            w.grad = torch.ones_like(w)
            opt.step()
        out[f"{name}_after"] = w[0].item()
        if dtype == torch.bfloat16:
            out["state_dtype"] = str(opt.state[w]["exp_avg"].dtype)
    one = torch.tensor(1.0, dtype=torch.bfloat16)
    out["bf16_gap"] = (torch.nextafter(one, torch.tensor(2.0, dtype=torch.bfloat16)) - one).item()
    return out
