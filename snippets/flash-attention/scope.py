"""Dropout and the fused SDPA kernels, CPU against CUDA, read from the operator schemas every torch build carries
(a CPU wheel too): which fused ops hand the backward the random state a dropout mask needs."""

import torch

from verify.claim import claim

Q = "flash-attention"
OPS = {
    "cpu_flash": "_scaled_dot_product_flash_attention_for_cpu",
    "cuda_flash": "_scaled_dot_product_flash_attention",
    "cuda_efficient": "_scaled_dot_product_efficient_attention",
}
BACKWARD = {
    "cpu_flash": "_scaled_dot_product_flash_attention_for_cpu_backward",
    "cuda_flash": "_scaled_dot_product_flash_attention_backward",
    "cuda_efficient": "_scaled_dot_product_efficient_attention_backward",
}
RNG = ("rng_state", "philox_seed", "philox_offset")


def _schema(name: str):
    return getattr(torch.ops.aten, name).default._schema


@claim("flash.dropout-by-device", question=Q,
       statement="“带 dropout 就退回 math”只是 CPU 上的规则，不是所有融合 kernel 都不做 dropout（torch {version} 的算子 schema）："
                 "CUDA 的 flash 算子除了输出和 logsumexp 还返回 {cuda_flash_rng_text}，memory-efficient 算子返回 {cuda_efficient_rng_text}，"
                 "它们的反向算子收 `dropout_p` 和这份随机数状态，在反向里重新生成同一个 dropout mask；"
                 "CPU 的 flash 算子只返回 {cpu_flash_returns}，反向{cpu_backward_takes_rng:?也收随机数状态|不收随机数状态}，没法重放 mask，"
                 "所以 CPU 的后端选择遇到 `dropout_p > 0` 就不用它。",
       expect={"cpu_flash_rng": [], "cpu_backward_takes_rng": False,
               "cuda_flash_has_rng": True, "cuda_efficient_rng": ["philox_seed", "philox_offset"],
               "cuda_backward_takes_dropout": {"cuda_flash": True, "cuda_efficient": True},
               "cuda_backward_takes_rng": {"cuda_flash": True, "cuda_efficient": True}})
def _(ctx):
    returns = {k: [r.name for r in _schema(op).returns] for k, op in OPS.items()}
    back_args = {k: [a.name for a in _schema(op).arguments] for k, op in BACKWARD.items()}
    rng = {k: [n for n in names if n in RNG] for k, names in returns.items()}
    return {"version": torch.__version__, "returns": returns, "backward_args": back_args,
            "cpu_flash_rng": rng["cpu_flash"], "cuda_flash_rng": rng["cuda_flash"],
            "cuda_efficient_rng": rng["cuda_efficient"], "cuda_flash_has_rng": bool(rng["cuda_flash"]),
            "cuda_flash_rng_text": "、".join(f"`{n}`" for n in rng["cuda_flash"]),
            "cuda_efficient_rng_text": "、".join(f"`{n}`" for n in rng["cuda_efficient"]),
            "cpu_flash_returns": "、".join(f"`{n}`" for n in returns["cpu_flash"]),
            "cpu_backward_takes_rng": any(a in RNG for a in back_args["cpu_flash"]),
            "cuda_backward_takes_dropout": {k: "dropout_p" in back_args[k] for k in ("cuda_flash", "cuda_efficient")},
            "cuda_backward_takes_rng": {k: any(a in RNG for a in back_args[k]) for k in ("cuda_flash", "cuda_efficient")}}
