"""What torch.autocast keeps in which dtype during a training step."""

import torch
from torch import nn

from verify.claim import claim

Q = "train-memory"


@claim("trainmem.amp-dtypes", question=Q,
       statement="`torch.autocast` 不改参数本身：在 BF16 autocast 里做一步，`Linear` 的输出是 {out_dtype}，"
                 "但参数一直是 {param_dtype}，反向得到的 `.grad` 也是 {grad_dtype}（梯度的 dtype 跟参数走），"
                 "优化器状态同样是 {state_dtype}。残差相加 fp32 + BF16 按类型提升得到 {residual_dtype}。",
       expect={"out_dtype": "torch.bfloat16", "param_dtype": "torch.float32", "grad_dtype": "torch.float32",
               "state_dtype": "torch.float32", "residual_dtype": "torch.float32"})
def _(ctx):
    torch.manual_seed(0)
    lin = nn.Linear(64, 64).to(ctx.device)
    opt = torch.optim.AdamW(lin.parameters())
    x = torch.randn(8, 64, device=ctx.device)
    amp_dtype = torch.bfloat16
    with torch.autocast(ctx.device, dtype=amp_dtype):
        out = lin(x)
        residual = x + out
    residual.float().pow(2).mean().backward()
    opt.step()
    return {"out_dtype": str(out.dtype), "param_dtype": str(lin.weight.dtype), "grad_dtype": str(lin.weight.grad.dtype),
            "state_dtype": str(opt.state[lin.weight]["exp_avg"].dtype), "residual_dtype": str(residual.dtype)}
