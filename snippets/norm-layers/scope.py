"""Where two of the page's short answers hold and where they stop: SyncBatchNorm on a CPU input
(it only refuses when it would synchronise), and GroupNorm against LayerNorm and InstanceNorm (same
statistics, different affine parameters)."""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn

from verify.claim import claim

Q = "norm-layers"


def _images(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(4, 6, 5, 5, generator=g) * 2 + 1  # N, C, H, W


@claim("norm.syncbn-cpu", question=Q, min_torch="2.0",
       statement="torch 2.0 起，SyncBatchNorm 只在 train 模式且进程组已初始化时才检查输入的设备：没有初始化进程组时，train 模式下"
                 "它{no_group_ok:?照常算|报错}，输出与 `BatchNorm2d` 最大差 {no_group_diff:.1e}（退回普通 BN）；用 gloo 初始化一个"
                 "进程组（world_size = {world}）后，eval 模式{eval_ok:?照常算|报错}（eval 不同步），train 模式"
                 "{train_raised:?抛出|不抛出} {error}（“{message}”）。检查在看 world_size 之前，所以单进程也会报。",
       expect={"no_group_ok": True, "no_group_diff": {"<": 1e-6}, "world": 1, "eval_ok": True,
               "train_raised": True, "error": "ValueError", "message": {"contains": "expected input tensor to be on GPU"}})
def _(ctx):
    x = _images()
    sync, plain = nn.SyncBatchNorm(6), nn.BatchNorm2d(6)
    try:
        no_group_ok, no_group_diff = True, (sync(x) - plain(x)).abs().max().item()
    except (ValueError, RuntimeError):
        no_group_ok, no_group_diff = False, float("nan")
    dist.init_process_group("gloo", init_method="file://" + str(ctx.path("store")), rank=0, world_size=1)
    try:
        world = dist.get_world_size()
        sync.eval()
        eval_ok = sync(x).shape == x.shape
        sync.train()
        raised, error, message = False, "", ""
        try:
            sync(x)
        except ValueError as exc:
            raised, error, message = True, type(exc).__name__, str(exc)
    finally:
        dist.destroy_process_group()
    return {"no_group_ok": no_group_ok, "no_group_diff": no_group_diff, "world": world, "eval_ok": eval_ok,
            "train_raised": raised, "error": error, "message": message}


@claim("norm.groupnorm-relatives", question=Q,
       statement="GroupNorm 和 LN、IN 共享统计量，差在仿射参数的形状。`GroupNorm(1, C={=6})` 对 {=4×6×5×5} 的输入，归一化结果与"
                 " `LayerNorm([6, 5, 5])` 最大差 {g1_vs_ln:.1e}（两者都取默认的 γ = 1、β = 0）。GroupNorm 的 γ 形状是 "
                 "{gn_weight_shape}，每通道一个；LayerNorm 的是 {ln_weight_shape}，同一通道内也可以逐位置不同，这是 GroupNorm "
                 "表达不了的。反过来，把 GroupNorm 每通道的 γ、β 广播成 {ln_weight_shape} 拷给 LayerNorm，两者仍然一致（最大差 "
                 "{g1_vs_ln_broadcast:.1e}）。`GroupNorm(6, 6)` 与 `InstanceNorm2d(6, affine=True)` 取同样的 γ，最大差 "
                 "{gc_vs_in:.1e}，γ 形状同为 {in_weight_shape}，每通道一个。",
       expect={"g1_vs_ln": {"<": 1e-5}, "gn_weight_shape": [6], "ln_weight_shape": [6, 5, 5],
               "g1_vs_ln_broadcast": {"<": 1e-5}, "gc_vs_in": {"<": 1e-5}, "in_weight_shape": [6]})
def _(ctx):
    x = _images(1)
    g1, ln = nn.GroupNorm(1, 6), nn.LayerNorm([6, 5, 5])
    gc, inorm = nn.GroupNorm(6, 6), nn.InstanceNorm2d(6, affine=True)
    with torch.no_grad():
        g1_vs_ln = (g1(x) - ln(x)).abs().max().item()
        gamma, beta = torch.linspace(0.5, 1.5, 6), torch.linspace(-1.0, 1.0, 6)
        g1.weight.copy_(gamma)
        g1.bias.copy_(beta)
        ln.weight.copy_(gamma[:, None, None].expand(6, 5, 5))
        ln.bias.copy_(beta[:, None, None].expand(6, 5, 5))
        g1_vs_ln_broadcast = (g1(x) - ln(x)).abs().max().item()
        gc.weight.copy_(gamma)
        inorm.weight.copy_(gamma)
        gc_vs_in = (gc(x) - inorm(x)).abs().max().item()
    return {"g1_vs_ln": g1_vs_ln, "gn_weight_shape": list(g1.weight.shape), "ln_weight_shape": list(ln.weight.shape),
            "g1_vs_ln_broadcast": g1_vs_ln_broadcast, "gc_vs_in": gc_vs_in, "in_weight_shape": list(inorm.weight.shape)}
