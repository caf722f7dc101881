"""What checkpointing guarantees and where the reentrant variant breaks."""

import warnings

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from verify.claim import claim

Q = "activation-checkpoint"


def _dropout_block(device):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Dropout(0.5), nn.Linear(256, 64)).to(device)


def _grads(block, x, run):
    """Every gradient of one step, flattened; the dropout mask comes from the same seed each time."""
    block.zero_grad()
    x.grad = None
    torch.manual_seed(1)
    run().sum().backward()
    return torch.cat([p.grad.flatten() for p in block.parameters()] + [x.grad.flatten()])


@claim("ckpt.same-gradients", question=Q,
       statement="检查点不改变结果：块里有 Dropout 时，非重入式检查点算出的梯度和不做检查点{equal_nonreentrant:?逐位相同|不同}，"
                 "重入式{equal_reentrant:?也逐位相同|却不同}（`torch.equal`），因为它在前向时记下 RNG 状态、重算前恢复，"
                 "两次得到同一个 Dropout 掩码；传 `preserve_rng_state=False` 关掉这一步，梯度就不同了（最大差 {max_diff_no_rng:.3g}）。",
       expect={"equal_nonreentrant": True, "equal_reentrant": True, "equal_no_rng": False})
def _(ctx):
    block = _dropout_block(ctx.device)
    x = torch.randn(32, 64, device=ctx.device, requires_grad=True)
    ref = _grads(block, x, lambda: block(x))
    g_nr = _grads(block, x, lambda: checkpoint(block, x, use_reentrant=False))
    g_r = _grads(block, x, lambda: checkpoint(block, x, use_reentrant=True))
    g_no = _grads(block, x, lambda: checkpoint(block, x, use_reentrant=False, preserve_rng_state=False))
    return {"equal_nonreentrant": torch.equal(ref, g_nr), "equal_reentrant": torch.equal(ref, g_r),
            "equal_no_rng": torch.equal(ref, g_no), "max_diff_no_rng": (ref - g_no).abs().max().item()}


@claim("ckpt.reentrant-frozen-input", question=Q,
       statement="重入式检查点的输入都不需要梯度时（比如冻结的 embedding 输出），它发出警告（“{warning}”），"
                 "输出{reentrant_requires_grad:?仍然需要梯度|不需要梯度（requires_grad 为假）}，块里的权重拿不到梯度；"
                 "非重入式照常求出权重梯度（`weight.grad` {nonreentrant_has_grad:?存在|不存在}）。",
       expect={"warning": {"contains": "None of the inputs have requires_grad=True"},
               "reentrant_requires_grad": False, "nonreentrant_has_grad": True})
def _(ctx):
    torch.manual_seed(0)
    lin = nn.Linear(16, 16).to(ctx.device)
    frozen = torch.randn(4, 16, device=ctx.device)  # requires_grad=False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = checkpoint(lin, frozen, use_reentrant=True)
    found = [str(w.message) for w in caught if "requires_grad" in str(w.message)]
    ok = checkpoint(lin, frozen, use_reentrant=False)
    ok.sum().backward()
    return {"warning": found[0][:100] if found else "", "reentrant_requires_grad": out.requires_grad,
            "nonreentrant_has_grad": lin.weight.grad is not None}


@claim("ckpt.reentrant-autograd-grad", question=Q,
       statement="重入式检查点不支持 `torch.autograd.grad`（也不支持给 `backward` 传 `inputs`）：在它的输出上求 "
                 "`torch.autograd.grad` 抛出 RuntimeError；非重入式没有这个限制。",
       raises=("RuntimeError", "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad()"))
def _(ctx):
    lin = nn.Linear(16, 16).to(ctx.device)
    x = torch.randn(4, 16, device=ctx.device, requires_grad=True)
    ok = torch.autograd.grad(checkpoint(lin, x, use_reentrant=False).sum(), x)[0]
    ctx.observe(nonreentrant_grad_shape=list(ok.shape))
    torch.autograd.grad(checkpoint(lin, x, use_reentrant=True).sum(), x)


@claim("ckpt.default-still-reentrant", question=Q,
       statement="运行起来也是这样：不传 `use_reentrant` 时只有警告（警告里说“Starting in PyTorch 2.9, calling "
                 "checkpoint without use_reentrant will raise an exception”，并没有兑现），然后用的是重入式："
                 "输出的 `grad_fn` 是 {grad_fn}。",
       expect={"raised": False, "warned": True, "grad_fn": "CheckpointFunctionBackward"})
def _(ctx):
    lin = nn.Linear(16, 16).to(ctx.device)
    x = torch.randn(4, 16, device=ctx.device, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = checkpoint(lin, x)
            raised = False
        except Exception as exc:  # a later torch may raise, as the warning promises
            ctx.observe(exception=f"{type(exc).__name__}: {exc}"[:200])
            out, raised = None, True
    found = [str(w.message) for w in caught if "use_reentrant" in str(w.message)]
    return {"version": torch.__version__.split("+")[0], "raised": raised, "warned": bool(found),
            "warning": found[0][:200] if found else "",
            "grad_fn": type(out.grad_fn).__name__ if out is not None else None}
