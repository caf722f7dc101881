"""Dropout and the fused SDPA kernels, CPU against CUDA, read from the operator schemas every torch build carries
(a CPU wheel too): which fused ops hand the backward the random state a dropout mask needs; and, on a GPU, whether
the flash and memory-efficient kernels run with dropout at all."""

import torch
import torch.nn.functional as F

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
       statement="从算子 schema 看（torch {version}），CPU 和 CUDA 的融合算子接口不一样："
                 "CUDA 的 flash 算子除了输出和 logsumexp 还返回 {cuda_flash_rng_text}，memory-efficient 算子返回 {cuda_efficient_rng_text}，"
                 "它们的反向算子收 `dropout_p` 和这份随机数状态，接口是为在反向里重新生成同一个 dropout mask 准备的；"
                 "CPU 的 flash 算子只返回 {cpu_flash_returns}，反向{cpu_backward_takes_rng:?也收随机数状态|不收随机数状态}，没法重放 mask，"
                 "和 CPU 的后端选择遇到 `dropout_p > 0` 就不用它一致。接口说明不了 CUDA 上带 dropout 真能跑，那要看 GPU 上的下一条。",
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


@claim("flash.cuda-dropout", question=Q, needs=["cuda"],
       statement="在 GPU 上（{gpu}，FP16，N={=1024}）把 SDPA 限定在一个融合后端、带 `dropout_p=0.1` 运行："
                 "FlashAttention {flash.runs:?照样能跑|报错}，同样输入的两次调用结果{flash.differ:?不同（每次抽的 mask 不一样）|相同}，"
                 "反向{flash.backward_ok:?算出了有限的梯度|没有算出梯度}；memory-efficient {efficient.runs:?也能跑|报错}，两次结果"
                 "{efficient.differ:?也不同|相同}，反向{efficient.backward_ok:?也算出了梯度|没有算出梯度}。CPU 上遇到 dropout 退回 math，"
                 "CUDA 上这两个融合 kernel 自己做 dropout。",
       expect={"flash": {"runs": True, "differ": True, "backward_ok": True},
               "efficient": {"runs": True, "differ": True, "backward_ok": True}})
def _(ctx):
    """GPU 上把 SDPA 限定为 FlashAttention 或 memory-efficient 后端、FP16、dropout_p=0.1 时能否运行、两次结果是否不同、反向能否算出梯度。

    范围：sm80 及以上的 GPU（FlashAttention 后端的硬件要求）
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    def run(backend):
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 8, 1024, 64, generator=g).to("cuda", torch.float16).requires_grad_()
                   for _ in range(3))
        try:
            with sdpa_kernel(backend):
                a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
                b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
                a.float().sum().backward()
            torch.cuda.synchronize()
        except RuntimeError as exc:
            return {"runs": False, "differ": False, "backward_ok": False, "error": str(exc)[:300]}
        return {"runs": True, "differ": not torch.equal(a, b),
                "backward_ok": q.grad is not None and bool(torch.isfinite(q.grad).all())}

    return {"gpu": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability()),
            "flash": run(SDPBackend.FLASH_ATTENTION), "efficient": run(SDPBackend.EFFICIENT_ATTENTION)}
